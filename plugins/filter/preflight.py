# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight role's cross-node comparison (one line per fact the nodes do not share), the nodes outside
what their plugin release was qualified with, and the check every entry playbook makes first: that the run
has nodes to act on."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible.module_utils.six.moves.collections_abc import Mapping

from ansible_collections.gpudirect.gcp.plugins.module_utils import families as family_table
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce.gce_hosts import class_group
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import qualification


def _mismatch(label, nodes, values):
    """One line naming the nodes that differ from the majority, or None when all agree.

    values holds one entry per node, None where the fact is not known; when
    no node knows it, nothing is compared.
    """
    shown = [value if value else "not found" for value in values]
    distinct = []
    for value in shown:
        if value not in distinct:
            distinct.append(value)
    if all(value is None for value in values) or len(distinct) < 2:
        return None
    best, best_count, tie = None, 0, False
    for value in distinct:
        count = shown.count(value)
        if count > best_count:
            best, best_count, tie = value, count, False
        elif count == best_count:
            tie = True
    odd = "; ".join("%s has %s" % (node, value) for node, value in zip(nodes, shown) if tie or value != best)
    if tie:
        return "%s differs across nodes with no majority: %s" % (label, odd)
    return "%s differs across nodes: %d of %d have %s; %s" % (label, best_count, len(nodes), best, odd)


def _version_columns(name, nodes, versions, components):
    versions = list(versions or [])
    if len(versions) != len(nodes) or not all(isinstance(v, Mapping) for v in versions):
        raise AnsibleFilterError("%s: versions must hold one mapping per node (%d nodes, got %r)"
                                 % (name, len(nodes), versions))
    return [(c, [v.get(c) for v in versions]) for c in components or []]


def cluster_mismatches(nodes, columns=None, versions=None, components=None, installs=None):
    """installs: the components this run installs where they are missing (site.yml's configuration phases):
    a node without one is left out of its comparison (cluster_installs names it), so that a run after a node
    failed part-way installs there instead of stopping every node; two installed versions still differ."""
    nodes = list(nodes or [])
    columns = columns or {}
    if not isinstance(columns, Mapping):
        raise AnsibleFilterError("_cluster_mismatches: columns must map a label to one value per node, got %r"
                                 % (columns,))
    checks = [(label, nodes, values) for label, values in columns.items()]
    if components:
        for component, values in _version_columns("_cluster_mismatches", nodes, versions, components):
            present = [(node, value) for node, value in zip(nodes, values) if value or component not in (installs or [])]
            checks.append(("%s version" % component, [n for n, _v in present], [v for _n, v in present]))
    lines = []
    for label, names, values in checks:
        values = list(values)
        if len(values) != len(names):
            raise AnsibleFilterError("_cluster_mismatches: %s has %d value(s) for %d node(s)"
                                     % (label, len(values), len(names)))
        line = _mismatch(label, names, values)
        if line:
            lines.append(line)
    return lines


def cluster_installs(nodes, versions=None, components=None, shown=8):
    """One line per component of components (those this run installs) that some nodes have and others lack:
    the nodes that lack it, which the run installs it on."""
    nodes = list(nodes or [])
    lines = []
    for component, values in _version_columns("_cluster_installs", nodes, versions, components):
        lacking = [node for node, value in zip(nodes, values) if not value]
        have = []
        for value in values:
            if value and value not in have:
                have.append(value)
        if lacking and have:
            lines.append("%s not found on %d of %d node(s) (%s): this run installs it there (the others have %s)"
                         % (component, len(lacking), len(nodes), _names(lacking, shown), ", ".join(have)))
    return lines


def prerequisite_problems(nodes, problems, shown=8):
    """One line per missing prerequisite, with the nodes that lack it (the first few named, the rest counted)."""
    nodes = list(nodes or [])
    problems = list(problems or [])
    if len(problems) != len(nodes):
        raise AnsibleFilterError("_prerequisite_problems: %d problem list(s) for %d node(s)"
                                 % (len(problems), len(nodes)))
    lacking = {}
    order = []
    for node, found in zip(nodes, problems):
        for item in found or []:
            line = item.get("line") if isinstance(item, Mapping) else str(item)
            if line not in lacking:
                lacking[line] = []
                order.append(line)
            lacking[line].append(node)
    out = []
    for line in order:
        who = lacking[line]
        names = ", ".join(who[:shown]) + (" and %d more" % (len(who) - shown) if len(who) > shown else "")
        out.append("%s (%d of %d node(s): %s)" % (line, len(who), len(nodes), names))
    return out


def version_qualification(nodes, families, versions, plugin_version=None, shown=8, severity=""):
    """One line per way the nodes' driver, CUDA or NCCL is outside what their plugin release was qualified
    with, or below the family's floor (plays.qualification), with the nodes it holds for: the first few
    named, the rest counted.

    families and versions hold one entry per node (gpu_family, and gpu_versions_info's versions); a node
    without an installed plugin is judged against plugin_version, the release this run installs.
    severity: "fail" keeps only what is refused whatever the strictness (a floor), "warn" only the rest,
    "" both."""
    nodes = list(nodes or [])
    if severity not in ("", "fail", "warn"):
        raise AnsibleFilterError("_version_qualification: severity must be fail, warn or empty, got %r" % (severity,))
    families, versions = list(families or []), list(versions or [])
    if not len(families) == len(versions) == len(nodes):
        raise AnsibleFilterError("_version_qualification: %d node(s), %d family(ies), %d version record(s)"
                                 % (len(nodes), len(families), len(versions)))
    per_node = [["%s: %s" % (item["component"], item["cause"])
                 for item in qualification.check(family, ver if isinstance(ver, Mapping) else {},
                                                 plugin_version=plugin_version or None)
                 if not severity or item["severity"] == severity]
                for family, ver in zip(families, versions)]
    return prerequisite_problems(nodes, per_node, shown=shown)


def _names(hosts, shown=8):
    hosts = list(hosts)
    return ", ".join(hosts[:shown]) + (" and %d more" % (len(hosts) - shown) if len(hosts) > shown else "")


def targets_problem(matched, pattern, sources=None, expected=0, allow_empty=False, in_run=None, limit=None):
    """One line when a run would act on no node, or on fewer nodes than the cluster is known to have.

    matched holds the nodes the play pattern matches in the inventory. A wrong label filter, zone or missing
    credential leaves an inventory that parses but holds nothing: a run on it would report success on
    nothing, so it is refused unless allow_empty. expected (preflight_expected_nodes) is compared with the
    whole inventory: a short inventory is refused even where an empty run is allowed.

    in_run (with limit, ansible_limit): the matched nodes --limit keeps. A run limited to part of them (a
    repair on one node) is not compared with expected; one limited to none of them is refused as an empty
    inventory is.
    """
    matched = list(matched or [])
    kept = matched if in_run is None else [host for host in matched if host in set(in_run)]
    try:
        expected = int(expected or 0)
    except (TypeError, ValueError):
        raise AnsibleFilterError("_targets_problem: preflight_expected_nodes must be a whole number, got %r"
                                 % (expected,))
    where = "the inventory (%s)" % (", ".join(sources or []) or "no source given")
    check = "check the inventory's projects, zones, filters and credentials (ansible-inventory --graph)"
    if expected > 0 and len(matched) < expected and len(kept) == len(matched):
        return ("%s matched %d node(s) in '%s', fewer than the %d of preflight_expected_nodes%s; %s, or set "
                "preflight_expected_nodes to the cluster's size" % (where, len(matched), pattern, expected,
                                                                    (": " + _names(matched)) if matched else "",
                                                                    check))
    if not kept and not allow_empty:
        if matched:
            where, check = ("%s matched 0 node(s) in '%s' within --limit %s (%d without it)"
                            % (where, pattern, limit, len(matched)), "check --limit")
        else:
            where = "%s matched 0 node(s) in '%s'" % (where, pattern)
        return "%s; %s; -e gpudirect_allow_empty=true runs on no node on purpose" % (where, check)
    return ""


def targets_left_out(groups, shown=8):
    """One line per class of GPU VMs the GPUDirect phases do not configure (family_table.OTHER_GPU_MACHINES: G4,
    and A4X Max for now) in the inventory: the phases leave them out, and say so once instead of acting on
    them or passing over them in silence."""
    if not isinstance(groups, Mapping):
        raise AnsibleFilterError("_targets_left_out: expects the groups mapping, got %s" % type(groups).__name__)
    lines = []
    for name, spec in sorted(family_table.OTHER_GPU_MACHINES.items()):
        hosts = sorted(groups.get(class_group(name)) or [])
        if hosts:
            lines.append("%d %s VM(s) left out (%s): %s [%s]"
                         % (len(hosts), name, _names(hosts, shown), spec["why"], spec["source"]))
    return lines


def dropped_nodes(gone, nodes=None, phases_done=None):
    """The report's line: the nodes of the run that dropped out (failed or unreachable), each with the last
    phase it finished (phases_done: phase to the nodes that finished it, in run order), or that none did."""
    gone, nodes = list(gone or []), list(nodes or [])
    if not isinstance(phases_done or {}, Mapping):
        raise AnsibleFilterError("_dropped_nodes: phases_done must map a phase to its nodes, got %r" % (phases_done,))
    last = dict((node, "none") for node in gone)
    for phase, finished in (phases_done or {}).items():
        for node in finished or []:
            if node in last:
                last[node] = phase
    if gone:
        return ("%d of %d node(s) dropped out (failed or unreachable; see the recap): %s"
                % (len(gone), len(nodes), ", ".join("%s after phase %s" % (node, last[node]) for node in gone)))
    if nodes:
        return "all %d node(s) finished every phase that ran" % len(nodes)
    return "no node in this run (gpudirect_allow_empty)"


class FilterModule(object):
    def filters(self):
        return {"_cluster_mismatches": cluster_mismatches, "_cluster_installs": cluster_installs,
                "_dropped_nodes": dropped_nodes, "_prerequisite_problems": prerequisite_problems,
                "_targets_problem": targets_problem, "_targets_left_out": targets_left_out,
                "_version_qualification": version_qualification}
