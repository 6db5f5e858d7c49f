# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One diagnosis of the cluster: every node's evidence in, one finding per cause out.

The order matters for "one cause, one finding": the NICs first, then the
plugin, then what they explain (RxDM pairing, the profile, the versions).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.module_utils.host import topology
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import (
    diagnose_busy, fabric_checks, nic_blame, node_checks, version_skew)
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import finding, ordered

NO_ANSWER = "no answer (unreachable, or it failed before its checks ran; see the play recap)"
# what a node's evidence of the wrong shape raises in the checks that read it
SHAPE_ERRORS = (TypeError, ValueError, KeyError, AttributeError, IndexError)


def kind(value):
    return "null" if value is None else type(value).__name__


def first_line(msg, default=NO_ANSWER):
    """The first non-blank line of a message (any value), else default."""
    lines = safe_text.to_text(msg).strip().splitlines() if msg else []
    return lines[0] if lines else default


def malformed(host, why):
    """The one finding of a node whose evidence has the wrong shape: it names the node, and the other nodes'
    diagnosis goes on without it."""
    return finding(host, "host", "diagnose", "fail", "%s: diagnose evidence is %s" % (host, why), None)


def place_of(raw_topology, family=None):
    """A node's place from its gce_topology (the inventory's, from the Compute API) and, for a family whose
    nodes share an NVLink domain, that domain; None where nothing is known. ValueError on a topology that
    is not a mapping."""
    if raw_topology is not None and not isinstance(raw_topology, dict):
        raise ValueError("gce_topology is not a mapping (%s)" % kind(raw_topology))
    where = topology.normalize(raw_topology)
    raw = dict((part, where.get(part)) for part in topology.LEVELS if part in fd.place_parts())
    if family in families.FAMILIES and "nvlink_domain" in fd.place_parts():
        raw["nvlink_domain"] = families.nvlink_domain(family, where)
    return fd.place(raw)


def placed(items, places):
    """The findings, each of a node with its node's place (places: {host: place}), given once per node;
    a cluster finding (host None) has none, and a place already given is kept."""
    places = places or {}
    return [dict(item, place=fd.place(places[item["host"]]))
            if item.get("host") is not None and not item.get("place") and places.get(item["host"]) else item
            for item in items]


def _versions(ev):
    """The node's versions, family and zone, as text: they are compared across nodes, so each is a word."""
    versions = ev.get("versions") or {}
    if not isinstance(versions, dict):
        raise TypeError("versions is not a mapping (%s)" % kind(versions))
    out = {}
    for key, value in list(versions.items()) + [("family", ev.get("family")), ("zone", ev.get("zone"))]:
        if value is not None and (isinstance(value, bool) or not isinstance(value, (str, int, float))):
            raise TypeError("%s is not a version (%s)" % (safe_text.one_line(key, 40), kind(value)))
        out[key] = None if value is None else safe_text.one_line(value, 100)
    return out


def _nics(state):
    if not isinstance(state, dict):
        raise TypeError("nic is not a mapping (%s)" % kind(state))
    nics = state.get("nics") or []
    if not isinstance(nics, list):
        raise TypeError("nic.nics is not a list (%s)" % kind(nics))
    return state, nics


def _checks(host, ev, repairs, earlier, max_restarts, strict_versions):
    """One node's own checks: (findings, the (host, component) pairs they explain)."""
    plugin = node_checks.plugin(host, ev, repairs)
    record = (ev.get("plugin") or {}).get("record") or {}
    rxdm = node_checks.rxdm(host, ev, repairs, plugin_tag=None if plugin else record.get("tag"),
                            max_restarts=max_restarts)
    profile = node_checks.profile(host, ev, repairs, earlier + plugin)
    out = (node_checks.gpu(host, ev, repairs) + plugin + rxdm + profile + node_checks.devices(host, ev, repairs)
           + node_checks.topology(host, ev) + node_checks.maintenance(host, ev, repairs)
           + node_checks.passed_on(host, ev, repairs)
           + ([] if plugin else node_checks.qualified(host, ev, repairs, strict=strict_versions)))
    # a node that runs a job (or cannot be shown idle) is named and kept out of the NCCL tests
    if ev.get("busy") is not None:
        out.extend(diagnose_busy.findings({host: ev["busy"]}, [host], test_busy=ev.get("test_busy", False)))
    skip = set()
    if plugin:
        skip.add((host, "plugin"))
    if rxdm:
        skip.add((host, "rxdm"))
    return out, skip


def node_findings(evidence, hosts, repairs, pinned=None, max_restarts=0, strict_versions=False, malformed_hosts=None,
                  places=None):
    """evidence: {host: diagnose_evidence}; hosts: every node of the run; strict_versions: a node outside what
    its plugin was qualified with fails instead of warning; malformed_hosts: {host: why} of nodes whose record
    could not be read into evidence; places: {host: place} (place_of), which every finding of that node gets.

    A node whose evidence has the wrong shape anywhere is one finding naming it (malformed): what its
    checks found before that is dropped, and it takes no part in what is judged across nodes (NIC blame,
    version skew), so it never costs another node its diagnosis."""
    out = []
    reached = []
    bad = dict(malformed_hosts or {})

    def guard(host, call, *args):
        try:
            return call(*args)
        except SHAPE_ERRORS as exc:
            bad.setdefault(host, "malformed (%s)" % safe_text.one_line(exc, 200))
            return None

    for host in hosts:
        ev = evidence.get(host)
        if host in bad:
            continue
        if ev is not None and not isinstance(ev, dict):
            bad[host] = "not a mapping (%s)" % kind(ev)
            continue
        reach = (ev or {}).get("reach")
        if not (isinstance(reach, dict) and reach.get("ok")):
            msg = reach.get("msg") if isinstance(reach, dict) else None
            out.append(finding(host, "host", "connection", "fail", "unreachable: %s" % first_line(msg), None))
            continue
        reached.append(host)
    nics = {}
    for host in reached:
        ev = evidence[host]
        error = ev.get("error")
        if error:
            if not isinstance(error, dict):
                bad[host] = "malformed (error is not a mapping (%s))" % kind(error)
                continue
            out.append(finding(host, "host", "diagnose", "fail", "the checks stopped at task %r: %s"
                               % (error.get("task"), error.get("msg")), None))
        got = guard(host, _nics, ev.get("nic") or {})
        if got is None:
            continue
        state, host_nics = got
        if state.get("error"):
            out.append(finding(host, "nic", "GPU NICs", "fail", "cannot check the GPU NICs: %s" % state["error"],
                               repairs.role(host, "nic")))
        # each node's NICs read alone first: one that cannot be read stays out of the blame across nodes
        elif guard(host, nic_blame.localise, {host: host_nics}, repairs) is not None:
            nics[host] = host_nics
    out.extend(nic_blame.localise(dict((h, n) for h, n in nics.items() if h not in bad), repairs))
    skip = set()
    for host in reached:
        if host in bad:
            continue
        ev = evidence[host]
        mine = [f for f in out if f["host"] == host]
        got = guard(host, _checks, host, ev, repairs, mine, max_restarts, strict_versions)
        if got is not None:
            out.extend(got[0])
            skip.update(got[1])
    versions = {}
    for host in reached:
        if host not in bad:
            got = guard(host, _versions, evidence[host])
            if got is not None:
                versions[host] = got
    out.extend(version_skew.skew(dict((h, v) for h, v in versions.items() if h not in bad), repairs, pinned=pinned,
                                 skip=skip))
    for host in reached:
        refused = None if host in bad else guard(host, node_checks.guest_os, host, evidence[host])
        if refused:
            # the phases refuse this node: their repair commands would only repeat that
            for item in out:
                if item["host"] == host and (item["repair"] or "").startswith("ansible-playbook "):
                    item["repair"] = None
            out.extend(refused)
    out = [item for item in out if item["host"] not in bad]
    out.extend(malformed(host, bad[host]) for host in hosts if host in bad)
    return placed(ordered(out), places)


def passing(findings, hosts, test_busy=False):
    """The nodes with no failing finding and no job running: the ones the NCCL tests may use."""
    failed = set(f["host"] for f in findings if f["severity"] == "fail")
    failed.update(diagnose_busy.left_out(findings, test_busy=test_busy))
    return [h for h in hosts if h not in failed]


def all_findings(node, nccl_result, tested, hosts, repairs, minimum=2, not_run=None, late_busy=(), test_busy=False,
                 places=None):
    """The node findings plus what the NCCL tests among ``tested`` found, or why they did not run
    (``not_run``: a reason such as check mode; else too few nodes passed). places: as node_findings.

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
        try:
            out.extend(fabric_checks.from_result(nccl_result, repairs))
        except SHAPE_ERRORS as exc:
            # a result the NCCL tests' module would not give (a broken run, an edited record): said, not raised
            out.append(finding(None, "fabric", fabric_checks.SUBJECT, "fail",
                               "the NCCL tests' result has the wrong shape (%s)" % safe_text.one_line(exc, 200), None))
    return placed(ordered(out), places)


def line(item):
    """One finding as one line for the play output, whatever its fields hold."""
    text = "%s %s %s %s: %s" % (safe_text.to_text(item["severity"]).upper(), item["host"] or "(cluster)",
                                item["component"], item["subject"], item["cause"])
    text = safe_text.mask_text(text)
    # the repair is a command to copy as it is: one line, never masked (an option name is no secret)
    text += " -> repair: %s" % item["repair"] if item.get("repair") else ""
    # where the node sits: the fault may be below the VM (its physical host, its sub-block)
    where = fd.place_words(item.get("place")) if isinstance(item.get("place"), dict) else ""
    text += " [%s]" % where if where else ""
    return safe_text.one_line(text, 8000)
