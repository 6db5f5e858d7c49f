# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The RDMA ports of the GPU NICs (A3 Ultra, A4, A4X, A4X Max): each expected device present, its port
active on an Ethernet link (RoCE), its active MTU what the VPC MTU allows, and its error counters
read twice so that a port that flaps or drops packets now is named, not one that did so last month.

:func:`gather` reads sysfs (under a root the sandbox moves) and ``ibv_devinfo``;
:func:`judge` is pure. Findings have the GPU module's shape with component ``rdma`` and the
subject ``<device> port <n>``. Whether each NIC's GID table holds its address is the NIC
readiness check's (module_utils/nic/nic_ready.py), which knows the NIC-to-device mapping.

Plain Python with no ansible import: the node health agent ships it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import time

# counters whose rise between two reads names the port, with what it means and how bad it is:
# the link going down is a flapping port (the job sees a fabric error); the others are packets
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
# lost and resent, which slow every collective that crosses the port (the meanings are those of
# NVIDIA's mlx5 port and hardware counter documentation)
COUNTERS = (
    ("counters", "link_downed", "fail", "the link went down %d time(s)"),
    ("counters", "link_error_recovery", "warn", "%d link error recoveries"),
    ("hw_counters", "out_of_sequence", "warn", "%d packet(s) out of sequence"),
    ("hw_counters", "local_ack_timeout_err", "warn", "%d retransmit timeout(s)"),
    ("hw_counters", "packet_seq_err", "warn", "%d packet sequence error(s)"),
)
# the MTUs RoCE can run at (IB MTUs) and what a RoCEv2 packet adds around the payload:
# Ethernet 14, IPv4 20, UDP 8, base transport header 12, ICRC 4
IB_MTUS = (256, 512, 1024, 2048, 4096)
ROCE_OVERHEAD = 58
_ACTIVE_MTU = re.compile(r"^\s*active_mtu:\s*(\d+)", re.M)


def roce_mtu(netdev_mtu):
    """The largest IB MTU a netdev MTU carries (8896 -> 4096, 1460 -> 1024)."""
    fits = [m for m in IB_MTUS if m + ROCE_OVERHEAD <= (netdev_mtu or 0)]
    return fits[-1] if fits else None


def finding(subject, severity, cause, rung, action=None, phase=None):
    return fd.make("rdma", subject, severity, cause, rung=rung, action=action, phase=phase)


def _read(path):
    try:
        with open(path) as fh:
            return fh.read().strip()
    except (IOError, OSError):
        return None


def _value(text):
    """'4: ACTIVE' -> 'ACTIVE'; None stays None."""
    return text.split(":", 1)[-1].strip() if text else None


def _int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def read_counters(base):
    out = {}
    for folder, name, _severity, _text in COUNTERS:
        value = _int(_read(os.path.join(base, folder, name)))
        if value is not None:
            out[name] = value
    return out


def read_ports(sys_dir):
    """{device: {port: {state, phys_state, link_layer, counters}}} from <sys_dir>/class/infiniband."""
    top = os.path.join(sys_dir, "class", "infiniband")
    out = {}
    for dev in sorted(os.listdir(top)) if os.path.isdir(top) else []:
        ports = {}
        pdir = os.path.join(top, dev, "ports")
        for port in sorted(os.listdir(pdir)) if os.path.isdir(pdir) else []:
            base = os.path.join(pdir, port)
            ports[port] = {"state": _value(_read(os.path.join(base, "state"))),
                           "phys_state": _value(_read(os.path.join(base, "phys_state"))),
                           "link_layer": _read(os.path.join(base, "link_layer")),
                           "counters": read_counters(base)}
        ndir = os.path.join(top, dev, "device", "net")
        out[dev] = {"ports": ports, "netdevs": sorted(os.listdir(ndir)) if os.path.isdir(ndir) else []}
    return out


def gather(devices, run, which, sys_dir="/sys", interval_s=1.0, sleep=time.sleep, clock=time.time):
    """Read every RDMA port twice, interval_s apart, and each port's active MTU (ibv_devinfo)."""
    ev = {"devices": {}, "error": None, "interval_s": None, "mtu_error": None}
    if not devices:
        return ev
    try:
        first = read_ports(sys_dir)
        start = clock()
        sleep(interval_s)
        second = read_ports(sys_dir)
        ev["interval_s"] = round(clock() - start, 3)
    except (IOError, OSError) as exc:
        ev["error"] = "cannot read %s: %s" % (os.path.join(sys_dir, "class", "infiniband"), exc.strerror or exc)
        return ev
    for dev, info in second.items():
        for port, now in info["ports"].items():
            before = ((first.get(dev) or {}).get("ports") or {}).get(port) or {}
            now["deltas"] = dict((k, v - before["counters"][k]) for k, v in now["counters"].items()
                                 if k in (before.get("counters") or {}))
    ev["devices"] = second
    tool = which("ibv_devinfo")
    if not tool:
        ev["mtu_error"] = "ibv_devinfo is not on PATH (rdma-core's ibverbs-utils)"
        return ev
    for dev in sorted(set(devices) & set(second)):
        for port, now in second[dev]["ports"].items():
            rc, out, err = run([tool, "-d", dev, "-i", port])
            match = _ACTIVE_MTU.search(out or "") if rc == 0 else None
            now["active_mtu"] = int(match.group(1)) if match else None
            if rc != 0 and not ev["mtu_error"]:
                first = ((err or out or "").strip().splitlines() or ["no output"])[0]
                ev["mtu_error"] = "ibv_devinfo -d %s exited %d: %s" % (dev, rc, first)
    return ev


def judge(expected, ev):
    """Evidence from gather() -> findings. expected: {rdma_devices: [...], vpc_mtu}."""
    devices = list(expected.get("rdma_devices") or [])
    if not devices:
        return []
    if ev.get("error"):
        return [finding("RDMA", "warn", "could not run: %s" % ev["error"], "rerun")]
    out = []
    want_mtu = roce_mtu(expected.get("vpc_mtu"))
    seen = ev.get("devices") or {}
    window = ev.get("interval_s")
    for dev in devices:
        if dev not in seen:
            out.append(finding(dev, "fail", "missing: the node shows no RDMA device %s (class/infiniband); its GPU "
                               "cannot use GPUDirect RDMA" % dev, "reboot", ["reboot"]))
            continue
        ports = seen[dev]["ports"]
        if not ports:
            out.append(finding(dev, "fail", "has no ports", "reboot", ["reboot"]))
        for port in sorted(ports):
            info, subject = ports[port], "%s port %s" % (dev, port)
            if info.get("state") != "ACTIVE":
                out.append(finding(subject, "fail", "port is %s (physical state %s), expected ACTIVE" % (
                    info.get("state") or "unknown", info.get("phys_state") or "unknown"), "reboot", ["reboot"]))
                continue
            if (info.get("link_layer") or "") != "Ethernet":
                out.append(finding(subject, "fail", "link layer %s, expected Ethernet: GPUDirect RDMA on Google "
                                   "Cloud is RoCE" % (info.get("link_layer") or "unknown"), "report_host"))
            mtu = info.get("active_mtu")
            if mtu and want_mtu and mtu < want_mtu:
                out.append(finding(subject, "fail", "active MTU %d, expected %d for the VPC MTU %d: the NIC's MTU "
                                   "is below the VPC's" % (mtu, want_mtu, expected["vpc_mtu"]), "rerun", phase="nic"))
            for _folder, name, severity, text in COUNTERS:
                delta = (info.get("deltas") or {}).get(name)
                if delta:
                    # resets and flaps that happen while we watch are the host's: Google's repair
                    out.append(finding(subject, severity, ("flapping: " if name == "link_downed" else "erroring: ")
                                       + (text % delta) + " in %ss" % window,
                                       "report_host" if severity == "fail" else "rerun"))
    if ev.get("mtu_error") and seen:
        out.append(finding("RDMA active MTU", "warn", "could not run: %s" % ev["mtu_error"], "rerun"))
    return out


def ports_summary(ev):
    """[{device, port, state, active_mtu, deltas}] for metrics and reports."""
    out = []
    for dev in sorted(ev.get("devices") or {}):
        for port, info in sorted(ev["devices"][dev]["ports"].items()):
            out.append({"device": dev, "port": port, "state": info.get("state"), "active_mtu": info.get("active_mtu"),
                        "errors": sum((info.get("deltas") or {}).values())})
    return out


def check(family, run, which, sys_dir="/sys", interval_s=1.0, sleep=time.sleep):
    """gather() then judge() for a family table entry: (ports for metrics, findings); nothing for a
    family without RDMA devices."""
    devices = family.get("rdma_devices") or []
    if not devices:
        return [], []
    ev = gather(devices, run, which, sys_dir=sys_dir, interval_s=interval_s, sleep=sleep)
    return ports_summary(ev), judge({"rdma_devices": devices, "vpc_mtu": family.get("vpc_mtu")}, ev)
