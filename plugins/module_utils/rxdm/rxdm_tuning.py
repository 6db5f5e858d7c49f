# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host tuning RxDM's entrypoint applies while it runs (the family table's rxdm host_tuning), read back
from the node: host-wide and per-NIC sysctls from /proc/sys, and each fabric NIC's interrupt coalescing
from ``ethtool -c``.

The entrypoint restores the host's own values when RxDM exits; one that crashed, or was killed before its
cleanup ran, leaves them half-set. So this is judged only while RxDM runs, and a value that differs is a
fault of RxDM's run that restarting it (its entrypoint sets them again) puts right.

Plain Python with no ansible import: the node health agent runs it on the node.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

# "rx-usecs: 0" / "rx-usecs:	50" (ethtool -c)
_COALESCE = re.compile(r"^\s*([a-z-]+):\s*(\S+)\s*$")
# what ethtool prints for a NIC without coalescing controls: nothing to be set wrong
_UNSUPPORTED = re.compile(r"not supported|Operation not supported", re.IGNORECASE)


def _sysctl_path(root, name):
    return os.path.join(root, "proc", "sys", *name.split("."))


def read_sysctl(root, name):
    """A sysctl's value with its whitespace made single spaces, or None when it cannot be read."""
    try:
        with open(_sysctl_path(root, name)) as fh:
            return " ".join(fh.read().split())
    except (IOError, OSError):
        return None


def parse_coalesce(text):
    """``ethtool -c`` output -> {setting: value}."""
    out = {}
    for line in (text or "").splitlines():
        match = _COALESCE.match(line)
        if match:
            out[match.group(1)] = match.group(2)
    return out


def gather(tuning, ifaces, run, which, root="/"):
    """{sysctls: {name: value or None}, coalesce: {iface: {setting: value}}, coalesce_error: {iface: why}}."""
    tuning = tuning or {}
    names = list((tuning.get("sysctls") or {}).keys())
    for pattern in (tuning.get("nic_sysctls") or {}):
        names += [pattern.format(iface=iface) for iface in ifaces]
    state = {"sysctls": dict((name, read_sysctl(root, name)) for name in names), "coalesce": {},
             "coalesce_error": {}}
    ethtool = which("ethtool") if tuning.get("coalesce") else None
    for iface in ifaces if ethtool else []:
        rc, out, err = run([ethtool, "-c", iface])
        if rc == 0:
            state["coalesce"][iface] = parse_coalesce(out)
        elif not _UNSUPPORTED.search((err or "") + (out or "")):
            state["coalesce_error"][iface] = ((err or out or "").strip().splitlines() or ["exit %d" % rc])[0]
    return state


def problems(tuning, ifaces, state):
    """[(subject, cause)]: every setting RxDM's entrypoint sets that the host does not hold now. A value that
    cannot be read is not judged (a kernel without that setting); a NIC without coalescing controls has
    nothing to hold."""
    tuning = tuning or {}
    wanted = dict(tuning.get("sysctls") or {})
    for pattern, value in (tuning.get("nic_sysctls") or {}).items():
        wanted.update((pattern.format(iface=iface), value) for iface in ifaces)
    wrong = ["%s is %s (RxDM sets %s)" % (name, state["sysctls"].get(name), value)
             for name, value in sorted(wanted.items())
             if state["sysctls"].get(name) is not None and state["sysctls"][name] != " ".join(value.split())]
    out = []
    if wrong:
        out.append(("host tuning", "%s: RxDM runs, but the host does not hold the tuning its entrypoint sets (one "
                                   "that crashed or was killed leaves it half-set); restart RxDM"
                    % "; ".join(wrong)))
    for iface in ifaces:
        have = state["coalesce"].get(iface)
        if not have:
            continue
        off = ["%s %s (RxDM sets %s)" % (key, have.get(key), value)
               for key, value in sorted((tuning.get("coalesce") or {}).items())
               if have.get(key) is not None and have[key] != value]
        if off:
            out.append(("coalescing %s" % iface, "interrupt coalescing %s while RxDM runs; restart RxDM"
                        % ", ".join(off)))
    return out
