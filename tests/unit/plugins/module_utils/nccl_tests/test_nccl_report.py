# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
from xml.etree import ElementTree as ET

from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_report, nccl_runner, pair_matrix
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.nccl_tests.test_nccl_runner import (
    nodes, params, replay)


def pairwise_result(bad=("node2",)):
    return nccl_runner.NcclTestsRun(params(mode="pairwise", hosts=nodes(4), env={"API_TOKEN": "s3cret"}),
                                    executor=replay(list(bad))).execute()


def test_json_schema_and_summary():
    report = nccl_report.build_report(pairwise_result(), "run1")
    doc = json.loads(nccl_report.to_json(report))
    assert doc["schema"] == "gpudirect.gcp/nccl-report/v1" and doc["run_id"] == "run1"
    assert doc["verdict"] == "fail" and doc["bad_nodes"] == ["node2"]
    # node2 failed round 1 with node3; round 2 put each next to a good node: two runs against ceil(log2(4))
    isolation = {"nodes": 4, "rounds": 2, "runs": 4, "extra_runs": 2, "log2_bound": 2, "ratio": 1.0,
                 "stages": {"screen": 2, "isolate": 2, "probe": 0, "boundary": 0}}
    assert doc["summary"] == {"verdict": "fail", "family": "a3-mega", "mode": "pairwise", "nodes": 4,
                              "peak_busbw_gbps": {"all_gather": 188.37}, "bad_nodes": ["node2"],
                              "isolation": isolation}
    assert doc["pairwise"]["isolation"] == isolation
    assert [e["stage"] for e in doc["pairwise"]["rounds"][1]] == ["isolate", "isolate"]
    assert doc["env"]["API_TOKEN"] == "********"
    for key in ("collectives", "node_table", "pairwise", "runs", "started", "finished", "threshold"):
        assert key in doc


def test_junit_cases_per_collective_pair_and_node():
    report = nccl_report.build_report(pairwise_result(), "run1")
    root = ET.fromstring(nccl_report.to_junit(report))
    suites = dict((s.get("name"), s) for s in root.findall("testsuite"))
    assert set(suites) == {"nccl_tests.pairwise", "nccl_tests.pairs", "nccl_tests.single_node"}
    pair_cases = suites["nccl_tests.pairs"].findall("testcase")
    failed = [c.get("name") for c in pair_cases if c.find("failure") is not None]
    assert failed and all("node2" in name for name in failed)
    assert suites["nccl_tests.pairs"].get("failures") == str(len(failed))
    assert len(suites["nccl_tests.single_node"].findall("testcase")) == 4
    coll = suites["nccl_tests.pairwise"].findall("testcase")
    assert [c.get("name") for c in coll] == ["all_gather busbw"]


def test_junit_not_judged_is_skipped_not_passed():
    res = nccl_runner.NcclTestsRun(params(family="a3-edge", expected_net="FasTrak"), executor=replay([])).execute()
    root = ET.fromstring(nccl_report.to_junit(nccl_report.build_report(res, "r")))
    case = root.find("testsuite").find("testcase")
    assert case.find("skipped") is not None and "no network baseline" in case.find("skipped").get("message")


def test_html_has_chart_with_baseline_and_node_table():
    report = nccl_report.build_report(pairwise_result(), "run<1>")
    html = nccl_report.to_html(report)
    # the busbw chart, then the pair matrix
    assert html.count("<svg") == 2 and "baseline 188.0" in html and "required 169.2" in html
    assert "<polyline" in html and "node0+node1" in html
    assert "run&lt;1&gt;" in html and "run<1>" not in html
    assert "Bad nodes: node2" in html
    for n in ("node0", "node1", "node2", "node3"):
        assert "<td>%s</td>" % n in html


def test_svg_without_data():
    assert "no data" in nccl_report.svg_chart("x", [("a", [])])


def test_svg_is_well_formed_and_scaled():
    svg = nccl_report.svg_chart("all_gather <a3-mega>", [("pair a+b", [(2 ** 23, 20.0), (2 ** 33, 188.4)])],
                                baseline=188.0, required=169.2)
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    ns = "{http://www.w3.org/2000/svg}"
    lines = root.findall(ns + "polyline")
    assert len(lines) == 1
    points = [tuple(map(float, p.split(","))) for p in lines[0].get("points").split()]
    # larger message -> further right and higher (smaller y)
    assert points[1][0] > points[0][0] and points[1][1] < points[0][1]


SVG = "{http://www.w3.org/2000/svg}"


def placed_pairwise_result():
    res = pairwise_result()
    res["topology"] = {"node0": {"cluster": "c", "block": "b2", "subblock": "s1", "host": "h0"},
                       "node1": {"cluster": "c", "block": "b1", "subblock": "s1", "host": "h1"},
                       "node2": {"cluster": "c", "block": "b1", "subblock": "s2", "host": "h2"},
                       "node3": {}}
    return res


def test_html_pair_matrix_section_names_the_slow_pairs():
    report = nccl_report.build_report(placed_pairwise_result(), "run1")
    html = nccl_report.to_html(report)
    start = html.index("<h2>Pair busbw matrix: all_gather</h2>")
    # up to the next section (the NCCL environment's, which names the network and plugins, or the nodes')
    section = html[start:html.index("<h2>", start + 1)]
    svg = section[section.index("<svg"):section.index("</svg>") + 6]
    root = ET.fromstring(svg)
    titled = [r for r in root.iter(SVG + "rect") if r.find(SVG + "title") is not None]
    red = [r for r in titled if r.get("fill") == pair_matrix.SLOW_COLOUR]
    assert red and all("node2 +" in r.find(SVG + "title").text or "+ node2" in r.find(SVG + "title").text
                       for r in red)
    rows = section[section.index("<table>"):].split("<tr>")[2:]
    assert len(rows) == 2 and all("node2" in row for row in rows)
    assert "<td>c/b1/s2, c/b2/s1</td>" in section and "<td>cluster</td>" in section


def test_json_keeps_the_topology_and_a_compact_matrix():
    doc = json.loads(nccl_report.to_json(nccl_report.build_report(placed_pairwise_result(), "run1")))
    assert doc["topology"]["node1"]["block"] == "b1"
    matrix = doc["pair_matrix"]
    assert matrix["nodes"] == ["node1", "node2", "node0", "node3"]
    assert [b["label"] for b in matrix["blocks"]] == ["b1", "b2", "unplaced"]
    assert [c["pair"] for c in matrix["collectives"]["all_gather"]["slow"]] == [
        c["pair"] for c in pair_matrix.slow_cells(doc, "all_gather")]


def test_no_pair_matrix_in_cluster_mode():
    res = nccl_runner.NcclTestsRun(params(hosts=nodes(2)), executor=replay([])).execute()
    report = nccl_report.build_report(res, "r")
    assert report["pair_matrix"] is None
    html = nccl_report.to_html(report)
    assert "Pair busbw matrix" not in html and html.count("<svg") == 1


def test_html_escapes_hostile_node_names_in_the_matrix():
    hostile = "<img src=x onerror=alert(1)>"
    res = {"mode": "pairwise", "nodes": [hostile, "n1"], "topology": {hostile: {"block": "<b>", "subblock": "&s"}},
           "collectives": [{"collective": "all_gather", "required_gbps": 169.2}],
           "pairwise": {"rounds": [[{"pair": [hostile, "n1"], "ok": False, "reasons": ["<why>"],
                                     "busbw_gbps": {"all_gather": 12.0}}]], "single_node": {}}}
    html = nccl_report.to_html(nccl_report.build_report(res, "r"))
    assert "Pair busbw matrix" in html
    assert hostile not in html and "<b>" not in html and "<why>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt; + n1" in html


def test_a_diagnosis_without_nccl_tests_leaves_out_the_empty_sections():
    findings = [{"host": "n1", "component": "nic", "subject": "eth2", "severity": "fail", "cause": "mtu 1460",
                 "repair": None}]
    html = nccl_report.to_html(nccl_report.build_report({"family": "a3-mega", "nodes": []}, "r", findings=findings,
                                                        hosts=["n0", "n1"], diagnosis={"verdict": "fail"}))
    assert "<h2>NCCL tests: not run</h2>" in html
    assert "<h2>Collectives</h2>" not in html and "<h2>Nodes</h2>" not in html and "<svg" not in html
    assert "1 failing, 0 warning, on 1 node(s); 1 node(s) clean." in html


def test_the_chart_leaves_out_sizes_no_log_axis_can_hold():
    svg = nccl_report.svg_chart("all_reduce", [("run", [(-8, 5.0), (0, 6.0), (8, 1.0), (16, 2.0)])])
    assert svg.count("<circle") == 2 and "-8B" not in svg


def test_the_chart_of_a_huge_bandwidth_has_no_nan_or_inf():
    svg = nccl_report.svg_chart("all_reduce", [("run", [(8, 1.7e308), (16, 1.0)])], baseline=1.0)
    assert svg.count("<circle") == 2
    assert "nan" not in svg.lower() and "inf" not in svg.lower()


def test_a_diagnosis_report_says_how_old_the_version_table_is():
    html = nccl_report.to_html(nccl_report.build_report(
        {"collectives": []}, "r1", findings=[], hosts=["n0"],
        diagnosis={"verdict": "pass", "version_table": {"newest_source": "2026-07", "age_days": 151}}))
    assert "newest source is from 2026-07 (151 days before this report)" in html


def test_the_report_shows_the_nccl_environment_as_nccl_used_it_with_secrets_masked():
    used = {"plugin": "GCP env plugin", "conflicts": [
        {"severity": "warn", "subject": "NCCL_BUFFSIZE", "cause": "the profile sets 4194304, NCCL used 8388608"}],
        "effective": {"NCCL_BUFFSIZE": {"value": "8388608", "passed": "4194304", "source": "environment plugin"},
                      # NCCL_ names are never secret, but a credential-shaped value is masked wherever it is
                      "NCCL_X": {"value": "ya29.A0ARrdaMsecretsecretsecretsecret", "passed": None,
                                 "source": "not passed"}}}
    report = nccl_report.build_report({"collectives": [], "nccl_env": used}, "r1")
    html = nccl_report.to_html(report)
    assert "Environment plugin: GCP env plugin" in html and "WARN NCCL_BUFFSIZE" in html
    assert "<td>NCCL_BUFFSIZE</td><td>8388608</td><td>4194304</td><td>environment plugin</td>" in html
    assert "secretsecret" not in html and "secretsecret" not in nccl_report.to_json(report)


def test_every_place_the_nccl_environment_is_written_is_masked_and_one_line():
    """Values and causes as an older or foreign result may carry them: the report masks them again."""
    value = {"value": "https://u:pw-value@h/", "passed": "ya29.passed-secret", "source": "profile"}
    effective = {"NCCL_X\nFAIL n1 forged": value}
    conflicts = [{"severity": "warn", "subject": "NCCL_X\nFAIL n1 forged",
                  "cause": "the profile sets https://u:pw-cause@h/\nFAIL n2 forged"}]
    used = {"plugin": "p token=plugin-secret", "effective": effective, "conflicts": conflicts}
    result = {"collectives": [{"collective": "all_gather", "status": "fail",
                               "reasons": ["Error: https://u:pw-reason@h/"]}],
              "env": {"NCCL_Y": "https://u:pw-env@h/", "NAME\nFAIL n3 forged": "v\nFAIL n4 forged"},
              "nccl_env": used,
              "runs": [{"collective": "all_gather", "command": ["mpirun"], "output_tail": "",
                        "errors": ["Error: https://u:pw-error@h/"], "nccl_env": used,
                        "verdict": {"status": "fail", "reasons": ["Error: https://u:pw-verdict@h/"]}}]}
    report = nccl_report.build_report(result, "r1")
    outputs = (nccl_report.to_json(report), nccl_report.to_html(report), nccl_report.to_junit(report))
    for output in outputs:
        for secret in ("plugin-secret", "pw-value", "passed-secret", "pw-cause", "pw-reason", "pw-env", "pw-error",
                       "pw-verdict"):
            assert secret not in output, secret
    html = outputs[1]
    for forged in ("\nFAIL n1", "\nFAIL n2", "\nFAIL n3", "\nFAIL n4"):
        assert forged not in html and forged not in json.dumps(report)


def test_what_isolation_took_is_in_every_report():
    report = nccl_report.build_report(pairwise_result(), "run1")
    root = ET.fromstring(nccl_report.to_junit(report))
    pairs = [s for s in root.findall("testsuite") if s.get("name") == "nccl_tests.pairs"][0]
    props = dict((p.get("name"), p.get("value")) for p in pairs.findall("properties/property"))
    assert props == {"isolation.nodes": "4", "isolation.rounds": "2", "isolation.runs": "4",
                     "isolation.extra_runs": "2", "isolation.log2_bound": "2", "isolation.ratio": "1.0"}
    html = nccl_report.to_html(report)
    assert ("Isolation took 2 extra run(s) beyond the first round against a log2 bound of 2 for 4 node(s) "
            "(ratio 1.00); 4 run(s) in 2 round(s) (screen 2, isolate 2).") in html
    assert "<h3>Round 1 (screen)</h3>" in html and "<h3>Round 2 (isolate)</h3>" in html


def test_a_result_without_the_isolation_figure_reports_none():
    result = pairwise_result()
    del result["pairwise"]["isolation"]
    report = nccl_report.build_report(result, "run1")
    assert "isolation." not in nccl_report.to_junit(report)
    assert "Isolation took" not in nccl_report.to_html(report)
    result["pairwise"]["isolation"] = {"nodes": "4", "runs": None}
    assert nccl_report.isolation_line(result["pairwise"]["isolation"]) == ""
