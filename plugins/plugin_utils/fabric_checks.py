# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Findings of the NCCL tests run among the nodes that passed the node checks.

A bad node found by the pairwise search is a finding on that node; what the
search cannot pin on a node (cluster mode, an even split, a run that did not
complete) is a finding of the cluster (host null).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.findings import finding

SUBJECT = "nccl-tests"


def skipped(passing, hosts, minimum=2, not_run=None):
    """A warn when the fabric was not tested (a reason given, or too few nodes passed), else None."""
    if not_run:
        return finding(None, "fabric", SUBJECT, "warn", not_run, None)
    if len(passing) >= minimum:
        return None
    return finding(None, "fabric", SUBJECT, "warn",
                   "not run: %d of %d node(s) passed the node checks (%s); the fabric needs at least %d"
                   % (len(passing), len(hosts), ", ".join(passing) or "none", minimum), None)


def from_result(result, repairs):
    """Findings from a gpudirect.gcp.nccl_tests result (a registered result, failed or not)."""
    if not result or result.get("skipped"):
        return []
    if result.get("failed") and not result.get("collectives"):
        return [finding(None, "fabric", SUBJECT, "fail", "the NCCL tests did not complete: %s"
                        % (result.get("msg") or "no result").strip().splitlines()[0], None)]
    out = []
    table = result.get("node_table") or {}
    bad = list(result.get("bad_nodes") or [])
    for node in bad:
        reason = (table.get(node) or {}).get("reason") or "named bad by the pairwise search"
        out.append(finding(node, "fabric", "busbw", "fail", reason,
                           repairs.report_host(node, "NCCL busbw below the family baseline in pairwise tests")))
    for node in result.get("unknown_nodes") or []:
        reason = (table.get(node) or {}).get("reason") or "not isolated"
        out.append(finding(node, "fabric", "busbw", "warn", "the pairwise search could not clear this node: %s"
                           % reason, None))
    if not bad:
        for verdict in result.get("collectives") or []:
            if verdict.get("status") == "fail":
                out.append(finding(None, "fabric", verdict.get("collective"), "fail",
                                   "; ".join(verdict.get("reasons") or []) or "below the baseline", None))
    return out
