# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight role's cross-node comparison: one line per fact the nodes do not share."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible.module_utils.six.moves.collections_abc import Mapping


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


def cluster_mismatches(nodes, columns=None, versions=None, components=None):
    nodes = list(nodes or [])
    columns = columns or {}
    if not isinstance(columns, Mapping):
        raise AnsibleFilterError("_cluster_mismatches: columns must map a label to one value per node, got %r"
                                 % (columns,))
    checks = list(columns.items())
    if components:
        versions = list(versions or [])
        if len(versions) != len(nodes) or not all(isinstance(v, Mapping) for v in versions):
            raise AnsibleFilterError("_cluster_mismatches: versions must hold one mapping per node (%d nodes, got %r)"
                                     % (len(nodes), versions))
        checks += [("%s version" % c, [v.get(c) for v in versions]) for c in components]
    lines = []
    for label, values in checks:
        values = list(values)
        if len(values) != len(nodes):
            raise AnsibleFilterError("_cluster_mismatches: %s has %d value(s) for %d node(s)"
                                     % (label, len(values), len(nodes)))
        line = _mismatch(label, nodes, values)
        if line:
            lines.append(line)
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


class FilterModule(object):
    def filters(self):
        return {"_cluster_mismatches": cluster_mismatches, "_prerequisite_problems": prerequisite_problems}
