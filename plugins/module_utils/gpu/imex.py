# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""IMEX on A4X: one IMEX domain per NVLink domain, so that the GPUs of the domain's VMs can share memory
over multi-node NVLink.

What the node needs (NVIDIA's IMEX guide): ``nodes_config.cfg`` listing the addresses of every VM of the
domain, one a line; the ``nvidia-imex`` service running; an IMEX channel device
(``/dev/nvidia-caps-imex-channels/channelN``, a character device of the major the driver registers as
``nvidia-caps-imex-channels`` in /proc/devices) for jobs to use. Channel devices do not survive a reboot
unless the driver creates channel 0 at load (the ``NVreg_CreateImexChannel0=1`` module option).

The family table's ``imex`` entry names the paths, the unit and the channel count. Plain Python with no
ansible import: the module that configures IMEX, diagnose and the node health agent use it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import stat

from ansible_collections.gpudirect.gcp.plugins.module_utils.common.sysfs import read_text_strict
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd

CHANNEL_MAJOR_NAME = "nvidia-caps-imex-channels"
MODPROBE_OPTION = "options nvidia NVreg_CreateImexChannel0=1"
_IPV4 = re.compile(r"^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$")
# nvidia-imex-ctl -q prints the domain's state; READY is the one state in which every node is connected
READY = "READY"


class ImexError(ValueError):
    """A value IMEX cannot use; one line naming it."""


def nodes_config_text(addresses):
    """The nodes_config.cfg IMEX reads: one IPv4 address a line, sorted, no duplicates."""
    bad = [a for a in addresses if not isinstance(a, str) or not _IPV4.match(a)]
    if bad:
        raise ImexError("not an IPv4 address: %s" % ", ".join(repr(b) for b in bad[:3]))
    if not addresses:
        raise ImexError("the NVLink domain has no addresses")
    return "".join("%s\n" % a for a in sorted(set(addresses), key=lambda a: tuple(int(p) for p in a.split("."))))


def parse_nodes_config(text):
    """Addresses listed in nodes_config.cfg (comments and blank lines skipped)."""
    out = []
    for line in (text or "").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(line)
    return out


def channel_major(proc_devices_text):
    """The character major the driver registered for IMEX channels, or None."""
    in_char = False
    for line in (proc_devices_text or "").splitlines():
        if line.strip().startswith("Character devices"):
            in_char = True
            continue
        if line.strip().startswith("Block devices"):
            in_char = False
            continue
        parts = line.split()
        if in_char and len(parts) == 2 and parts[1] == CHANNEL_MAJOR_NAME and parts[0].isdigit():
            return int(parts[0])
    return None


def channel_state(channel_dir, count, major):
    """[{path, ok, problem}] for channels 0..count-1: a character device of (major, N)."""
    out = []
    for number in range(count):
        path = os.path.join(channel_dir, "channel%d" % number)
        try:
            st = os.stat(path)
        except OSError:
            out.append({"path": path, "ok": False, "problem": "missing"})
            continue
        if not stat.S_ISCHR(st.st_mode):
            out.append({"path": path, "ok": False, "problem": "not a character device"})
        elif major is not None and (os.major(st.st_rdev), os.minor(st.st_rdev)) != (major, number):
            out.append({"path": path, "ok": False, "problem": "device %d:%d, the driver's is %d:%d"
                        % (os.major(st.st_rdev), os.minor(st.st_rdev), major, number)})
        else:
            out.append({"path": path, "ok": True, "problem": None})
    return out


def gather(run, which, conf):
    """The node's IMEX state. conf: the family table's imex entry."""
    ev = {"unit_state": None, "nodes": None, "nodes_error": None, "ctl": None, "ctl_error": None,
          "channels": channel_state(conf["channel_dir"], conf.get("channels", 1), None)}
    systemctl = which("systemctl")
    if systemctl:
        rc, out, err = run([systemctl, "is-active", conf["unit"]])
        ev["unit_state"] = (out or "").strip() or "unknown"
    try:
        ev["nodes"] = parse_nodes_config(read_text_strict(conf["nodes_config"]))
    except (IOError, OSError) as exc:
        ev["nodes_error"] = "cannot read %s: %s" % (conf["nodes_config"], exc.strerror or exc)
    ctl = which("nvidia-imex-ctl")
    if not ctl:
        ev["ctl_error"] = "nvidia-imex-ctl is not on PATH"
    else:
        rc, out, err = run([ctl, "-q"])
        lines = [line.strip() for line in (out or "").splitlines() if line.strip()]
        if rc != 0 and not lines:
            ev["ctl_error"] = "nvidia-imex-ctl -q exited %d: %s" % (rc, (err or "").strip().splitlines()[:1])
        else:
            ev["ctl"] = lines[-1] if lines else "no answer"
    return ev


def judge(conf, expected_nodes, ev):
    """Findings {component: imex, subject, severity, cause, rung, action, phase}; the repair of what the
    configuration holds is the host phase (gpu_host writes IMEX's files and starts it)."""
    def finding(subject, severity, cause, phase="host"):
        return fd.make("imex", subject, severity, cause, rung="rerun", action=None, phase=phase)

    out = []
    unit = conf["unit"]
    if ev.get("unit_state") != "active":
        out.append(finding(unit, "fail", "the IMEX service is %s: GPUs of this VM cannot share memory with the "
                           "rest of the NVLink domain" % (ev.get("unit_state") or "unknown")))
    if ev.get("nodes_error"):
        out.append(finding(conf["nodes_config"], "fail", ev["nodes_error"]))
    elif expected_nodes:
        have, want = set(ev.get("nodes") or []), set(expected_nodes)
        if have != want:
            parts = []
            if want - have:
                parts.append("lacks %s" % ", ".join(sorted(want - have)))
            if have - want:
                parts.append("lists %s, not in this VM's NVLink domain" % ", ".join(sorted(have - want)))
            out.append(finding(conf["nodes_config"], "fail", "differs from the NVLink domain's VMs: %s"
                               % "; ".join(parts)))
    for channel in ev.get("channels") or []:
        if not channel["ok"]:
            out.append(finding(channel["path"], "fail", "IMEX channel %s: jobs cannot import memory from other "
                               "VMs" % channel["problem"]))
    if ev.get("ctl_error"):
        out.append(finding("nvidia-imex-ctl", "warn", "could not run: %s" % ev["ctl_error"], phase=None))
    elif ev.get("unit_state") == "active" and ev.get("ctl") != READY:
        out.append(finding("IMEX domain", "fail", "nvidia-imex-ctl -q says %s, not %s: a VM of the domain is "
                           "down or cannot be reached on the IMEX port %s" % (ev.get("ctl"), READY,
                                                                              conf.get("server_port"))))
    return out
