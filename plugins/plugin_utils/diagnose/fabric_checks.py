# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Findings of the NCCL tests run among the nodes that passed the node checks.

A bad node found by the pairwise search is a finding on that node.  A fabric
part the search blames (a sub-block's or a block's uplink, the path between two
sub-blocks) is a finding of the cluster naming that part, with the runs that
failed across it and their busbw; the nodes at its ends are not blamed.  What
the search cannot pin on anything (cluster mode, an even split, a run that did
not complete) is a finding of the cluster too (host null).  A slow pair (a red
cell of the report's pair matrix) that no bad node, unknown node or blamed
fabric part explains is named on its own as a warning, worst first. The NCCL environment the runs
really used (an environment plugin's override, a value that breaks the family, a forced network with no
device) is named on the variable at fault.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import pair_matrix
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import finding

SUBJECT = "nccl-tests"
# slow pairs named one by one; the rest are counted in one more finding
MAX_SLOW_PAIRS = 10


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
        lines = safe_text.to_text(result.get("msg") or "").strip().splitlines()
        return [finding(None, "fabric", SUBJECT, "fail", "the NCCL tests did not complete: %s"
                        % (lines[0] if lines else "no result"), None)]
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
    fabric = (result.get("pairwise") or {}).get("fabric") or {}
    busbw = _pair_busbw(result)
    for item in fabric.get("bad") or []:
        runs = ["%s%s" % (run, busbw.get(run, "")) for run in item.get("runs") or []]
        out.append(finding(None, "fabric", item["what"], "fail",
                           "every run across it failed between nodes that pass elsewhere (%s): the fault is in "
                           "the fabric, not in the nodes; report it to Google Cloud with these runs"
                           % ", ".join(runs), None))
    for item in fabric.get("suspect") or []:
        out.append(finding(None, "fabric", item["what"], "warn",
                           "failed runs that these explain equally well; more nodes in the parts named, or a rerun "
                           "with another pairing, can tell them apart", None))
    out.extend(_unexplained_slow_pairs(result, bad, fabric))
    out.extend(env_conflicts(result))
    if not bad and not fabric.get("bad"):
        for verdict in result.get("collectives") or []:
            if verdict.get("status") == "fail":
                out.append(finding(None, "fabric", verdict.get("collective"), "fail",
                                   "; ".join(verdict.get("reasons") or []) or "below the baseline", None))
    return out


def env_conflicts(result):
    """The NCCL environment the tests ran with, as NCCL used it (nccl_env_used): each conflict is a finding of
    the cluster on the variable, since every rank of the runs read it."""
    return [finding(None, "nccl_profile", item["subject"], item["severity"],
                    "in the NCCL tests' runs: %s" % item["cause"], None)
            for item in ((result.get("nccl_env") or {}).get("conflicts") or [])]


def _unexplained_slow_pairs(result, bad, fabric):
    """Warnings for the slow pairs that no node or fabric part the search blamed accounts for."""
    blamed = set(bad) | set(result.get("unknown_nodes") or [])
    explained = set(run for item in fabric.get("bad") or [] for run in item.get("runs") or [])
    seen, slow = set(), []
    for coll in pair_matrix.collectives(result):
        for cell in pair_matrix.slow_cells(result, coll):
            key = "+".join(sorted(cell["pair"]))
            if key in seen or key in explained or blamed.intersection(cell["pair"]):
                continue
            seen.add(key)
            slow.append(cell)
    out = []
    for cell in slow[:MAX_SLOW_PAIRS]:
        figure = "no figure"
        if cell["busbw_gbps"] is not None:
            figure = "%.1f GB/s %s" % (cell["busbw_gbps"], cell["collective"])
        limit = "" if cell["required_gbps"] is None else ", bar %.1f GB/s" % cell["required_gbps"]
        where = " and ".join(ident or "unplaced" for ident in cell["subblocks"])
        why = "; ".join(cell["reasons"]) or ("failed" if not cell["ok"] else "below the bar")
        out.append(finding(None, "fabric", "pair %s" % " + ".join(cell["pair"]), "warn",
                           "%s (%s%s, round %s, %s locality, sub-blocks %s); neither node nor any fabric part "
                           "was blamed for it: rerun the pair to tell a transient from a fault"
                           % (why, figure, limit, cell["round"], cell["locality"], where), None))
    if len(slow) > MAX_SLOW_PAIRS:
        rest = slow[MAX_SLOW_PAIRS:]
        out.append(finding(None, "fabric", "%d more slow pairs" % len(rest), "warn",
                           "also slow and not explained: %s; the report's pair matrix shows them all"
                           % ", ".join(" + ".join(cell["pair"]) for cell in rest[:20]), None))
    return out


def _pair_busbw(result):
    """'a+b' -> ' (12.3 GB/s all_gather)' from the pairwise rounds, for naming the slow runs."""
    out = {}
    for rnd in (result.get("pairwise") or {}).get("rounds") or []:
        for entry in rnd:
            pair = "+".join(sorted(entry.get("pair") or []))
            figures = ["%.1f GB/s %s" % (bw, coll) for coll, bw in sorted((entry.get("busbw_gbps") or {}).items())
                       if isinstance(bw, (int, float))]
            out[pair] = " (%s)" % ", ".join(figures) if figures else " (no result)"
    return out
