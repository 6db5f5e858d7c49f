# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that turn the diagnose role's evidence into findings (plugins/plugin_utils/diagnose/diagnose.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError
from jinja2 import Undefined

from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import make_unsafe


class _Lazy(object):
    """A plugin_utils/diagnose module imported when a filter first runs. Ansible finds a collection's filter by
    loading its filter files in name order, so every worker that looks up a later filter (family_profile)
    loads this file first: the diagnosis code (tens of ms to import) waits until a diagnose filter runs."""

    def __init__(self, name, package="diagnose"):
        self._name = "ansible_collections.gpudirect.gcp.plugins.plugin_utils.%s.%s" % (package, name)

    def __getattr__(self, attr):
        return getattr(importlib.import_module(self._name), attr)


diagnose = _Lazy("diagnose")
diagnose_evidence = _Lazy("diagnose_evidence")
diagnose_busy_utils = _Lazy("diagnose_busy")
findings = _Lazy("findings")
job_summary = _Lazy("job_summary")
qualification = _Lazy("qualification", "plays")


def _repairs(zones, playbook, repair_args, pairs=None, awx=None):
    if repair_args is not None and not isinstance(repair_args, (list, tuple)):
        raise AnsibleFilterError("repair_args must be a list of arguments, got %r" % (repair_args,))
    if awx is not None and not isinstance(awx, dict):
        raise AnsibleFilterError("repair_awx must be a mapping with template and inventory, got %r" % (awx,))
    return findings.Repairs(playbook or "gpudirect.gcp.site", list(repair_args or []), zones or {}, pairs or {},
                            awx=dict((k, str(v)) for k, v in (awx or {}).items() if v))


def _hosts(hosts, name):
    if not isinstance(hosts, (list, tuple)):
        raise AnsibleFilterError("%s: hosts must be a list of host names" % name)
    return [str(h) for h in hosts]


def _findings(items, name):
    """Findings the playbook hands back to a filter (what an earlier diagnose filter returned)."""
    items = [] if items is None else items
    if not isinstance(items, (list, tuple)) or not all(
            isinstance(f, dict) and all(k in f for k in ("severity", "host", "component", "subject")) for f in items):
        raise AnsibleFilterError("%s: expects a list of findings" % name)
    return list(items)


def _mapping(value):
    return value if isinstance(value, dict) else {}


def _word(value):
    """A zone or a version from a node, as a repair command may name it: text, else nothing."""
    return value if isinstance(value, str) and value else None


def _places(places, name):
    """{host: place} as _diagnose_places returns it, checked: AnsibleFilterError names the host at fault."""
    if places is None:
        return {}
    if not isinstance(places, dict):
        raise AnsibleFilterError("%s: places must be a mapping of host to place, got %s" % (name, type(places).__name__))
    out = {}
    for host, value in places.items():
        try:
            out[str(host)] = fd.place(value)
        except ValueError as exc:
            raise AnsibleFilterError("%s: places: %s: %s" % (name, host, exc))
    return out


def diagnose_places(topologies, families=None):
    """{host: place} of every host of topologies ({host: gce_topology}), with the NVLink domain of a host
    whose family (families: {host: gpu_family}) has one; None where nothing is known."""
    if not isinstance(topologies, dict):
        raise AnsibleFilterError("_diagnose_places: expects {host: gce_topology}, got %s" % type(topologies).__name__)
    if families is not None and not isinstance(families, dict):
        raise AnsibleFilterError("_diagnose_places: families must be a mapping of host to GPU family, got %s"
                                 % type(families).__name__)
    out = {}
    for host, raw in topologies.items():
        try:
            out[str(host)] = diagnose.place_of(raw, (families or {}).get(host))
        except ValueError as exc:
            raise AnsibleFilterError("_diagnose_places: %s: %s" % (host, exc))
    # names from the Compute API: never templated again
    return make_unsafe(out)


def diagnose_host_places(hosts, hostvars):
    """{host: place} of each of hosts, from the gce_topology and gpu_family hostvars hold for it: the
    one way the roles say where a set of nodes sits."""
    for given in (hosts, hostvars):
        if isinstance(given, Undefined):
            return given  # an undefined input stays undefined: the task reports the variable it names
    if isinstance(hosts, str) or not isinstance(hosts, (list, tuple)):
        raise AnsibleFilterError("_diagnose_host_places: expects a list of hosts, got %s" % type(hosts).__name__)
    if not isinstance(hostvars, Mapping):
        raise AnsibleFilterError("_diagnose_host_places: expects hostvars, got %s" % type(hostvars).__name__)
    topologies, families = {}, {}
    for host in hosts:
        node = hostvars.get(host)
        node = node if isinstance(node, Mapping) else {}  # an unknown host: nothing known of it
        topologies[host] = node.get("gce_topology")
        families[host] = node.get("gpu_family")
    return diagnose_places(topologies, families)


def diagnose_node_findings(evidence, hosts, playbook=None, repair_args=None, pinned=None, max_restarts=0,
                           repair_awx=None, strict_versions=False, places=None):
    if not isinstance(evidence, dict):
        raise AnsibleFilterError("_diagnose_node_findings: expects {host: diagnose_evidence}, got %s"
                                 % type(evidence).__name__)
    hosts = _hosts(hosts, "_diagnose_node_findings")
    if pinned is not None and not isinstance(pinned, dict):
        raise AnsibleFilterError("_diagnose_node_findings: pinned must be a mapping of component to version")
    try:
        max_restarts = int(max_restarts)
    except (TypeError, ValueError):
        raise AnsibleFilterError("_diagnose_node_findings: max_restarts must be a number, got %r" % (max_restarts,))
    # each node's record read alone: one of the wrong shape is a finding on that node (diagnose.malformed)
    shaped, bad = {}, {}
    for host, raw in evidence.items():
        try:
            shaped[host] = diagnose_evidence.shape(raw)
        except diagnose.SHAPE_ERRORS as exc:
            bad[str(host)] = "malformed (%s)" % exc
    zones = dict((h, _word(_mapping(shaped.get(h)).get("zone"))) for h in hosts)
    pairs = dict((h, dict((k, _word(v)) for k, v in _mapping(_mapping(shaped.get(h)).get("versions")).items()))
                 for h in hosts)
    repairs = _repairs(zones, playbook, repair_args, pairs, repair_awx)
    places = _places(places, "_diagnose_node_findings")
    try:
        out = diagnose.node_findings(shaped, hosts, repairs, pinned=pinned or {}, max_restarts=max_restarts,
                                     strict_versions=bool(strict_versions), malformed_hosts=bad, places=places)
    except diagnose.SHAPE_ERRORS as exc:
        # node data is judged node by node above: what is left is the filter's own inputs
        raise AnsibleFilterError("_diagnose_node_findings: %s" % diagnose.first_line(exc, type(exc).__name__))
    # node output (log lines, file contents) must never be templated again
    return make_unsafe(out)


def diagnose_passing(items, hosts, test_busy=False):
    return diagnose.passing(_findings(items, "_diagnose_passing"), _hosts(hosts, "_diagnose_passing"),
                            test_busy=bool(test_busy))


def diagnose_busy(checks, hosts, test_busy=False):
    if not isinstance(checks, dict):
        raise AnsibleFilterError("_diagnose_busy: expects {host: gpu_busy_info result}, got %s" % type(checks).__name__)
    # process names come from the nodes: never templated again
    return make_unsafe(diagnose_busy_utils.findings(checks, _hosts(hosts, "_diagnose_busy"), test_busy=bool(test_busy)))


def diagnose_add_fabric(items, nccl_result, tested, hosts, zones=None, playbook=None, repair_args=None, minimum=2,
                        not_run=None, late_busy=None, test_busy=False, repair_awx=None, places=None):
    hosts = _hosts(hosts, "_diagnose_add_fabric")
    places = _places(places, "_diagnose_add_fabric")
    if not isinstance(late_busy or [], (list, tuple)) or not all(isinstance(f, dict) for f in late_busy or []):
        raise AnsibleFilterError("_diagnose_add_fabric: late_busy expects a list of findings")
    try:
        minimum = int(minimum)
    except (TypeError, ValueError):
        raise AnsibleFilterError("_diagnose_add_fabric: minimum must be a number, got %r" % (minimum,))
    out = diagnose.all_findings(_findings(items, "_diagnose_add_fabric"), nccl_result or {},
                                _hosts(tested, "_diagnose_add_fabric"), hosts,
                                _repairs(zones, playbook, repair_args, awx=repair_awx), minimum=minimum,
                                not_run=not_run or None,
                                late_busy=list(late_busy or []), test_busy=bool(test_busy), places=places)
    return make_unsafe(out)


def diagnose_line(item):
    if not isinstance(item, dict) or not all(k in item for k in ("severity", "host", "component", "subject", "cause")):
        raise AnsibleFilterError("_diagnose_line: expects a finding, got %r" % (item,))
    return diagnose.line(item)


def diagnose_faulty_hosts(items):
    if not isinstance(items, (list, tuple)):
        raise AnsibleFilterError("_diagnose_faulty_hosts: expects a list of findings, got %s" % type(items).__name__)
    return make_unsafe(findings.faulty_hosts(_findings(items, "_diagnose_faulty_hosts")))


def diagnose_summary(items, hosts, places=None, place_blame_share=None):
    if places is not None and not isinstance(places, dict):
        raise AnsibleFilterError("_diagnose_summary: places must be a mapping of host to place, got %s"
                                 % type(places).__name__)
    share = None
    if place_blame_share is not None:
        try:
            share = float(place_blame_share)
        except (TypeError, ValueError):
            share = None
        if isinstance(place_blame_share, bool) or share is None or not 0 < share <= 1:
            raise AnsibleFilterError("_diagnose_summary: place_blame_share must be a fraction above 0 and at most 1, "
                                     "got %r" % (place_blame_share,))
    # a place record that cannot be read costs only its node the blame by placement (place_blame)
    out = findings.summary(_findings(items, "_diagnose_summary"), _hosts(hosts, "_diagnose_summary"),
                           places=places, share=share)
    # how current the version table the qualification findings came from is
    out["version_table"] = qualification.table_age()
    # place names come from the Compute API: never templated again
    return make_unsafe(out)


def diagnose_job_summary(results, hosts, names=None, standins=False, places=None):
    places = _places(places, "_diagnose_job_summary")
    if not isinstance(results, dict):
        raise AnsibleFilterError("_diagnose_job_summary: expects {host: nccl_job_evidence result}, got %s"
                                 % type(results).__name__)
    if names is not None and not isinstance(names, dict):
        raise AnsibleFilterError("_diagnose_job_summary: names must be a mapping of address to node, got %r" % (names,))
    summary = job_summary.summarize(results, _hosts(hosts, "_diagnose_job_summary"), names)
    # a node's findings say where it sits, as the node checks' do; the job's own (host None) sit nowhere
    summary["findings"] = diagnose.placed(summary["findings"], places)
    summary["standins"] = bool(standins)
    return make_unsafe(summary)


def diagnose_job_text(summary):
    if not isinstance(summary, dict) or "headline" not in summary:
        raise AnsibleFilterError("_diagnose_job_text: expects what _diagnose_job_summary returns")
    try:
        return make_unsafe(job_summary.text(summary))
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        # the summary is the playbook's own value (a summary edited or built by hand)
        raise AnsibleFilterError("_diagnose_job_text: expects what _diagnose_job_summary returns (%s)"
                                 % diagnose.first_line(exc, type(exc).__name__))


class FilterModule(object):
    def filters(self):
        return {
            "_diagnose_node_findings": diagnose_node_findings,
            "_diagnose_places": diagnose_places,
            "_diagnose_host_places": diagnose_host_places,
            "_diagnose_passing": diagnose_passing,
            "_diagnose_busy": diagnose_busy,
            "_diagnose_add_fabric": diagnose_add_fabric,
            "_diagnose_summary": diagnose_summary,
            "_diagnose_line": diagnose_line,
            "_diagnose_faulty_hosts": diagnose_faulty_hosts,
            "_diagnose_job_summary": diagnose_job_summary,
            "_diagnose_job_text": diagnose_job_text,
        }
