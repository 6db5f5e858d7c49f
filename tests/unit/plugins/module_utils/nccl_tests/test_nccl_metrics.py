# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An nccl-tests report as Prometheus metrics, checked by the real promtool; and the report module
writing them beside the reports and into a textfile directory."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_metrics, nccl_report
from ansible_collections.gpudirect.gcp.plugins.modules import nccl_tests_report
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.health.test_health_metrics import promtool_check
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.nccl_tests.test_nccl_report import pairwise_result
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run


def test_a_pairwise_run_with_a_bad_node_renders_to_metrics_promtool_accepts():
    report = nccl_report.build_report(pairwise_result(bad=("node2",)), "run1")
    text = nccl_metrics.render(report, 1764000000.0)
    rc, out = promtool_check(text)
    assert rc == 0, out
    assert "gpudirect_nccl_tests_pass 0" in text
    assert 'gpudirect_nccl_tests_bad_node{node="node2"} 1' in text
    assert "gpudirect_nccl_tests_nodes 4" in text
    pairs = re.findall(r'gpudirect_nccl_tests_pair_busbw_gbps\{collective="(\w+)",node_a="(\w+)",node_b="(\w+)"\} '
                       r'([0-9.e+-]+)', text)
    assert pairs and all(float(p[3]) >= 0 for p in pairs)
    assert any("node2" in (p[1], p[2]) for p in pairs)
    collectives = [c["collective"] for c in report["collectives"]]
    for coll in collectives:
        assert 'gpudirect_nccl_tests_busbw_gbps{collective="%s"}' % coll in text


def test_a_passing_run_says_pass_and_names_no_bad_node():
    report = nccl_report.build_report(pairwise_result(bad=()), "run2")
    text = nccl_metrics.render(report, 1764000000.0)
    assert promtool_check(text)[0] == 0
    assert "gpudirect_nccl_tests_pass 1" in text and "gpudirect_nccl_tests_bad_node" not in text


def test_the_report_module_writes_metrics_beside_the_reports_and_into_the_textfile_dir(tmp_path, capsys):
    textfile = tmp_path / "textfile"
    out = run(nccl_tests_report, {"result": pairwise_result(), "dest": str(tmp_path / "reports"), "run_id": "r1",
                                  "formats": ["json", "prometheus"], "textfile_dir": str(textfile)}, capsys)
    assert out["changed"]
    assert sorted(out["files"]) == ["json", "prometheus", "textfile"]
    beside = (tmp_path / "reports" / "r1" / "metrics.prom").read_text()
    latest = (textfile / "gpudirect_nccl_tests.prom").read_text()
    assert promtool_check(latest)[0] == 0 and "gpudirect_nccl_tests_bad_node" in beside
    assert os.listdir(str(textfile)) == ["gpudirect_nccl_tests.prom"]
