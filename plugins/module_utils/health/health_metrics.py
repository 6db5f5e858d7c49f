# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node health results as Prometheus text-format metrics for node_exporter's textfile collector.

The time of the last check is a gauge of its own (samples carry no timestamp). The findings count
is always written, by severity, so an alert can tell "0" from "absent"; a family with no sample (no
RxDM on a gIB node) is left out. Where the role wrote the node's place in the agent's config, the info series
and every finding's series carry it as labels (finding.PLACE_PARTS: block, subblock, physical_host; each value one
line of at most finding.MAX_PLACE_CHARS): the fault may be below the VM. Plain Python with no ansible import:
the node health agent runs it on the node.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import files, prom_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd

# name -> (type, help); the order is the file's order
FAMILIES = (
    ("gpudirect_node_health_info", "gauge",
     "Always 1; the labels say what was checked: the machine family and whether the node runs stand-ins"),
    ("gpudirect_node_health_last_run_timestamp_seconds", "gauge", "When the node health checks last ran (Unix time)"),
    ("gpudirect_node_health_duration_seconds", "gauge", "How long the last node health run took"),
    ("gpudirect_node_health_timed_out", "gauge", "1 when the last run was stopped at its time limit"),
    ("gpudirect_node_health_ok", "gauge", "1 when the last run found no failing component"),
    ("gpudirect_node_health_findings", "gauge", "Findings of the last run, by severity"),
    ("gpudirect_node_health_finding", "gauge", "One series per finding of the last run (value 1)"),
    ("gpudirect_gpus_seen", "gauge", "GPUs the driver sees"),
    ("gpudirect_gpus_expected", "gauge", "GPUs the machine family has"),
    ("gpudirect_gpu_ok", "gauge", "1 when no failing finding names the GPU"),
    ("gpudirect_gpu_xid_events", "gauge", "Xid events in the kernel log since boot, per GPU and Xid"),
    ("gpudirect_rdma_port_active", "gauge", "1 when the RDMA port is ACTIVE"),
    ("gpudirect_rdma_port_active_mtu_bytes", "gauge", "The RDMA port's active MTU"),
    ("gpudirect_rdma_port_errors", "gauge",
     "How much the RDMA port's error counters (link downed, out of sequence, retransmit timeouts) rose during the check"),
    ("gpudirect_nic_up", "gauge", "1 when the GPU NIC is up (admin up, carrier)"),
    ("gpudirect_nic_mtu_bytes", "gauge", "The GPU NIC's MTU now"),
    ("gpudirect_nic_expected_mtu_bytes", "gauge", "The MTU of the GPU NIC's VPC"),
    ("gpudirect_rxdm_ready", "gauge", "1 when RxDM runs and has signalled readiness"),
    ("gpudirect_nccl_plugin_intact", "gauge", "1 when every file of the NCCL net plugin matches its install record"),
    ("gpudirect_nccl_profile_consistent", "gauge", "1 when the NCCL env file names only what this node has"),
)


def samples(result, now, timed_out=False, standins=False, place=None):
    """{metric name: [(labels as (key, value) pairs, value)]} for one node health result. place: where the
    node sits (finding.place), or None; ValueError on one of another shape."""
    out = dict((name, []) for name, _t, _h in FAMILIES)
    where = fd.place_labels(fd.place(place))
    out["gpudirect_node_health_info"].append(
        ((("family", result.get("family") or ""), ("standins", "true" if standins else "false")) + where, 1))
    out["gpudirect_node_health_last_run_timestamp_seconds"].append(((), float(round(now, 3))))
    out["gpudirect_node_health_duration_seconds"].append(((), float(result.get("duration_s") or 0.0)))
    out["gpudirect_node_health_timed_out"].append(((), bool(timed_out)))
    findings = result.get("findings") or []
    out["gpudirect_node_health_ok"].append(((), not any(f["severity"] == "fail" for f in findings)))
    for severity in fd.SEVERITIES:
        count = sum(1 for f in findings if f["severity"] == severity)
        out["gpudirect_node_health_findings"].append(((("severity", severity),), count))
    for f in findings:  # prom_text keeps one series per label set
        out["gpudirect_node_health_finding"].append(
            ((("component", f["component"]), ("subject", f["subject"]), ("severity", f["severity"])) + where, 1))
    gpu = result.get("gpu")
    if gpu is not None:
        out["gpudirect_gpus_seen"].append(((), gpu.get("count") or 0))
        if gpu.get("expected") is not None:
            out["gpudirect_gpus_expected"].append(((), gpu["expected"]))
        for item in gpu.get("gpus") or []:
            out["gpudirect_gpu_ok"].append(((("gpu", str(item["index"])), ("bus", item["bus"] or "")), bool(item["ok"])))
        for item in gpu.get("xids") or []:
            out["gpudirect_gpu_xid_events"].append(((("bus", item["pci_bus_id"]), ("xid", str(item["xid"]))),
                                                    item["count"]))
        for port in gpu.get("rdma_ports") or []:
            labels = (("device", port["device"]), ("port", str(port["port"])))
            out["gpudirect_rdma_port_active"].append((labels, port.get("state") == "ACTIVE"))
            if port.get("active_mtu") is not None:
                out["gpudirect_rdma_port_active_mtu_bytes"].append((labels, port["active_mtu"]))
            out["gpudirect_rdma_port_errors"].append((labels, port.get("errors") or 0))
    for nic in result.get("nics") or []:
        labels = (("nic", nic.get("nic") or nic.get("name") or ""), ("interface", nic.get("iface") or ""))
        out["gpudirect_nic_up"].append((labels, bool(nic.get("up"))))
        if nic.get("mtu") is not None:
            out["gpudirect_nic_mtu_bytes"].append((labels, nic["mtu"]))
        if nic.get("expected_mtu") is not None:
            out["gpudirect_nic_expected_mtu_bytes"].append((labels, int(nic["expected_mtu"])))
    for part, name, key in (("rxdm", "gpudirect_rxdm_ready", "ready"),
                            ("plugin", "gpudirect_nccl_plugin_intact", "intact"),
                            ("profile", "gpudirect_nccl_profile_consistent", "consistent")):
        state = result.get(part)
        if state is not None and state.get(key) is not None:
            out[name].append(((), bool(state[key])))
    return out


def render(result, now, timed_out=False, standins=False, place=None):
    """The text-format file for one node health result."""
    return prom_text.render(FAMILIES, samples(result, now, timed_out, standins, place))


def textfile_problem(directory):
    """Why the agent must not write its metrics into directory (one line naming it), or None: another
    user owns it, or group or others may write it (they could put their own file in the place of this
    node's health). Links to the directory are followed: what counts is the directory written into."""
    try:
        info = os.stat(directory)
    except OSError as exc:
        return "textfile directory %s: %s" % (directory, exc.strerror or exc)
    if not stat.S_ISDIR(info.st_mode):
        return "textfile directory %s is not a directory" % directory
    if info.st_uid not in (os.geteuid(), 0):
        return "textfile directory %s belongs to uid %d, not to root or the agent's user (uid %d)" % (
            directory, info.st_uid, os.geteuid())
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "textfile directory %s is writable by group or others (mode %04o); make it 0755" % (
            directory, stat.S_IMODE(info.st_mode))
    return None


def write_textfile(directory, name, text):
    """Write name into node_exporter's textfile directory (made 0755 where missing), 0644, through a
    temporary file and a rename: a reader never sees half a file, and a link in its place is replaced,
    not followed. OSError says why not in one line; a directory textfile_problem names is refused."""
    if not os.path.isdir(directory):
        os.makedirs(directory, 0o755)
    problem = textfile_problem(directory)
    if problem:
        raise OSError(problem)
    files.write_atomic(os.path.join(directory, name), text, 0o644)
