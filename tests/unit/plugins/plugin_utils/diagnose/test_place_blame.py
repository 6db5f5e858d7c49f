# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Blame by placement: failing nodes that cluster in one sub-block or block name that place, with its counts;
spread failures and nodes without a known place are never blamed on a place."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
from xml.etree import ElementTree as ET

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.filter.diagnose import FilterModule
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_report
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import place_blame
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import finding

DIAGNOSE = FilterModule().filters()


def layout(blocks=2, subs=2, per_sub=4):
    """{host: place}: host b<b>s<s>n<n> in cluster c, block b<b>, sub-block s<s> (names repeat across blocks)."""
    places = {}
    for b in range(blocks):
        for s in range(subs):
            for n in range(per_sub):
                places["b%ds%dn%d" % (b, s, n)] = {"cluster": "c", "block": "b%d" % b, "subblock": "s%d" % s,
                                                   "host": "h%d%d%d" % (b, s, n)}
    return places


def blamed(failed, places, **kwargs):
    return [(b["level"], b["where"], b["failing"], b["total"])
            for b in place_blame.blame(failed, sorted(places), places, **kwargs)]


def test_failures_clustered_in_one_sub_block_name_it_with_its_counts():
    places = layout()
    out = place_blame.blame(["b1s0n0", "b1s0n1", "b1s0n3"], sorted(places), places)
    assert [(b["level"], b["suspect"], b["failing"], b["total"], b["share"]) for b in out] == [
        ("subblock", "sub-block", 3, 4, 0.75)]
    assert out[0]["place"] == {"cluster": "c", "block": "b1", "subblock": "s0"}
    assert out[0]["hosts"] == ["b1s0n0", "b1s0n1", "b1s0n3"]
    assert out[0]["line"] == ("suspect sub-block: cluster c, block b1, sub-block s0 - 3 of 4 nodes fail while the "
                              "other sub-blocks are healthy (b1s0n0, b1s0n1, b1s0n3)")
    # a sub-block of the same name in another block is another place
    assert blamed(["b0s0n0", "b1s0n1"], places) == []


def test_a_line_names_a_few_failing_nodes_and_counts_the_rest():
    places = layout(2, 1, 12)
    failed = ["b0s0n%d" % n for n in range(10)]
    out = place_blame.blame(failed, sorted(places), places)
    assert [(b["level"], b["failing"], b["total"]) for b in out] == [("subblock", 10, 12)]
    assert out[0]["line"].endswith("(b0s0n0, b0s0n1, b0s0n2, b0s0n3, b0s0n4, b0s0n5, b0s0n6, b0s0n7 and 2 more)")
    assert len(out[0]["hosts"]) == 10


def test_failures_spread_over_the_cluster_blame_no_place():
    places = layout()
    # one failing node a sub-block: none reaches two
    assert blamed(["b0s0n0", "b0s1n1", "b1s0n2", "b1s1n3"], places) == []
    # two sub-blocks of two blocks reach the counts alike: spread, and neither block holds half its nodes
    assert blamed(["b0s0n0", "b0s0n1", "b1s1n0", "b1s1n1"], places) == []


def test_two_failing_sub_blocks_of_one_block_are_its_switch():
    places = layout()
    failed = ["b0s0n0", "b0s0n1", "b0s0n2", "b0s1n0", "b0s1n1", "b0s1n2"]
    assert blamed(failed, places) == [("block", "cluster c, block b0", 6, 8)]
    assert place_blame.blame(failed, sorted(places), places)[0]["suspect"] == "block switch"


def test_a_block_is_not_blamed_again_for_its_one_bad_sub_block():
    places = layout()
    # b0 has 5 of its 8 nodes failing, 4 of them the blamed sub-block's: the stray one does not blame the block
    failed = ["b0s0n0", "b0s0n1", "b0s0n2", "b0s0n3", "b0s1n0"]
    assert blamed(failed, places) == [("subblock", "cluster c, block b0, sub-block s0", 4, 4)]


def test_a_stray_bad_node_elsewhere_does_not_hide_the_place():
    places = layout()
    assert blamed(["b0s1n0", "b0s1n1", "b0s1n2", "b1s0n3"], places) == [
        ("subblock", "cluster c, block b0, sub-block s1", 3, 4)]


@pytest.mark.parametrize("share,want", [(0.5, 1), (0.75, 1), (0.8, 0), (1.0, 0)])
def test_the_share_is_the_runs_setting(share, want):
    places = layout()
    assert len(blamed(["b1s1n0", "b1s1n1", "b1s1n2"], places, share=share)) == want


def test_one_failing_node_never_blames_its_place():
    # a sub-block of one node: all of it fails, but one node is one node
    places = dict(layout(1, 2, 2), lone={"cluster": "c", "block": "b0", "subblock": "s9"})
    assert blamed(["lone"], places) == []


def test_one_place_alone_compares_with_nothing():
    places = layout(1, 1, 4)
    assert blamed(sorted(places), places) == []


def test_nodes_without_a_known_place_are_never_blamed_on_a_place():
    places = layout()
    places.update(x0=None, x1={}, x2={"cluster": "c"})
    # every unplaced node fails: no place holds them
    assert blamed(["x0", "x1", "x2"], places) == []
    # a node that knows its block but not its sub-block counts at the block level only
    places.update(y0={"cluster": "c", "block": "b1"}, y1={"cluster": "c", "block": "b1"})
    failed = ["y0", "y1", "b1s0n0", "b1s1n0", "b1s1n1", "b1s0n1"]
    out = place_blame.blame(failed + ["x0"], sorted(places), places)
    assert [(b["level"], b["failing"], b["total"]) for b in out] == [("block", 6, 10)]
    assert "x0" not in out[0]["hosts"]
    # a failing node that is not among the hosts diagnosed counts nowhere
    assert blamed(["b0s0n0", "b0s0n1", "b0s0n2", "ghost"], places, share=1.0) == []


@pytest.mark.parametrize("bad", ["b0", ["b0"], {"rack": "r1"}, {"block": ["b0"]}, {"block": True}, 7])
def test_a_record_that_cannot_be_read_costs_only_its_node(bad):
    places = layout()
    places["b1s1n3"] = bad
    assert blamed(["b1s1n0", "b1s1n1", "b1s1n2", "b1s1n3"], places) == [
        ("subblock", "cluster c, block b1, sub-block s1", 3, 3)]
    assert blamed(["b1s1n0"], "not a mapping") == []


def test_a_level_row_that_is_not_a_place_part_fails_at_once():
    with pytest.raises(ValueError, match="place blame level 'rack'"):
        place_blame.check_levels([{"level": "rack", "parts": ("rack",), "suspect": "rack", "min_failing": 2,
                                   "share": None}])
    with pytest.raises(ValueError, match="ending in the level"):
        place_blame.check_levels([{"level": "block", "parts": ("block", "subblock"), "suspect": "x",
                                   "min_failing": 2, "share": None}])


def test_a_row_may_set_its_own_share():
    places = layout()
    rows = tuple(dict(row, share=1.0) if row["level"] == "subblock" else row for row in place_blame.LEVELS)
    failed = ["b1s1n0", "b1s1n1", "b1s1n2"]
    assert blamed(failed, places, share=0.5, levels=rows) == []
    assert blamed(failed + ["b1s1n3"], places, share=0.5, levels=rows)[0][2:] == (4, 4)


# --- the summary and the reports --------------------------------------------------------------------------------

def failing(hosts):
    return [finding(h, "gpu", "GPU 0", "fail", "Xid 79", None) for h in hosts]


def summary_and_report(failed, places, **kwargs):
    summary = DIAGNOSE["_diagnose_summary"](failing(failed), sorted(places), places=places, **kwargs)
    report = nccl_report.build_report({}, "r1", findings=failing(failed), hosts=sorted(places), diagnosis=summary)
    return summary, report


def junit_props(report, suite="diagnose"):
    root = ET.fromstring(nccl_report.to_junit(report).split("\n", 1)[1])
    node = [s for s in root.findall("testsuite") if s.get("name") == suite][0]
    return [(p.get("name"), p.get("value")) for p in node.findall("properties/property")]


def test_the_summary_and_every_report_name_the_place():
    places = layout()
    summary, report = summary_and_report(["b0s1n0", "b0s1n1", "b0s1n2", "b0s1n3"], places)
    line = summary["place_blame"][0]["line"]
    assert line.startswith("suspect sub-block: cluster c, block b0, sub-block s1 - 4 of 4 nodes fail")
    doc = json.loads(nccl_report.to_json(report))
    assert [(b["level"], b["failing"], b["total"], b["share"]) for b in doc["place_blame"]] == [
        ("subblock", 4, 4, 1.0)]
    assert doc["diagnosis"]["place_blame"][0]["hosts"] == ["b0s1n0", "b0s1n1", "b0s1n2", "b0s1n3"]
    assert junit_props(report) == [("place_blame", line)]
    html = nccl_report.to_html(report)
    assert "Suspect sub-block: cluster c, block b0, sub-block s1 - 4 of 4 nodes fail" in html
    assert html.index("Suspect sub-block") < html.index("<h2>Findings</h2>")


def test_spread_failures_reach_no_report():
    places = layout()
    summary, report = summary_and_report(["b0s0n0", "b1s1n1"], places)
    assert summary["place_blame"] == [] and report["place_blame"] == []
    assert junit_props(report) == []
    assert "uspect" not in nccl_report.to_html(report)


def test_the_junit_properties_of_a_stand_in_diagnosis_stay_one_element():
    places = layout()
    summary, report = summary_and_report(["b0s1n0", "b0s1n1", "b0s1n2"], places)
    report["from_standins"] = True
    root = ET.fromstring(nccl_report.to_junit(report).split("\n", 1)[1])
    suite = root.find("testsuite")
    assert len(suite.findall("properties")) == 1
    assert [p.get("name") for p in suite.findall("properties/property")] == ["from_standins", "place_blame"]


def test_a_throwaway_level_row_reaches_the_summary_and_every_report(monkeypatch):
    row = {"level": "nvlink_domain", "parts": ("cluster", "nvlink_domain"), "suspect": "NVLink domain",
           "min_failing": 2, "share": None}
    monkeypatch.setattr(place_blame, "LEVELS", (row,) + place_blame.LEVELS)
    places = layout(1, 4, 2)
    for host, place in places.items():
        # two sub-blocks a domain: d0 holds s0 and s1
        place["nvlink_domain"] = "d%d" % (int(place["subblock"][1]) // 2)
    summary, report = summary_and_report(["b0s0n0", "b0s1n1"], places)
    assert [(b["level"], b["where"], b["failing"], b["total"]) for b in summary["place_blame"]] == [
        ("nvlink_domain", "cluster c, NVLink domain d0", 2, 4)]
    line = summary["place_blame"][0]["line"]
    assert "while the other NVLink domains are healthy" in line
    assert json.loads(nccl_report.to_json(report))["place_blame"][0]["suspect"] == "NVLink domain"
    assert junit_props(report) == [("place_blame", line)]
    assert "Suspect NVLink domain: cluster c, NVLink domain d0" in nccl_report.to_html(report)


def test_the_summary_filter_refuses_a_bad_share_or_places_in_one_line():
    for share in (0, 1.5, -0.1, "half", True, [0.5]):
        with pytest.raises(AnsibleFilterError) as err:
            DIAGNOSE["_diagnose_summary"]([], ["n0"], place_blame_share=share)
        assert str(err.value).startswith("_diagnose_summary: place_blame_share must be a fraction above 0 and at most 1")
        assert "\n" not in str(err.value)
    with pytest.raises(AnsibleFilterError, match="^_diagnose_summary: places must be a mapping of host to place, got list"):
        DIAGNOSE["_diagnose_summary"]([], ["n0"], places=["n0"])
    # a share given as text, as a role variable may come
    places = layout()
    summary = DIAGNOSE["_diagnose_summary"](failing(["b0s0n0", "b0s0n1"]), sorted(places), places=places,
                                            place_blame_share="0.5")
    assert [b["failing"] for b in summary["place_blame"]] == [2]
    assert DIAGNOSE["_diagnose_summary"](failing(["b0s0n0", "b0s0n1"]), sorted(places))["place_blame"] == []


def test_a_report_keeps_only_blames_of_the_right_shape():
    good = {"level": "subblock", "suspect": "sub-block", "where": "block b0,\nsub-block s1", "failing": 2,
            "total": 4, "share": 0.5, "place": {"block": "b0"}, "hosts": ["n0", "n1"], "line": "suspect\x1b x"}
    diagnosis = {"verdict": "fail", "place_blame": [good, "x", {"failing": "2", "total": 4}, dict(good, total=None)]}
    report = nccl_report.build_report({}, "r1", findings=[], hosts=["n0"], diagnosis=diagnosis)
    assert len(report["place_blame"]) == 1
    shown = report["place_blame"][0]
    assert "\n" not in shown["where"] and "\x1b" not in shown["line"]
    assert nccl_report.place_blames({"place_blame": "x"}) == [] and nccl_report.place_blames(None) == []
