# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a full gpu_host run did and what could not apply, from what its steps read and registered.

Built once, at the end of the run, from the steps that ran: a step left out (by tags) has no
entry and adds no line. Each step used to add its lines in a task of its own, one task result a
step and node; the lines are the same.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils.six.moves.collections_abc import Mapping

# the order the steps run in, and so the order of their lines
STEPS = ("modules", "devices", "limits", "sysctl", "persistenced", "imex", "holds", "engine", "registry")


class ReportInputError(ValueError):
    """A step's entry is not what the role registers."""


def _skip(step, reason):
    return {"step": step, "reason": reason}


def _modules(step, node):
    done, skipped = [], []
    where = (" (in a %s container the host kernel is used)" % node["container_kind"]) if node["container"] else ""
    # gpu_host_info's modules: {name: {available, loaded}}
    state = step.get("state") or {}
    available = set(name for name, module in state.items() if (module or {}).get("available"))
    for name in step.get("wanted") or []:
        if name not in available:
            skipped.append(_skip("load kernel module %s" % name,
                                 "no %s module for kernel %s (the dmabuf-import-helper DKMS package is not installed)%s"
                                 % (name, node["kernel"], where)))
            continue
        is_loaded = bool((state.get(name) or {}).get("loaded"))
        done.append("kernel module %s %s and loaded at boot"
                    % (name, "loaded" if (is_loaded or not node["container"]) else "persisted"))
        if node["container"] and not is_loaded:
            skipped.append(_skip("load kernel module %s now" % name,
                                 "modules cannot be loaded from inside a container" + where))
    return done, skipped


def _devices(step, node):
    done, skipped = [], []
    rules, seen = list(step.get("rules") or []), list(step.get("seen") or [])
    if len(rules) != len(seen):
        raise ReportInputError("devices: %d udev rule(s) but %d device count(s)" % (len(rules), len(seen)))
    for rule, count in zip(rules, seen):
        done.append("udev rule %s installed" % rule["name"])
        if not step.get("udev_running") or node["container"]:
            inside = (" (%s container)" % node["container_kind"]) if node["container"] else ""
            skipped.append(_skip("apply udev rule %s now" % rule["name"],
                                 "udev does not run here%s; the rule applies at the next boot" % inside))
        if int(count.get("functions") or 0) == 0:
            skipped.append(_skip("aperture devices in %s" % rule["target_dir"],
                                 "no %s:%s PCI functions on this node, found %s of %s devices"
                                 % (rule["pci_vendor"], rule["pci_device"], count.get("target_entries"),
                                    step.get("aperture_count"))))
    return done, skipped


def _limits(step, node):
    limits = step.get("limits") or {}
    if limits:
        return ["limits %s in %s (new sessions)" % ("/".join(limits), step.get("file"))], []
    return [], [_skip("limits", "the family table lists no limits for %s" % node["family"])]


def _sysctl(step, node):
    done, skipped = [], []
    for result in step.get("results") or []:
        key, want = result["item"]["key"], result["item"]["value"]
        want = want if isinstance(want, str) else str(want)
        message = result.get("msg") or ""
        failed = "failed" in message
        changed = bool(result.get("changed"))
        if failed:
            how = ""
        elif node["check_mode"] and changed:
            how = " (check mode: would apply now)"
        else:
            how = " and applied" if changed else " (already set)"
        done.append("%s=%s persisted%s" % (key, want, how))
        if failed:
            skipped.append(_skip("apply %s now" % key,
                                 "sysctl -w failed: %s; the value applies at the next boot" % message.strip()))
    return done, skipped


def _persistenced(step, node):
    loaded, args = step.get("loaded"), list(step.get("args") or [])
    if loaded and args:
        return ["nvidia-persistenced override " + " ".join(args)], []
    reason = ("nvidia-persistenced.service is not installed (no NVIDIA driver on this node)" if not loaded
              else "the family table gives no nvidia-persistenced arguments for %s" % node["family"])
    return [], [_skip("nvidia-persistenced override", reason)]


def _imex(step, node):
    if step.get("enabled"):
        return ["IMEX for the NVLink domain of " + ", ".join(step.get("nodes") or [])], []
    return [], [_skip("IMEX", "%s has no multi-node NVLink domain" % node["family"])]


def _holds(step, _node):
    if not step.get("enabled"):
        return [], []
    missing = step.get("not_installed")
    return (["held package %s" % name for name in step.get("held") or []],
            [_skip("hold package %s" % name, "%s is not installed" % name) for name in missing or []])


def _engine(step, node):
    if step.get("required"):
        found = list(step.get("engines") or []) or ["%s (installed now)" % step.get("package")]
        return ["container engine " + ", ".join(found)], []
    return [], [_skip("container engine", "%s runs no RxDM, so no engine is required" % node["family"])]


def _registry(step, _node):
    if step.get("enabled"):
        return ["registry credentials for %s from the service account (docker-credential-gce-metadata)"
                % ", ".join(step.get("registries") or [])], []
    return [], [_skip("registry credentials", "gpu_host_registry_auth is false (nothing is pulled here)")]


BUILDERS = {"modules": _modules, "devices": _devices, "limits": _limits, "sysctl": _sysctl,
            "persistenced": _persistenced, "imex": _imex, "holds": _holds, "engine": _engine,
            "registry": _registry}


def report(steps, node):
    """{done: [line], skipped: [{step, reason}]} for the steps that ran (a mapping each; null, "" or absent: left
    out).

    node: family, kernel, container (bool), container_kind, check_mode, and no_modules (the family needs no
    kernel module, a line of its own whatever ran)."""
    if not isinstance(steps, Mapping) or not isinstance(node, Mapping):
        raise ReportInputError("steps and node must be mappings")
    unknown = sorted(set(steps) - set(STEPS))
    if unknown:
        raise ReportInputError("unknown step(s): %s; the steps are %s" % (", ".join(unknown), ", ".join(STEPS)))
    done = ["kernel modules: none needed for %s" % node["family"]] if node.get("no_modules") else []
    skipped = []
    for name in STEPS:
        step = steps.get(name)
        if step is None or step == "":  # templated outside native mode, a null arrives as ""
            continue
        if not isinstance(step, Mapping):
            raise ReportInputError("%s: expected a mapping, got %r" % (name, step))
        step_done, step_skipped = BUILDERS[name](step, node)
        done.extend(step_done)
        skipped.extend(step_skipped)
    return {"done": done, "skipped": skipped}
