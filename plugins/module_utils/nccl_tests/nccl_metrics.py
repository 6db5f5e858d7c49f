# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An nccl-tests report as Prometheus text-format metrics: the verdict, busbw per collective against
its bar, busbw per tested node pair, the bad nodes. Written beside the other reports, and into
node_exporter's textfile directory on the controller when asked (the nccl_tests_report module)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import prom_text
# a NaN or inf busbw is left out: it would read as a measurement
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests.nccl_parse import finite_float

PASS = "pass"
FAMILIES = (
    ("gpudirect_nccl_tests_info", "gauge", "Always 1; the labels say which run: family, mode, stand-ins or not"),
    ("gpudirect_nccl_tests_last_run_timestamp_seconds", "gauge", "When the report of the last run was written"),
    ("gpudirect_nccl_tests_pass", "gauge", "1 when the last run passed"),
    ("gpudirect_nccl_tests_nodes", "gauge", "Nodes in the last run"),
    ("gpudirect_nccl_tests_busbw_gbps", "gauge", "Peak bus bandwidth of each collective (GB/s)"),
    ("gpudirect_nccl_tests_required_busbw_gbps", "gauge", "The bar each collective is judged against (GB/s)"),
    ("gpudirect_nccl_tests_collective_pass", "gauge", "1 when the collective met its bar"),
    ("gpudirect_nccl_tests_pair_busbw_gbps", "gauge",
     "Bus bandwidth of each tested node pair (pairwise mode; node_a == node_b: the node alone)"),
    ("gpudirect_nccl_tests_bad_node", "gauge", "One series per node the run found bad (value 1)"),
)


def samples(report, now):
    out = dict((name, []) for name, _t, _h in FAMILIES)
    out["gpudirect_nccl_tests_info"].append(((("family", report.get("family") or ""),
                                              ("mode", report.get("mode") or ""),
                                              ("standins", "true" if report.get("from_standins") else "false")), 1))
    out["gpudirect_nccl_tests_last_run_timestamp_seconds"].append(((), float(round(now, 3))))
    out["gpudirect_nccl_tests_pass"].append(((), report.get("verdict") == PASS))
    out["gpudirect_nccl_tests_nodes"].append(((), len(report.get("nodes") or [])))
    for item in report.get("collectives") or []:
        pairs = (("collective", item.get("collective") or ""),)
        out["gpudirect_nccl_tests_busbw_gbps"].append((pairs, finite_float(item.get("peak_busbw_gbps"))))
        out["gpudirect_nccl_tests_required_busbw_gbps"].append((pairs, finite_float(item.get("required_gbps"))))
        out["gpudirect_nccl_tests_collective_pass"].append((pairs, item.get("verdict") == PASS))
    matrix = report.get("pair_matrix") or {}
    nodes = matrix.get("nodes") or []
    for coll, data in sorted((matrix.get("collectives") or {}).items()):
        for cell in data.get("cells") or []:
            row, col, busbw = cell[0], cell[1], cell[2]
            out["gpudirect_nccl_tests_pair_busbw_gbps"].append(
                ((("collective", coll), ("node_a", nodes[row]), ("node_b", nodes[col])), finite_float(busbw)))
    for node in report.get("bad_nodes") or []:
        out["gpudirect_nccl_tests_bad_node"].append(((("node", node),), 1))
    return out


def render(report, now):
    return prom_text.render(FAMILIES, samples(report, now))
