# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The remediation guard: caps, escalation, the off switch, dry run, resolved alerts, the audit."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import guard, guard_store


def state_file(path, create=True):
    """The guard's local state file, its state checked as the guard checks it."""
    return guard_store.StateFile(path, create, check=guard.runs_of)


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
    assert g.decide(alert("a3m-1"), HOSTS)["rung"] == fd.RUNGS[1]  # and one rung up


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


REBOOT_OFF = {"remediate_allow_reboot": False}


def test_reboot_and_report_host_are_gated_the_same_way_by_the_rungs_settings():
    # an alert no allowed rung can take from where it starts is held, naming the settings
    held = judge(allow=REBOOT_OFF).decide(alert("a3m-1", rung="reboot"), HOSTS)
    assert held["decision"] == "held"
    assert held["reason"] == ("held: a3m-1 needs a reboot of the node or Google's host repair (the host reported as "
                              "faulty; the VM restarts on other hardware), which remediate_allow_reboot and "
                              "remediate_allow_report_host leave to a person")
    # a higher allowed rung still takes it, as the plan on the node climbs to it
    assert judge(allow=dict(REBOOT_OFF, remediate_allow_report_host=True)).decide(
        alert("a3m-1", rung="reboot"), HOSTS)["rung"] == "reboot"
    # the lower rungs need no setting; the role's mapping decides report_host over the action's own option
    assert judge(allow=REBOOT_OFF).decide(alert("a3m-2", rung="reset_gpu"), HOSTS)["decision"] == "act"
    assert judge(allow_report_host=True, allow={"remediate_allow_report_host": False}).decide(
        alert("a3m-1", rung="report_host"), HOSTS)["decision"] == "held"
    assert judge(allow_report_host=True).decide(alert("a3m-1", rung="report_host"), HOSTS)["decision"] == "act"


@pytest.mark.parametrize("allow, words", [
    ({"remediate_allow_rebooot": True}, "allow names remediate_allow_rebooot, which no rung has (the rungs' settings: "
                                        "remediate_allow_reboot, remediate_allow_report_host)"),
    ({"remediate_allow_reboot": "maybe"}, "allow: remediate_allow_reboot must be true or false, not 'maybe'"),
])
def test_a_setting_no_rung_has_or_not_a_boolean_is_refused_in_one_line(allow, words):
    with pytest.raises(guard.GuardError, match=re.escape(words)):
        guard.settings_of(dict(SETTINGS, allow=allow))


def test_dry_run_decides_and_starts_no_run():
    g = judge(dry_run=True)
    decision = g.decide(alert("a3m-1"), HOSTS)
    assert decision["decision"] == "dry_run" and decision["run"] is None and g.trimmed() == {"version": 1, "runs": []}


def test_state_and_audit_files(tmp_path):
    path = str(tmp_path / "state" / "state.json")
    with state_file(path) as state:
        assert state.read() == {}
        state.write({"runs": []})
    with state_file(path) as state:
        assert state.read() == {"runs": []}
    (tmp_path / "bad.json").write_text(u"{not json")
    with pytest.raises(guard.GuardError, match="bad.json is not JSON"):
        with state_file(str(tmp_path / "bad.json")) as state:
            state.read()
    log = str(tmp_path / "audit" / "audit.jsonl")
    guard_store.audit(log, [{"decision": "act"}])
    guard_store.audit(log, [{"decision": "held"}])
    assert [json.loads(line)["decision"] for line in open(log)] == ["act", "held"]
    with pytest.raises(guard.GuardError, match="max_share must be above 0"):
        guard.settings_of(dict(SETTINGS, max_share=0))


# --- the state file's version and shape: refused in one line naming the file, never read as empty

def state_path(tmp_path, text):
    base = tmp_path / "state"
    base.mkdir(mode=0o700, exist_ok=True)
    path = base / "state.json"
    path.write_text(text)
    path.chmod(0o600)
    return path


def read_state(path):
    with state_file(str(path)) as state:
        return state.read()


RUN = {"id": "r1", "node": "a3m-1", "started": 9000.0, "rung": "rerun", "outcome": None, "alert": "X"}


@pytest.mark.parametrize("text,words", [
    ('[]', "not a JSON object"),
    ('"runs"', "not a JSON object"),
    ('null', "not a JSON object"),
    ('{"version": 1}', "no runs list"),
    ('{"runs": {}}', "runs is not a list"),
    ('{"runs": null}', "runs is not a list"),
    ('{"version": 2, "runs": []}', "version 2, newer than"),
    ('{"version": "1", "runs": []}', "version '1'"),
    ('{"version": true, "runs": []}', "version True"),
    ('{"version": 0, "runs": []}', "version 0"),
], ids=["list", "string", "null", "no runs", "runs a map", "runs null", "newer", "version text", "version bool",
        "version 0"])
def test_a_state_of_the_wrong_shape_is_refused_in_one_line_naming_the_file(tmp_path, text, words):
    path = state_path(tmp_path, text)
    with pytest.raises(guard.GuardError) as excinfo:
        read_state(path)
    message = str(excinfo.value)
    assert "\n" not in message and str(path) in message and words in message, message
    assert path.read_text() == text


@pytest.mark.parametrize("run,words", [
    ("not a run", "is not an object"),
    (dict(RUN, node=None), "no node"),
    (dict(RUN, node=""), "no node"),
    (dict((k, v) for k, v in RUN.items() if k != "node"), "no node"),
    (dict(RUN, started="yesterday"), "start time"),
    (dict(RUN, started=True), "start time"),
    (dict(RUN, started=float("nan")), "start time"),
    (dict(RUN, rung="replace_gpu"), "rung 'replace_gpu'"),
    (dict(RUN, last_rung="replace_gpu"), "rung 'replace_gpu'"),
    (dict(RUN, ended="later"), "end time"),
    (dict(RUN, outcome="fixed"), "outcome 'fixed'"),
    (dict(RUN, id=7), "no id"),
], ids=["string", "node null", "node empty", "no node", "started text", "started bool", "started nan",
        "unknown rung", "unknown last rung", "ended text", "unknown outcome", "id number"])
def test_a_malformed_run_is_refused_naming_the_file_and_its_index_not_dropped(tmp_path, run, words):
    text = json.dumps({"version": 1, "runs": [RUN, run]})
    path = state_path(tmp_path, text)
    with pytest.raises(guard.GuardError) as excinfo:
        read_state(path)
    message = str(excinfo.value)
    assert "\n" not in message and str(path) in message and "index 1" in message and words in message, message
    assert path.read_text() == text
    with pytest.raises(guard.GuardError, match="index 1"):
        guard.Guard({"runs": [RUN, run]}, SETTINGS, 10000.0)


def test_the_state_is_written_with_its_version_and_an_older_file_without_one_reads_as_version_1(tmp_path):
    old = dict(RUN, last_rung="", outcome="failed", ended=9500.0, returned=False)  # an older core wrote "" for none
    path = state_path(tmp_path, json.dumps({"runs": [old]}))
    g = guard.Guard(read_state(path), SETTINGS, 10000.0)
    assert g.decide(alert("a3m-1"), HOSTS)["decision"] == "ignored"  # its run still holds the node
    assert g.trimmed()["version"] == 1 and [r["id"] for r in g.trimmed()["runs"]] == ["r1"]
    assert judge().trimmed() == {"version": 1, "runs": []}


# --- escalation counts from the end of the last run

def test_escalation_counts_from_when_the_last_run_ended_not_from_when_it_started():
    now = 100000.0
    run = dict(RUN, node="a3m-1", started=now - 10 * guard.HOUR, rung="reset_gpu", last_rung="reset_gpu",
               outcome="cleared", ended=now - guard.HOUR, returned=True)
    settings = dict(SETTINGS, max_share=1.0, escalate_window_s=6 * 3600)
    # kept by the trim while its end is in the window, and escalated from
    kept = guard.Guard(guard.Guard({"runs": [run]}, settings, now).trimmed(), settings, now)
    decision = kept.decide(alert("a3m-1", rung="reset_gpu"), HOSTS)
    assert (decision["decision"], decision["rung"]) == ("act", "reboot") and "escalated" in decision["reason"]
    # and forgotten once its end is out of it
    late = guard.Guard({"runs": [run]}, settings, now + 5 * guard.HOUR + 1)
    assert late.trimmed()["runs"] == []
    assert late.decide(alert("a3m-1", rung="reset_gpu"), HOSTS)["rung"] == "reset_gpu"


# --- the share cap, exact for decimal shares

@pytest.mark.parametrize("share,nodes,cap", [(0.3, 10, 3), (0.7, 90, 63), (0.58, 50, 29), (0.1, 64, 6), (0.1, 5, 1),
                                             (1.0, 20, 20), (0.05, 20, 1)])
def test_the_share_cap_is_exact_for_decimal_shares(share, nodes, cap):
    assert guard.share_cap(share, nodes) == cap


def test_a_decimal_share_lets_through_exactly_its_nodes():
    hosts = ["n%d" % i for i in range(90)]  # 0.7 * 90 is 62.99999999999999 in floating point
    g = judge(max_share=0.7, max_per_hour=1000)
    decisions = [g.decide(alert(node), hosts)["decision"] for node in hosts[:64]]
    assert decisions == ["act"] * 63 + ["held"]


# --- dry run: the caps as live applies them, nothing kept

@pytest.mark.parametrize("over", [{"max_per_hour": 10, "max_share": 0.1}, {"max_per_hour": 1, "max_share": 1.0}],
                         ids=["share", "hourly"])
def test_dry_run_applies_the_caps_as_live_would(over):
    nodes = HOSTS[:4] + HOSTS[:1]
    live, dry = judge(**over), judge(dry_run=True, **over)
    expected = [live.decide(alert(n), HOSTS)["decision"] for n in nodes]
    decisions = [dry.decide(alert(n), HOSTS) for n in nodes]
    assert [d["decision"] for d in decisions] == [{"act": "dry_run"}.get(d, d) for d in expected]
    assert expected.count("held") >= 2 and expected[-1] == "ignored"
    assert all(d["run"] is None for d in decisions)
    assert dry.trimmed() == {"version": 1, "runs": []}


def test_a_dry_run_line_says_which_caps_it_passed():
    g = judge(dry_run=True, max_per_hour=10, max_share=0.1)
    first, second = [g.decide(alert(n), HOSTS)["reason"] for n in HOSTS[:2]]
    assert "passed the caps: 1 of 10 remediation(s) in the last hour, 1 of 2 node(s) out (0.1 of 20)" in first
    assert "passed the caps: 2 of 10 remediation(s) in the last hour, 2 of 2 node(s) out (0.1 of 20)" in second


# --- how a run ends: a person's decision stands

def test_the_outcomes_include_a_job_outliving_the_wait_and_a_persons_drain():
    assert {"waiting_for_job", "person_drained", "released"} <= set(guard.OUTCOMES)


def test_a_person_drained_run_is_closed_and_does_not_escalate():
    g = judge(max_share=1.0, max_per_hour=10)
    first = g.decide(alert("a3m-1", rung="reset_gpu"), HOSTS)
    g.record(first["run"], "person_drained", None)
    assert g.held_nodes() == []
    again = g.decide(alert("a3m-1", rung="reset_gpu"), HOSTS)
    # nothing was done on the node: its alert's rung, not one above
    assert (again["decision"], again["rung"]) == ("act", "reset_gpu")


def test_a_node_waiting_for_its_job_stays_held_until_a_person_releases_it_with_a_reason():
    g = judge(max_share=1.0, max_per_hour=10)
    first = g.decide(alert("a3m-1", rung="reset_gpu"), HOSTS)
    g.decide(alert("a3m-2"), HOSTS)
    g.record(first["run"], "waiting_for_job", None)
    assert g.decide(alert("a3m-1"), HOSTS)["decision"] == "ignored"
    assert g.held_nodes() == ["a3m-1", "a3m-2"]
    released = g.release("a3m-1", "resumed in Slurm by the on-call")
    assert [(r["outcome"], r["released_reason"]) for r in released] == [("released", "resumed in Slurm by the on-call")]
    assert g.held_nodes() == ["a3m-2"]
    # no rung ran in that run: the next one starts at its alert's rung
    assert g.decide(alert("a3m-1", rung="reset_gpu"), HOSTS)["rung"] == "reset_gpu"
    assert g.release("a3m-2")[0]["released_reason"] == "released by a person"


# --- the fleet ledger: a physical host that failed again after a rung cleared it

def test_a_node_whose_host_failed_again_after_a_clear_starts_one_rung_above_what_cleared_it():
    repeat = {"a3m-4": {"rung": "reset_gpu", "why": "physical host h-1 failed again after a remediation cleared it"}}
    decision = judge(repeat_after_clear=repeat).decide(alert("a3m-4"), HOSTS)
    assert (decision["decision"], decision["rung"]) == ("act", "reboot")
    assert decision["reason"].endswith("(escalated one rung above reset_gpu: physical host h-1 failed again after a "
                                       "remediation cleared it)")
    # another node, or an alert already asking for a higher rung, is not moved
    assert judge(repeat_after_clear=repeat).decide(alert("a3m-5"), HOSTS)["rung"] == "rerun"
    decision = judge(repeat_after_clear=repeat, allow_report_host=True).decide(alert("a3m-4", rung="report_host"), HOSTS)
    assert decision["rung"] == "report_host" and "escalated" not in decision["reason"]
    # cleared at the top rung: nothing above it, the alert's rung stands
    top = {"a3m-4": {"rung": "report_host", "why": "again"}}
    assert judge(repeat_after_clear=top).decide(alert("a3m-4"), HOSTS)["rung"] == "rerun"


def test_a_repeat_after_clear_of_another_shape_is_refused_in_one_line():
    with pytest.raises(guard.GuardError, match=r"^repeat_after_clear must map a node to \{rung, why\}"):
        guard.settings_of(dict(SETTINGS, repeat_after_clear={"a3m-4": "reset_gpu"}))
