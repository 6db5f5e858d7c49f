# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One diagnosis of the cluster: every node's evidence in, one finding per cause out.

The order matters for "one cause, one finding": the NICs first, then the
plugin, then what they explain (RxDM pairing, the profile, the versions).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import (
    diagnose_busy, fabric_checks, nic_blame, node_checks, version_skew)
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import finding, ordered

NO_ANSWER = "no answer (unreachable, or it failed before its checks ran; see the play recap)"


def _reached(ev):
    return bool(ev) and bool((ev.get("reach") or {}).get("ok"))


def node_findings(evidence, hosts, repairs, pinned=None, max_restarts=0, strict_versions=False):
    """evidence: {host: diagnose_evidence}; hosts: every node of the run; strict_versions: a node outside what
    its plugin was qualified with fails instead of warning."""
    out = []
    reached = []
    for host in hosts:
        ev = evidence.get(host)
        if not _reached(ev):
            msg = ((ev or {}).get("reach") or {}).get("msg") or NO_ANSWER
            out.append(finding(host, "host", "connection", "fail", "unreachable: %s" % msg.strip().splitlines()[0],
                               None))
            continue
        reached.append(host)
        if ev.get("error"):
            out.append(finding(host, "host", "diagnose", "fail", "the checks stopped at task %r: %s"
                               % (ev["error"].get("task"), ev["error"].get("msg")), None))
    nics = {}
    for host in reached:
        state = evidence[host].get("nic") or {}
        if state.get("error"):
            out.append(finding(host, "nic", "GPU NICs", "fail", "cannot check the GPU NICs: %s" % state["error"],
                               repairs.role(host, "nic")))
        else:
            nics[host] = state.get("nics") or []
    out.extend(nic_blame.localise(nics, repairs))
    skip = set()
    for host in reached:
        ev = evidence[host]
        mine = [f for f in out if f["host"] == host]
        plugin = node_checks.plugin(host, ev, repairs)
        record = (ev.get("plugin") or {}).get("record") or {}
        rxdm = node_checks.rxdm(host, ev, repairs, plugin_tag=None if plugin else record.get("tag"),
                                max_restarts=max_restarts)
        profile = node_checks.profile(host, ev, repairs, mine + plugin)
        out.extend(node_checks.gpu(host, ev, repairs) + plugin + rxdm + profile + node_checks.devices(host, ev, repairs)
                   + node_checks.topology(host, ev) + node_checks.maintenance(host, ev, repairs)
                   + node_checks.passed_on(host, ev, repairs)
                   + ([] if plugin else node_checks.qualified(host, ev, repairs, strict=strict_versions)))
        # a node that runs a job (or cannot be shown idle) is named and kept out of the NCCL tests
        if ev.get("busy") is not None:
            out.extend(diagnose_busy.findings({host: ev["busy"]}, [host], test_busy=ev.get("test_busy", False)))
        if plugin:
            skip.add((host, "plugin"))
        if rxdm:
            skip.add((host, "rxdm"))
    versions = dict((h, dict(evidence[h].get("versions") or {}, family=evidence[h].get("family"),
                             zone=evidence[h].get("zone"))) for h in reached)
    out.extend(version_skew.skew(versions, repairs, pinned=pinned, skip=skip))
    for host in reached:
        refused = node_checks.guest_os(host, evidence[host])
        if refused:
            # the phases refuse this node: their repair commands would only repeat that
            for item in out:
                if item["host"] == host and (item["repair"] or "").startswith("ansible-playbook "):
                    item["repair"] = None
            out.extend(refused)
    return ordered(out)


def passing(findings, hosts, test_busy=False):
    """The nodes with no failing finding and no job running: the ones the NCCL tests may use."""
    failed = set(f["host"] for f in findings if f["severity"] == "fail")
    failed.update(diagnose_busy.left_out(findings, test_busy=test_busy))
    return [h for h in hosts if h not in failed]


def all_findings(node, nccl_result, tested, hosts, repairs, minimum=2, not_run=None, late_busy=(), test_busy=False):
    """The node findings plus what the NCCL tests among ``tested`` found, or why they did not run
    (``not_run``: a reason such as check mode; else too few nodes passed).

    late_busy: the findings of the NCCL tests' own busy check, made just before they ran: a node whose
    job started after the node checks was left out then (unless test_busy), so it is named and not counted
    as tested."""
    out = list(node)
    named = set((f.get("host"), f.get("component"), f.get("subject")) for f in out)
    late = [f for f in late_busy or () if f.get("host") in tested
            and (f.get("host"), f.get("component"), f.get("subject")) not in named]
    out.extend(late)
    left = set(diagnose_busy.left_out(late, test_busy=test_busy))
    tested = [h for h in tested if h not in left]
    counted = tested
    if len(tested) < minimum:
        # with too few passing nodes the tests get none at all: count the ones the node checks passed
        passed = passing(out, hosts, test_busy=test_busy)
        counted = passed if len(passed) < minimum else tested
    skip = fabric_checks.skipped(counted, hosts, minimum, not_run)
    if skip:
        out.append(skip)
    else:
        out.extend(fabric_checks.from_result(nccl_result, repairs))
    return ordered(out)


def line(item):
    """One finding as one line for the play output."""
    text = "%s %s %s %s: %s" % (item["severity"].upper(), item["host"] or "(cluster)", item["component"],
                                item["subject"], item["cause"])
    return text + (" -> repair: %s" % item["repair"] if item.get("repair") else "")
