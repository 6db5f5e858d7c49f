# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The remediation guard: caps, escalation, the off switch, dry run, resolved alerts, the audit."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import guard

HOSTS = ["a3m-%d" % n for n in range(20)]
SETTINGS = {"enabled": True, "dry_run": False, "max_per_hour": 3, "max_share": 0.1, "escalate_window_s": 21600,
            "allow_report_host": False, "node_label": "instance"}


def alert(node, status="firing", rung=None, name="GPUDirectNodeRemediable"):
    labels = {"alertname": name, "instance": "%s:9100" % node, "component": "gpu", "subject": "GPU 1"}
    if rung:
        labels["rung"] = rung
    return {"status": status, "labels": labels, "annotations": {}}


def judge(now=10000.0, state=None, **over):
    return guard.Guard(state or {}, dict(SETTINGS, **over), now)


def test_a_firing_alert_on_a_node_acts_at_the_alerts_rung_and_names_the_node_without_its_port():
    decision = judge().decide(alert("a3m-4", rung="reset_gpu"), HOSTS)
    assert (decision["decision"], decision["node"], decision["rung"]) == ("act", "a3m-4", "reset_gpu")
    assert decision["run"] and decision["finding"] == "gpu GPU 1"


def test_a_resolved_alert_returns_nothing_to_service_and_changes_no_state():
    g = judge()
    g.decide(alert("a3m-4"), HOSTS)
    before = json.dumps(g.trimmed(), sort_keys=True)
    decision = g.decide(alert("a3m-4", status="resolved"), HOSTS)
    assert decision["decision"] == "ignored" and "resolved alert returns no node" in decision["reason"]
    assert json.dumps(g.trimmed(), sort_keys=True) == before


def test_a_storm_acts_on_the_caps_and_holds_the_rest_saying_by_what():
    g = judge(max_per_hour=10, max_share=0.1)  # 2 of 20 nodes at once
    decisions = [g.decide(alert(node), HOSTS) for node in HOSTS[:8]]
    assert [d["decision"] for d in decisions] == ["act", "act"] + ["held"] * 6
    assert "2 of 20 node(s) are out under remediation, the cap is 2" in decisions[2]["reason"]
    g = judge(max_per_hour=1, max_share=1.0)
    decisions = [g.decide(alert(node), HOSTS) for node in HOSTS[:3]]
    assert [d["decision"] for d in decisions] == ["act", "held", "held"]
    assert "1 remediation(s) started in the last hour, the cap is 1" in decisions[1]["reason"]


def test_the_hourly_cap_counts_the_last_hour_only():
    g = judge(max_per_hour=1, max_share=1.0, now=10000.0)
    first = g.decide(alert("a3m-1"), HOSTS)
    g.record(first["run"], "cleared", "rerun", returned=True)
    later = guard.Guard(g.trimmed(), dict(SETTINGS, max_per_hour=1, max_share=1.0), 10000.0 + 3601)
    assert later.decide(alert("a3m-2"), HOSTS)["decision"] == "act"


def test_a_node_under_remediation_is_not_started_twice_and_counts_against_the_share_until_returned():
    g = judge(max_share=1.0)
    first = g.decide(alert("a3m-1"), HOSTS)
    assert g.decide(alert("a3m-1"), HOSTS)["decision"] == "ignored"
    g.record(first["run"], "not_cleared", "rerun", returned=False)  # kept drained: still out
    assert g.decide(alert("a3m-1"), HOSTS)["decision"] == "ignored"
    g.release("a3m-1")
    assert g.decide(alert("a3m-1"), HOSTS)["rung"] == "reset_gpu"  # and one rung up


def test_a_node_failing_again_within_the_window_starts_one_rung_higher_and_stops_at_the_top():
    g = judge(max_per_hour=10, max_share=1.0)
    first = g.decide(alert("a3m-1", rung="reset_gpu"), HOSTS)
    g.record(first["run"], "cleared", "reset_gpu", returned=True)
    again = g.decide(alert("a3m-1", rung="reset_gpu"), HOSTS)
    assert again["rung"] == "reboot" and "escalated" in again["reason"]
    g.record(again["run"], "cleared", "reboot", returned=True)
    third = g.decide(alert("a3m-1", rung="reset_gpu"), HOSTS)
    assert third["decision"] == "held"
    assert "Google's host repair" in third["reason"]
    assert judge(allow_report_host=True, state=g.trimmed()).decide(alert("a3m-1"), HOSTS)["rung"] == "report_host"
    # outside the window, the alert's own rung again
    late = guard.Guard(g.trimmed(), dict(SETTINGS, max_share=1.0, max_per_hour=10), 10000.0 + 21601)
    assert late.decide(alert("a3m-1", rung="reset_gpu"), HOSTS)["rung"] == "reset_gpu"


@pytest.mark.parametrize("over,item,reason", [
    ({"enabled": False}, alert("a3m-1"), "switched off"),
    ({}, alert("other-vm"), "not a node of this inventory"),
    ({}, {"status": "firing", "labels": {"alertname": "X"}}, "names no node"),
    ({}, alert("a3m-1", status="pending"), "neither firing nor resolved"),
    ({}, "not an alert", "neither firing nor resolved"),
])
def test_what_is_never_acted_on(over, item, reason):
    decision = judge(**over).decide(item, HOSTS)
    assert decision["decision"] in ("held", "ignored") and reason in decision["reason"]


def test_dry_run_decides_and_starts_no_run():
    g = judge(dry_run=True)
    decision = g.decide(alert("a3m-1"), HOSTS)
    assert decision["decision"] == "dry_run" and decision["run"] is None and g.trimmed() == {"runs": []}


def test_state_and_audit_files(tmp_path):
    path = str(tmp_path / "state" / "state.json")
    with guard.StateFile(path) as state:
        assert state.read() == {}
        state.write({"runs": []})
    with guard.StateFile(path) as state:
        assert state.read() == {"runs": []}
    (tmp_path / "bad.json").write_text(u"{not json")
    with pytest.raises(guard.GuardError, match="bad.json is not JSON"):
        with guard.StateFile(str(tmp_path / "bad.json")) as state:
            state.read()
    log = str(tmp_path / "audit" / "audit.jsonl")
    guard.audit(log, [{"decision": "act"}])
    guard.audit(log, [{"decision": "held"}])
    assert [json.loads(line)["decision"] for line in open(log)] == ["act", "held"]
    with pytest.raises(guard.GuardError, match="max_share must be above 0"):
        guard.settings_of(dict(SETTINGS, max_share=0))
