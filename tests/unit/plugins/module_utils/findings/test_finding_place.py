# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A finding's place (cluster, block, sub-block, physical host, NVLink domain): one table, and every output
that follows it - the finding, the diagnosis, the reports, the node agent's metric labels, the remediation audit."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
from xml.etree import ElementTree as ET

import pytest
from jinja2 import Undefined
from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.filter.diagnose import FilterModule
from ansible_collections.gpudirect.gcp.plugins.module_utils.common import prom_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import findings_report
from ansible_collections.gpudirect.gcp.plugins.module_utils.health import health_metrics, node_health
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_report
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import diagnose, findings
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import guard
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.health.test_health_metrics import promtool_check
from ansible_collections.gpudirect.gcp.tests.unit.plugins.plugin_utils.diagnose.test_diagnose import REPAIRS, cluster

DIAGNOSE = FilterModule().filters()
PLACE = {"cluster": "c0", "block": "b1", "subblock": "s2", "host": "h3"}
# the gce_topology of an A4X node, as the inventory sets it (keys as Google's docs spell them)
A4X_TOPOLOGY = {"cluster": "c0", "block": "b1", "subBlock": "s2", "host": "h3"}


def placed(item, place=None, host="n1"):
    return dict(item, host=host, repair=None, place=fd.place(place or PLACE))


# --- the finding

def test_a_finding_holds_its_place_with_only_the_parts_set_in_table_order():
    item = fd.make("gpu", "GPU 3", "fail", "Xid 79", place={"host": "h3", "block": "b1", "subblock": ""})
    assert item["place"] == {"block": "b1", "host": "h3"}
    assert list(item["place"]) == ["block", "host"]
    assert fd.make("gpu", "GPU 3", "fail", "Xid 79", place={})["place"] is None
    assert "place" not in fd.make("gpu", "GPU 3", "fail", "Xid 79")


@pytest.mark.parametrize("raw, word", [
    ("b1/s2", "place must be a mapping of cluster, block, subblock, host, nvlink_domain, not str"),
    ({"rack": "r1"}, "unknown place part(s) rack"),
    ({"block": ["b1"]}, "place part block must be text, not list"),
    ({"block": True}, "place part block must be text, not bool")])
def test_a_place_of_another_shape_is_refused_naming_the_part(raw, word):
    with pytest.raises(ValueError, match=re.escape(word)):
        fd.make("gpu", "GPU 3", "fail", "Xid 79", place=raw)


def test_a_place_part_is_one_bounded_line():
    got = fd.place({"block": "b1\n# forged line\x00", "host": "h" * 1000, "subblock": 7})
    assert got["block"] == "b1 # forged line" and got["subblock"] == "7"
    assert len(got["host"]) == fd.MAX_PLACE_CHARS and got["host"].endswith("...")


# --- the table: a throwaway part reaches everything that follows it

def test_a_new_place_part_reaches_every_output(monkeypatch, tmp_path):
    """A throwaway part: adding its row to PLACE_PARTS is all the finding, the diagnosis, the reports, the
    metric labels and the audit need."""
    monkeypatch.setattr(fd, "PLACE_PARTS", fd.PLACE_PARTS + ({"part": "rack", "words": "rack", "label": "rack"},))
    where = dict(PLACE, rack="r9")
    item = placed(fd.make("gpu", "GPU 1", "fail", "Xid 79"), where)
    assert item["place"]["rack"] == "r9"

    assert diagnose.placed([findings.finding("n1", "gpu", "GPU 1", "fail", "x")], {"n1": where})[0]["place"] == \
        dict(PLACE, rack="r9")
    assert diagnose.line(item).endswith(", rack r9]")

    clean = findings_report.clean([item])
    assert clean[0]["place"]["rack"] == "r9"
    report = nccl_report.build_report({}, "r1", findings=[item], hosts=["n1"], diagnosis={"verdict": "fail"})
    assert json.loads(json.dumps(report))["findings"][0]["place"]["rack"] == "r9"
    suite = findings_report.junit_suite(ET.Element("testsuites"), clean, ["n1"])
    props = dict((p.get("name"), p.get("value")) for p in suite.find("testcase").iter("property"))
    assert props["place.rack"] == "r9"
    assert "rack r9" in findings_report.html_section(clean, ["n1"])

    samples = health_metrics.samples({"findings": [node_health.finding("gpu", "GPU 1", "fail", "x")]}, 0.0,
                                     place=where)
    assert ("rack", "r9") in samples["gpudirect_node_health_info"][0][0]
    assert ("rack", "r9") in samples["gpudirect_node_health_finding"][0][0]

    audit = tmp_path / "audit.jsonl"
    guard.apply(_guard_args(tmp_path, places={"a3m-1": where}), False, 100000.0)
    assert json.loads(audit.read_text().splitlines()[0])["place"]["rack"] == "r9"


def test_the_metric_labels_are_the_bounded_parts_only():
    labels = [row["label"] for row in fd.PLACE_PARTS if row["label"]]
    assert labels == ["block", "subblock", "physical_host"]
    # none clashes with a label the agent's series already have
    taken = {"family", "standins", "component", "subject", "severity", "gpu", "bus", "xid", "device", "port", "nic",
             "interface"}
    assert not taken & set(labels)
    assert fd.MAX_PLACE_CHARS < prom_text.MAX_LABEL_CHARS


# --- the diagnosis

def test_every_finding_of_a_node_carries_its_place_and_a_cluster_finding_none():
    hosts, ev = cluster(4)
    ev["n1"]["rxdm"].update(ready=False, reason="not ready")
    ev["n2"]["reach"] = {"ok": False, "msg": "timed out"}
    places = {"n1": fd.place(PLACE), "n2": fd.place(dict(PLACE, host="h4"))}
    found = diagnose.node_findings(ev, hosts, REPAIRS, places=places)
    assert found and all(f["place"] == places[f["host"]] for f in found)
    assert {f["host"] for f in found} == {"n1", "n2"}
    everything = diagnose.all_findings(found, {}, [], hosts, REPAIRS, not_run="not run in check mode",
                                       places=places)
    cluster_items = [f for f in everything if f["host"] is None]
    assert cluster_items and all(not f.get("place") for f in cluster_items)
    # without places a finding has none: the place is what the caller gives, once per node
    assert all("place" not in f for f in diagnose.node_findings(ev, hosts, REPAIRS))


def test_the_places_filter_reads_gce_topology_and_the_nvlink_domain():
    got = DIAGNOSE["_diagnose_places"]({"x0": A4X_TOPOLOGY, "m0": A4X_TOPOLOGY, "none": None, "bare": {}},
                                       {"x0": "a4x", "m0": "a3-mega", "none": "a4x"})
    assert got["x0"] == dict(PLACE, nvlink_domain="b1/s2")
    assert got["m0"] == PLACE
    assert got["none"] is None and got["bare"] is None
    with pytest.raises(AnsibleFilterError) as err:
        DIAGNOSE["_diagnose_places"]({"x0": "/b1/s2/h3"})
    assert str(err.value) == "_diagnose_places: x0: gce_topology is not a mapping (str)"


def test_the_host_places_filter_reads_each_hosts_variables_and_says_the_same():
    hostvars = {"x0": {"gce_topology": A4X_TOPOLOGY, "gpu_family": "a4x"}, "m0": {"gce_topology": A4X_TOPOLOGY},
                "bare": {"gpu_family": "a4x"}}
    got = DIAGNOSE["_diagnose_host_places"](["x0", "m0", "bare", "gone"], hostvars)
    assert got == DIAGNOSE["_diagnose_places"]({"x0": A4X_TOPOLOGY, "m0": A4X_TOPOLOGY, "bare": None, "gone": None},
                                               {"x0": "a4x", "bare": "a4x"})
    assert got["x0"] == dict(PLACE, nvlink_domain="b1/s2") and got["m0"] == PLACE and got["gone"] is None
    for hosts, given, why in (("x0", hostvars, "expects a list of hosts, got str"),
                              (["x0"], ["x0"], "expects hostvars, got list")):
        with pytest.raises(AnsibleFilterError) as err:
            DIAGNOSE["_diagnose_host_places"](hosts, given)
        assert str(err.value) == "_diagnose_host_places: " + why
    unknown = Undefined(name="_hosts")
    assert DIAGNOSE["_diagnose_host_places"](unknown, hostvars) is unknown
    assert DIAGNOSE["_diagnose_host_places"](["x0"], unknown) is unknown
    with pytest.raises(AnsibleFilterError) as err:
        DIAGNOSE["_diagnose_host_places"](["x0"], {"x0": {"gce_topology": "/b1/s2/h3"}})
    assert str(err.value) == "_diagnose_places: x0: gce_topology is not a mapping (str)"


def test_the_findings_filters_put_the_place_on_every_node_finding():
    hosts, ev = cluster(2)
    ev["n0"]["rxdm"].update(ready=False, reason="not ready")
    places = DIAGNOSE["_diagnose_places"]({"n0": A4X_TOPOLOGY, "n1": A4X_TOPOLOGY}, {"n0": "a4x", "n1": "a4x"})
    node = DIAGNOSE["_diagnose_node_findings"](ev, hosts, places=places)
    assert node and all(f["place"]["nvlink_domain"] == "b1/s2" for f in node)
    late = DIAGNOSE["_diagnose_busy"]({"n1": {"state": "busy", "reasons": ["Slurm node n1 is mixed"]}}, ["n1"])
    out = DIAGNOSE["_diagnose_add_fabric"](node, {}, ["n1"], hosts, late_busy=late, places=places)
    assert [f["place"]["host"] for f in out if f["host"] == "n1"] == ["h3"]
    with pytest.raises(AnsibleFilterError) as err:
        DIAGNOSE["_diagnose_add_fabric"](node, {}, [], hosts, places={"n0": {"rack": "r1"}})
    assert str(err.value).startswith("_diagnose_add_fabric: places: n0: unknown place part(s) rack")


def test_the_play_line_says_where_the_node_is():
    item = placed(fd.make("gpu", "GPU 1", "fail", "Xid 79"))
    assert diagnose.line(item) == ("FAIL n1 gpu GPU 1: Xid 79 [cluster c0, block b1, sub-block s2, physical host h3]")
    assert diagnose.line(dict(item, place=None)) == "FAIL n1 gpu GPU 1: Xid 79"


# --- the reports

def test_the_json_report_carries_the_place_and_drops_what_is_no_place():
    items = [placed(fd.make("gpu", "GPU 1", "fail", "x")), dict(placed(fd.make("nic", "eth1", "warn", "y")),
                                                                place="b1/s2")]
    report = nccl_report.build_report({}, "r1", findings=items, hosts=["n1"], diagnosis={"verdict": "fail"})
    assert [f.get("place", "none") for f in report["findings"]] == [PLACE, "none"]


def test_junit_gives_a_node_its_place_as_properties_and_keeps_its_names():
    items = findings_report.clean([placed(fd.make("gpu", "GPU 1", "fail", "x")),
                                   dict(fd.make("fabric", "all_reduce", "fail", "slow"), host=None, repair=None)])
    suite = findings_report.junit_suite(ET.Element("testsuites"), items, ["n0", "n1"])
    cases = suite.findall("testcase")
    mine = [c for c in cases if c.get("classname") == "diagnose.n1"]
    assert [c.get("name") for c in mine][:2] == ["nic", "rxdm"]
    for case in mine:
        # properties come first, as the JUnit schema orders a testcase's children
        assert case[0].tag == "properties"
        assert [(p.get("name"), p.get("value")) for p in case[0]] == [
            ("place.cluster", "c0"), ("place.block", "b1"), ("place.subblock", "s2"), ("place.host", "h3")]
    assert all(c.find("properties") is None for c in cases if c.get("classname") != "diagnose.n1")


def test_the_html_row_shows_the_place_escaped():
    item = placed(fd.make("gpu", "GPU 1", "fail", "x"), dict(PLACE, block="<b>b1</b>"))
    page = findings_report.html_section(findings_report.clean([item]), ["n1"])
    assert "<th>place</th>" in page
    assert "<td>cluster c0, block &lt;b&gt;b1&lt;/b&gt;, sub-block s2, physical host h3</td></tr>" in page
    assert "<b>b1" not in page


# --- the node agent's metrics

def test_the_agents_series_carry_the_place_and_stay_valid():
    result = {"family": "a4x", "findings": [node_health.finding("gpu", "GPU 1", "fail", "x")]}
    text = health_metrics.render(result, 0.0, place=dict(PLACE, nvlink_domain="b1/s2", host='h"3\n'))
    assert promtool_check(text)[0] == 0
    assert ('gpudirect_node_health_info{family="a4x",standins="false",block="b1",subblock="s2",'
            'physical_host="h\\"3"} 1') in text
    assert ('gpudirect_node_health_finding{component="gpu",subject="GPU 1",severity="fail",block="b1",'
            'subblock="s2",physical_host="h\\"3"} 1') in text
    # the cluster and the NVLink domain are no labels
    assert "c0" not in text and "nvlink" not in text
    # without a place the series are as before
    assert 'gpudirect_node_health_info{family="a4x",standins="false"} 1' in health_metrics.render(result, 0.0)
    with pytest.raises(ValueError, match="unknown place part"):
        health_metrics.render(result, 0.0, place={"rack": "r1"})


def test_the_agent_labels_its_series_with_the_place_the_role_wrote(tmp_path):
    from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.nic.test_nic_sysfs import FakeSys
    from ansible_collections.gpudirect.gcp.tests.unit.roles import test_node_health_agent as agent
    FakeSys(tmp_path).nic("eth1", "42:01:0a:01:00:02", mtu=8244)
    rc, lines, err = agent.agent(tmp_path, dict(agent.config(), place=PLACE))
    assert rc == 1, (lines, err)
    assert 'gpudirect_node_health_info{family="a3-mega",standins="true",block="b1",subblock="s2",' \
        'physical_host="h3"} 1' in agent.metrics(tmp_path)
    rc, lines, err = agent.agent(tmp_path, dict(agent.config(), place={"rack": "r1"}))
    assert (rc, lines, err) == (2, ["gpudirect-health: --config %s: unknown place part(s) rack (the parts: cluster, "
                                    "block, subblock, host, nvlink_domain)" % (tmp_path / "health.json")], "")


# --- the remediation audit

def _guard_args(tmp_path, **over):
    from ansible_collections.gpudirect.gcp.plugins.action import remediation_guard as action
    args = dict((name, spec.get("default")) for name, spec in action.ARGUMENT_SPEC.items())
    labels = {"alertname": "GPUDirectNodeRemediable", "instance": "a3m-1:9100", "component": "gpu", "subject": "GPU 1"}
    args.update(hosts=["a3m-%d" % n for n in range(4)], state_file=str(tmp_path / "state.json"),
                audit_log=str(tmp_path / "audit.jsonl"), max_share=1.0, dry_run=False,
                alerts=[{"status": "firing", "labels": labels, "annotations": {}}])
    args.update(over)
    return args


def test_the_audit_line_of_a_node_carries_its_place_when_given(tmp_path):
    lines, out = guard.apply(_guard_args(tmp_path, places={"a3m-1": PLACE, "a3m-2": None}), False, 100000.0)
    logged = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert logged[0]["decision"] == "act" and logged[0]["place"] == PLACE
    assert out["decisions"][0]["place"] == PLACE and lines[0]["place"] == PLACE
    run = out["act"][0]["run"]
    guard.apply(_guard_args(tmp_path, alerts=[], outcome={"run": run, "outcome": "cleared", "rung": "rerun"},
                            places={"a3m-1": PLACE}), False, 100100.0)
    logged = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert logged[-1]["decision"] == "outcome" and logged[-1]["place"] == PLACE


def test_the_audit_has_no_place_without_one_and_refuses_a_bad_one(tmp_path):
    guard.apply(_guard_args(tmp_path), False, 100000.0)
    assert "place" not in json.loads((tmp_path / "audit.jsonl").read_text().splitlines()[0])
    with pytest.raises(guard.GuardError) as err:
        guard.apply(_guard_args(tmp_path, places={"a3m-1": "b1/s2"}), False, 100000.0)
    assert str(err.value).startswith("places: a3m-1: place must be a mapping")
