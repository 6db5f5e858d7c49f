# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The RxDM container command line, built from the family table's RxDM entry.

Google's scripts start RxDM with `docker run --detach --pull=always ...`; a
systemd service needs the container in the foreground instead, and the role
pulls the pinned image itself, so the service runs it with `--pull=never`:
a restart never changes the version behind the operator's back.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

CONTAINER_NAME = "receive-datapath-manager"


class RxdmCommandError(ValueError):
    """The RxDM table entry or an option cannot make a command line."""


def table_volumes(rxdm, flavour):
    """{host: container} the table mounts for this OS flavour."""
    volumes = dict(rxdm.get("volumes") or {})
    volumes.update((rxdm.get("flavour_volumes") or {}).get(flavour) or {})
    return volumes


# What a command is built from, besides the family table's entry; every key but engine and ref may be left out.
#   engine: the container engine command; ref: the image (image:tag or image@sha256:...);
#   flavour: "cos" or "ubuntu" (families.OS_FLAVOURS): picks args, flavour volumes and the GPU flag;
#   name: the container's name;
#   gpus: pass `--gpus all`; None: the table's choice for the flavour;
#   gpu_devices: devices passed one by one when `--gpus all` is not used; None: the table's;
#   volume_sources: {table host path: replacement host path}, for nodes where a device or directory
#       lives elsewhere; the container side never changes;
#   extra_volumes: {host: container} added after the table's;
#   extra_env, extra_args: added after the table's; args: replaces the table's args;
#   driver_lib_dir: the host directory that holds the NVIDIA driver libraries, mounted where RxDM looks
#       for them (the table's driver_lib_mount); None when the container toolkit injects them.
SPEC_DEFAULTS = {"engine": None, "ref": None, "flavour": "ubuntu", "name": CONTAINER_NAME, "gpus": None,
                 "gpu_devices": None, "volume_sources": None, "extra_volumes": None, "extra_env": None,
                 "extra_args": None, "args": None, "driver_lib_dir": None}


def spec_of(spec):
    """The spec with every key, its defaults filled in; an unknown key is refused, naming it."""
    unknown = sorted(set(spec or {}) - set(SPEC_DEFAULTS))
    if unknown:
        raise RxdmCommandError("unknown key(s) %s; known: %s" % (", ".join(unknown), ", ".join(sorted(SPEC_DEFAULTS))))
    out = dict(SPEC_DEFAULTS)
    out.update((k, v) for k, v in (spec or {}).items() if v is not None)
    return out


def command(rxdm, spec):
    """{argv, host_paths} of one spec: the `<engine> run` argument list for RxDM, and the host paths it
    mounts (after substitution), which must exist before RxDM starts.

    rxdm: the family table's RxDM entry (families.FAMILIES[f]["rxdm"]); spec: SPEC_DEFAULTS' keys.
    """
    spec = spec_of(spec)
    if not rxdm:
        raise RxdmCommandError("this family runs no RxDM")
    for key in ("engine", "ref"):
        if not spec[key]:
            raise RxdmCommandError("%s: missing" % key)
    return {"argv": _run_argv(rxdm, spec), "host_paths": _host_paths(rxdm, spec)}


def _run_argv(rxdm, spec):
    flavour = spec["flavour"]
    if flavour not in rxdm["args"]:
        raise RxdmCommandError("OS flavour %r unknown; known: %s" % (flavour, ", ".join(sorted(rxdm["args"]))))
    volumes = table_volumes(rxdm, flavour)
    volume_sources = spec["volume_sources"] or {}
    unknown = sorted(set(volume_sources) - set(volumes))
    if unknown:
        raise RxdmCommandError("volume_sources names %s, which the RxDM table does not mount (it mounts %s)"
                               % (", ".join(unknown), ", ".join(sorted(volumes))))
    argv = [spec["engine"], "run", "--rm", "--name", spec["name"], "--pull=never"]
    if rxdm.get("network_host"):
        argv.append("--network=host")
    if rxdm.get("privileged"):
        argv.append("--privileged")
    for cap in rxdm.get("cap_add") or []:
        argv.append("--cap-add=%s" % cap)
    for limit in rxdm.get("ulimits") or []:
        argv.extend(["--ulimit", limit])
    use_gpus = rxdm["gpus_flag"][flavour] if spec["gpus"] is None else bool(spec["gpus"])
    if use_gpus:
        argv.extend(["--gpus", "all"])
    else:
        devices = (rxdm.get("gpu_devices") or []) if spec["gpu_devices"] is None else spec["gpu_devices"]
        for dev in devices:
            argv.extend(["--device", dev])
    for dev in rxdm.get("devices") or []:
        argv.extend(["--device", dev])
    for host in sorted(volumes):
        argv.extend(["--volume", "%s:%s" % (volume_sources.get(host, host), volumes[host])])
    if spec["driver_lib_dir"]:
        argv.extend(["--volume", "%s:%s:ro" % (spec["driver_lib_dir"], rxdm["driver_lib_mount"])])
    extra_volumes = spec["extra_volumes"] or {}
    for host in sorted(extra_volumes):
        argv.extend(["--volume", "%s:%s" % (host, extra_volumes[host])])
    env = dict(rxdm.get("env") or {})
    env.update(spec["extra_env"] or {})
    for key in sorted(env):
        argv.extend(["--env", "%s=%s" % (key, env[key])])
    if rxdm.get("entrypoint"):
        argv.extend(["--entrypoint", rxdm["entrypoint"]])
    argv.append(spec["ref"])
    argv.extend(list(rxdm["args"][flavour]) if spec["args"] is None else list(spec["args"]))
    argv.extend(spec["extra_args"] or [])
    return argv


def _host_paths(rxdm, spec):
    volume_sources = spec["volume_sources"] or {}
    paths = [volume_sources.get(h, h) for h in sorted(table_volumes(rxdm, spec["flavour"]))]
    return paths + ([spec["driver_lib_dir"]] if spec["driver_lib_dir"] else []) + sorted(spec["extra_volumes"] or {})


_PLAIN = re.compile(r"^[A-Za-z0-9_@%+=:,./-]+$")


def systemd_quote(word):
    """Quote one word for a systemd Exec= line.

    systemd expands `$VAR`/`${VAR}` and `%` specifiers in Exec= lines, so those
    are doubled; words with spaces or quotes go in double quotes with C escapes.
    """
    word = str(word).replace("%", "%%").replace("$", "$$")
    if word and _PLAIN.match(word):
        return word
    return '"%s"' % word.replace("\\", "\\\\").replace('"', '\\"')


def systemd_exec_line(argv):
    return " ".join(systemd_quote(w) for w in argv)
