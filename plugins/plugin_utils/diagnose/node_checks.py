# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Findings of one node's components, from the evidence the diagnose role collected there.

Each function takes one host's evidence (diagnose_evidence.shape gives its
shape) and returns findings. A symptom another finding already
explains is left out here: a profile that names an interface of a missing
NIC, LD_LIBRARY_PATH without the plugin library that the plugin finding
names, drift in interface variables when a NIC is gone.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.host import host_prereqs
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl import nccl_env_file, plugin_state
from ansible_collections.gpudirect.gcp.plugins.module_utils.rxdm import rxdm_readiness
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings.finding import rung_order
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import REPAIR_TAGS, finding
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import qualification
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import ladder

_NAMES_IFACE = re.compile(r"names interface (\S+?),")
_NIC_GONE = ("no such interface", "no interface with MAC")


def image_tag(image):
    """The tag of an image reference (after the last ':' of its last path part), else None."""
    if not image or "@" in image:
        return None
    last = image.rsplit("/", 1)[-1]
    return last.rsplit(":", 1)[1] if ":" in last else None


def rxdm(host, ev, repairs, plugin_tag=None, max_restarts=0):
    """RxDM: running, ready now, not crash-looping, its image paired with the installed plugin."""
    state = ev.get("rxdm")
    if not state:
        return []
    container = state.get("container") or "receive-datapath-manager"
    fix = repairs.role(host, "rxdm")
    out = [finding(host, "rxdm", subject, severity, cause, fix) for severity, subject, cause in
           rxdm_readiness.problems(state, container, state.get("unit"), max_restarts)]
    if state.get("error"):
        return out
    tag = image_tag(state.get("image"))
    if tag and plugin_tag and ev.get("family") in families.FAMILIES:
        pair = families.judge_versions(ev["family"], plugin_tag, tag)
        if pair["verdict"] == "refused":
            out.append(finding(host, "rxdm", state["image"], "fail", "RxDM image does not pair with the installed "
                               "plugin: %s" % pair["message"], fix))
        elif pair["verdict"] == "unqualified":
            out.append(finding(host, "rxdm", state["image"], "warn", pair["message"], fix))
    return out


def plugin(host, ev, repairs):
    """The plugin's files against its install record; gIB's linker registration."""
    state = ev.get("plugin")
    if state is None:
        return []
    fix = repairs.role(host, "nccl_plugin")
    if state.get("error"):
        return [finding(host, "nccl_plugin", state.get("record_path") or "plugin", "fail",
                        "cannot check the plugin: %s" % state["error"], fix)]
    transport = (families.FAMILIES.get(ev.get("family")) or {}).get("transport")
    return [finding(host, "nccl_plugin", subject, "fail", cause, fix)
            for subject, cause in plugin_state.problems(state, transport)]


def _explained(problem, gone_ifaces, plugin_paths, plugin_dir):
    # a vanished NIC's old name is not known (the inventory knows its MAC): any interface the profile
    # names that the node lacks is taken to be that NIC's
    if gone_ifaces and _NAMES_IFACE.search(problem):
        return True
    if any(path and path in problem for path in plugin_paths):
        return True
    return bool(plugin_paths) and problem.startswith("LD_LIBRARY_PATH") and bool(plugin_dir) and plugin_dir in problem


def profile(host, ev, repairs, earlier):
    """The NCCL env file: present, naming only what exists, equal to what the role renders now.

    earlier: this host's findings so far (nic, nccl_plugin), which explain some symptoms.
    """
    state = ev.get("profile")
    if state is None:
        return []
    path = state.get("path") or "NCCL env file"
    fix = repairs.role(host, "nccl_profile")
    if not state.get("present"):
        return [finding(host, "nccl_profile", subject, "fail", cause, fix) for subject, cause in
                nccl_env_file.findings(path, [], unreadable=state.get("error") or "missing")]
    gone = set(f["subject"] for f in earlier if f["component"] == "nic" and f["cause"].startswith(_NIC_GONE))
    plugin_paths = [f["subject"] for f in earlier if f["component"] == "nccl_plugin"]
    fam = families.FAMILIES.get(ev.get("family")) or {}
    plugin_dir = (fam.get("plugin") or {}).get("lib_dir")
    out = []
    named = set()
    problems = state.get("problems") or []
    for problem, (var, cause) in zip(problems, nccl_env_file.findings(path, problems)):
        named.add(var)
        if _explained(problem, gone, plugin_paths, plugin_dir):
            continue
        out.append(finding(host, "nccl_profile", var, "fail", cause, fix))
    expected = state.get("expected")
    if expected is None:
        if state.get("expected_error") and not earlier:
            out.append(finding(host, "nccl_profile", path, "fail", "cannot render the profile the role would "
                               "write now: %s" % state["expected_error"], fix))
        return out
    iface_vars = set(fam.get("nccl_env_ifaces") or {}) | set(fam.get("nccl_env_bindings") or {})
    have = state.get("env") or {}
    drift = []
    for var in sorted(set(have) | set(expected)):
        if var in named or (gone and var in iface_vars) or have.get(var) == expected.get(var):
            continue
        if var not in have:
            drift.append("%s is missing (expected %s)" % (var, expected[var]))
        elif var not in expected:
            drift.append("%s=%s is not in the rendered profile" % (var, have[var]))
        else:
            drift.append("%s=%s (expected %s)" % (var, have[var], expected[var]))
    if drift:
        out.append(finding(host, "nccl_profile", path, "fail", "differs from what the nccl_profile role renders "
                           "now from the family table and this node: %s" % "; ".join(drift), fix))
    return out


def _merged(items):
    """One finding per (component, subject), as everywhere in a diagnosis: a GPU with two faults gets both
    causes, the worse severity, and the repair of the more disruptive rung, which clears both."""
    order, merged = [], {}
    for item in items:
        key = (item.get("component") or "gpu", item["subject"])
        if key not in merged:
            order.append(key)
            merged[key] = dict(item)
            continue
        have = merged[key]
        worse = (item["severity"] == "fail", rung_order(item.get("rung"))) > \
            (have["severity"] == "fail", rung_order(have.get("rung")))
        keep = dict(item) if worse else have
        keep["cause"] = "; ".join([have["cause"], item["cause"]] if not worse else [item["cause"], have["cause"]])
        keep["severity"] = "fail" if "fail" in (item["severity"], have["severity"]) else "warn"
        merged[key] = keep
    return [merged[key] for key in order]


def passed_on(host, ev, repairs):
    """The node check's findings that no function here reads (a part added to the node check): as they
    came, with the host and the re-run of the phase that configures their component, where one does."""
    out = []
    for item in ev.get("other") or []:
        fix = repairs.role(host, item["component"]) if item["component"] in REPAIR_TAGS else None
        out.append(finding(host, item["component"], item["subject"], item["severity"], item["cause"], fix))
    return out


def gpu(host, ev, repairs):
    """The GPU module's findings (components gpu and imex), each with the command of its repair rung: the
    node command the check names (a GPU reset, a service restart), a reboot, a phase's re-run, or Google's
    host repair."""
    state = ev.get("gpu")
    if not state:
        return []
    if state.get("error"):
        return [finding(host, "gpu", "GPUs", "warn", "could not run: %s" % state["error"], None)]
    out = []
    for item in _merged(state.get("findings") or []):
        # how a repair line spells the finding's rung is the rung table's (plugin_utils/remediation/ladder.py)
        rung = item.get("rung")
        fix = (ladder.rung_row(rung)["repair"] if rung else ladder.repair_named)(host, item, repairs)
        out.append(finding(host, item.get("component") or "gpu", item["subject"], item["severity"], item["cause"], fix))
    return out


def qualified(host, ev, repairs, strict=False):
    """The node's driver, CUDA and NCCL against what its installed plugin was qualified with
    (plays.qualification): a warning each, a failure under strict versions."""
    out = []
    for item in qualification.check(ev.get("family"), ev.get("versions") or {}, strict=strict):
        repair = repairs.role(host, "nccl_plugin") if item["component"] == "NCCL" else None
        out.append(finding(host, "host", item["component"], item["severity"], item["cause"], repair))
    return out


def guest_os(host, ev):
    """A node whose OS the configuration phases refuse: one finding whose repair is another image (none of
    the phases' own repairs can hold there)."""
    if not host_prereqs.refuses_configuration(ev.get("os_release")):
        return []
    return [finding(host, "host", "guest OS", "fail", host_prereqs.GUEST_OS_CAUSE,
                    "recreate the VM from another image: " + host_prereqs.GUEST_OS_FIX.split("; ", 1)[0])]


def maintenance(host, ev, repairs):
    """The host maintenance the node's metadata server announces (gpudirect.gcp.gce_maintenance_info)."""
    return [finding(host, "host", "maintenance", item["severity"], item["cause"],
                    repairs.perform_maintenance(host) if item.get("can_reschedule") else None)
            for item in ev.get("maintenance") or []]


def devices(host, ev, repairs):
    """Devices the transport needs. A kernel module that is not loaded is no finding of its own (it may
    be built in): it is named on the missing devices, the symptom that matters."""
    unloaded = [m["name"] for m in ev.get("kernel_modules") or [] if not m.get("loaded")]
    out = []
    for dev in ev.get("devices") or []:
        if dev.get("present"):
            continue
        cause = "missing" + ((" (looked at %s)" % dev["source"]) if dev.get("source") not in (None, dev["path"]) else "")
        if unloaded:
            cause += "; the family's kernel modules not loaded: %s" % ", ".join(unloaded)
        out.append(finding(host, "host", dev["path"], "fail", cause, repairs.role(host, "host")))
    return out


def topology(host, ev):
    """Warnings when the node's metadata server and the inventory disagree on where it sits, or cannot be read.

    A wrong placement misorders ranks and misleads the pairwise search, but the fabric still works: warn."""
    state = ev.get("topology")
    if not state:
        return []
    if state.get("error"):
        return [finding(host, "topology", "placement", "warn",
                        "cannot read the placement from the metadata server: %s" % state["error"], None)]
    if state.get("mismatches"):
        return [finding(host, "topology", "placement", "warn",
                        "the inventory and the node disagree (%s): the VM moved or the inventory's cache is stale; "
                        "refresh the inventory (--flush-cache on the next ansible-playbook run)" % "; ".join(state["mismatches"]),
                        None)]
    if state.get("expected") and not state.get("observed"):
        return [finding(host, "topology", "placement", "warn",
                        "the inventory places the node but its metadata server has no placement data", None)]
    return []
