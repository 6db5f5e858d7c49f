# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An alert finds its node - by inventory name, by address (ansible_host), by the labels configured - and is
decided and logged under the inventory name; one decision per node and call; an alert about no node of the
inventory, or an empty node set, is logged and returned for the run to fail on, and starts nothing."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpudirect.gcp.plugins.action import remediation_guard as action
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import guard

HOSTS = ["a3m-%d" % n for n in range(10)]
ADDRESSES = dict(("a3m-%d" % n, "10.0.0.%d" % (n + 10)) for n in range(10))
NOW = 100000.0


def alert(instance, status="firing", severity=None, name="GPUDirectNodeRemediable", subject="GPU 1", **labels):
    labels.update(alertname=name, component="gpu", subject=subject)
    if instance is not None:
        labels["instance"] = instance
    if severity:
        labels["severity"] = severity
    return {"status": status, "labels": labels, "annotations": {}}


@pytest.fixture
def files(tmp_path):
    base = tmp_path / "remediate"
    base.mkdir(mode=0o700)
    return base


def apply(files, check=False, **over):
    args = dict((name, spec.get("default")) for name, spec in action.ARGUMENT_SPEC.items())
    args.update(hosts=HOSTS, addresses=ADDRESSES, state_file=str(files / "state.json"),
                audit_log=str(files / "audit.jsonl"), max_share=1.0, max_per_hour=10, dry_run=False)
    args.update(over)
    return guard.apply(args, check, NOW)


def logged(files):
    path = files / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def runs(files):
    path = files / "state.json"
    return json.loads(path.read_text())["runs"] if path.exists() and path.read_text() else []


@pytest.mark.parametrize("instance", ["10.0.0.15:9100", "10.0.0.15", "a3m-5:9100", "a3m-5"])
def test_prometheus_scrape_address_or_inventory_name_finds_the_node(files, instance):
    lines, out = apply(files, alerts=[alert(instance)])
    assert [(x["decision"], x["node"]) for x in lines] == [("act", "a3m-5")]
    assert [a["node"] for a in out["act"]] == ["a3m-5"] and [r["node"] for r in runs(files)] == ["a3m-5"]
    assert logged(files)[0]["node"] == "a3m-5"
    assert logged(files)[0].get("named") == (None if instance.startswith("a3m") else "10.0.0.15")
    assert out["unplaced"] == []


def test_an_ansible_host_with_a_port_and_ipv6_addresses_are_matched_by_host(files):
    addresses = {"a3m-1": "10.0.0.1:2222", "a3m-2": "fd00::2"}
    lines, _out = apply(files, addresses=addresses, alerts=[alert("10.0.0.1:9100"), alert("[fd00::2]:9100")])
    assert [(x["decision"], x["node"]) for x in lines] == [("act", "a3m-1"), ("act", "a3m-2")]


def test_the_configured_labels_are_tried_in_order(files):
    alerts = [alert("10.0.0.13:9100", node="a3m-7"), alert("10.0.0.14:9100")]
    lines, _out = apply(files, node_label=["node", "instance"], alerts=alerts)
    assert [x["node"] for x in lines] == ["a3m-7", "a3m-4"]
    # an older setting, one label as a string, still names one label
    lines, _out = apply(files, node_label="host", alerts=[alert(None, host="a3m-8:9100")])
    assert [x["node"] for x in lines] == ["a3m-8"]


def test_an_address_shared_by_two_nodes_names_neither(files):
    addresses = dict(ADDRESSES, **{"a3m-2": "10.0.0.11"})
    lines, out = apply(files, addresses=addresses, alerts=[alert("10.0.0.11:9100")])
    assert lines[0]["decision"] == "ignored" and lines[0]["reason"] == \
        "10.0.0.11 is the address of 2 nodes (a3m-1, a3m-2); name the node"
    assert out["unplaced"] == ["10.0.0.11"] and runs(files) == []


def test_alerts_about_one_node_in_one_call_are_one_decision_about_the_most_severe(files):
    lines, out = apply(files, alerts=[alert("10.0.0.13:9100", severity="warning", subject="GPU 1"),
                                      alert("a3m-2:9100"),
                                      alert("a3m-3", severity="critical", subject="GPU 5", name="GPUDirectXid"),
                                      alert("10.0.0.13:9100", subject="GPU 6")])
    assert [(x["node"], x["decision"]) for x in lines] == [("a3m-3", "act"), ("a3m-2", "act")]
    assert lines[0]["alert"] == "GPUDirectXid" and lines[0]["finding"] == "gpu GPU 5"
    assert lines[0]["also"] == [{"alert": "GPUDirectNodeRemediable", "finding": "gpu GPU 1"},
                                {"alert": "GPUDirectNodeRemediable", "finding": "gpu GPU 6"}]
    assert [r["node"] for r in runs(files)] == ["a3m-3", "a3m-2"] and len(out["act"]) == 2
    assert [x["node"] for x in logged(files)] == ["a3m-3", "a3m-2"]


def test_resolved_alerts_are_each_logged_and_change_nothing(files):
    lines, out = apply(files, alerts=[alert("a3m-1", status="resolved"), alert("a3m-1", status="resolved"),
                                      alert("10.9.9.9:9100", status="resolved")])
    assert [x["decision"] for x in lines] == ["ignored"] * 3 and out["unplaced"] == [] and runs(files) == []


def test_an_alert_about_no_node_of_the_inventory_is_logged_returned_and_starts_nothing(files):
    lines, out = apply(files, alerts=[alert("a3m-1:9100"), alert("10.9.9.9:9100"), alert(None, name="NoNode")])
    assert [(x["node"], x["decision"]) for x in lines] == [
        ("a3m-1", "held"), ("10.9.9.9", "ignored"), (None, "ignored")]
    assert lines[0]["reason"] == ("held: the run fails before any node is touched, since the alerts also name what "
                                  "is no node of this inventory (10.9.9.9, an alert that names no node (NoNode)); "
                                  "nothing starts")
    assert lines[1]["reason"] == "10.9.9.9 is not a node of this inventory"
    assert out["unplaced"] == ["10.9.9.9", "an alert that names no node (NoNode)"] and out["act"] == []
    assert [x["decision"] for x in logged(files)] == ["held", "ignored", "ignored"] and runs(files) == []
    # a dry run starts nothing anyway: it decides as usual
    lines, out = apply(files, dry_run=True, alerts=[alert("a3m-1:9100"), alert("10.9.9.9:9100")])
    assert [x["decision"] for x in lines] == ["dry_run", "ignored"] and out["unplaced"] == ["10.9.9.9"]


def test_an_empty_node_set_logs_every_alert_and_starts_nothing(files):
    lines, out = apply(files, hosts=[], addresses={}, alerts=[alert("a3m-1:9100")])
    assert [x["decision"] for x in lines] == ["ignored"] and out["unplaced"] == ["a3m-1"]
    assert [x["decision"] for x in logged(files)] == ["ignored"] and runs(files) == []
    _lines, out = apply(files, hosts=[], addresses={}, alerts=[])
    assert out["unplaced"] == [] and out["act"] == []
