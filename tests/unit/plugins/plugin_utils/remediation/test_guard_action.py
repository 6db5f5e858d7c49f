# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The remediation_guard action's work (guard.apply) and its options: the audit line before the state, dry run
written nowhere but the audit, nodes to preview, a preview's plan logged, the nodes a remediation holds, a person's
release with its reason; and its documentation matching its argument spec."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import sys

import pytest
import yaml

from ansible_collections.gpudirect.gcp.plugins.action import remediation_guard as action
from ansible_collections.gpudirect.gcp.plugins.doc_fragments import gce_auth
from ansible_collections.gpudirect.gcp.plugins.modules import remediation_guard as module_doc
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import guard

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))))
sys.path.insert(0, os.path.join(ROOT, "tests", "unit", "plugins", "action"))
import _playbook_result  # noqa: E402

HOSTS = ["a3m-%d" % n for n in range(10)]
NOW = 100000.0


def alert(node, rung=None):
    labels = {"alertname": "GPUDirectNodeRemediable", "instance": "%s:9100" % node, "component": "gpu",
              "subject": "GPU 1"}
    if rung:
        labels["rung"] = rung
    return {"status": "firing", "labels": labels, "annotations": {}}


class Files(object):
    def __init__(self, tmp_path):
        base = tmp_path / "remediate"
        base.mkdir(mode=0o700)
        self.state, self.audit = base / "state.json", base / "audit.jsonl"

    def args(self, **over):
        out = dict((name, spec.get("default")) for name, spec in action.ARGUMENT_SPEC.items())
        out.update(hosts=HOSTS, state_file=str(self.state), audit_log=str(self.audit), max_share=1.0)
        out.update(over)
        return out

    def apply(self, check=False, now=NOW, **over):
        return guard.apply(self.args(**over), check, now)

    def lines(self):
        return [json.loads(line) for line in self.audit.read_text().splitlines()] if self.audit.exists() else []

    def runs(self):
        return json.loads(self.state.read_text())["runs"]


@pytest.fixture
def files(tmp_path):
    return Files(tmp_path)


# --- the audit line first: a decision that cannot be logged changes nothing

@pytest.mark.parametrize("second", [
    {"alerts": [alert("a3m-2")]},
    {"outcome": {"run": "RUN", "outcome": "failed", "rung": "rerun", "returned": False}},
    {"release": "a3m-1"},
], ids=["act", "outcome", "release"])
def test_a_decision_whose_audit_line_cannot_be_written_changes_no_state(files, tmp_path, second):
    _lines, out = files.apply(alerts=[alert("a3m-1")], dry_run=False)
    before = files.state.read_text()
    if "outcome" in second:
        second = {"outcome": dict(second["outcome"], run=out["act"][0]["run"])}
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(guard.GuardError) as excinfo:
        files.apply(dry_run=False, audit_log=str(shared / "audit.jsonl"), **second)
    assert "writable by group or others" in str(excinfo.value) and "\n" not in str(excinfo.value)
    assert files.state.read_text() == before and os.listdir(str(shared)) == []


def test_the_action_logs_before_it_keeps_state(tmp_path):
    base = tmp_path / "remediate"
    base.mkdir(mode=0o700)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    state = base / "state.json"
    state.write_text(u'{"version": 1, "runs": []}\n')
    state.chmod(0o600)
    task = {"gpudirect.gcp.remediation_guard": {
        "alerts": [alert("a3m-1")], "hosts": HOSTS, "state_file": str(state), "dry_run": False,
        "audit_log": str(shared / "audit.jsonl")}}
    rc, output, _result = play(tmp_path, [task])
    assert rc != 0 and "remediation_guard: audit log %s" % (shared / "audit.jsonl") in output, output[-3000:]
    assert state.read_text() == u'{"version": 1, "runs": []}\n'


# --- dry run: the caps as live, nothing kept but the audit, the nodes to preview

def test_dry_run_writes_only_the_audit_and_returns_the_nodes_to_preview(files):
    lines, out = files.apply(alerts=[alert("a3m-1", rung="reset_gpu"), alert("a3m-2"), alert("a3m-3")],
                             max_per_hour=2)
    assert [line["decision"] for line in lines] == ["dry_run", "dry_run", "held"]
    assert out["preview"] == [
        {"node": "a3m-1", "rung": "reset_gpu", "finding": "gpu GPU 1", "alert": "GPUDirectNodeRemediable"},
        {"node": "a3m-2", "rung": "rerun", "finding": "gpu GPU 1", "alert": "GPUDirectNodeRemediable"}]
    assert out["act"] == [] and out["changed"] is False
    assert [line["decision"] for line in files.lines()] == ["dry_run", "dry_run", "held"]
    assert files.state.read_text() == u""
    # the next call sees no run: the dry run's were never kept
    _lines, out = files.apply(alerts=[alert("a3m-3")], max_per_hour=2)
    assert [p["node"] for p in out["preview"]] == ["a3m-3"]


def test_a_live_run_keeps_its_runs_with_the_state_version(files):
    _lines, out = files.apply(alerts=[alert("a3m-1")], dry_run=False)
    assert out["preview"] == [] and out["changed"] is True
    state = json.loads(files.state.read_text())
    assert state["version"] == 1 and [r["id"] for r in state["runs"]] == [out["act"][0]["run"]]


# --- a preview's plan is logged, nothing else

def test_a_preview_is_logged_and_changes_nothing(files):
    files.apply(alerts=[alert("a3m-1")], dry_run=False)
    before = files.state.read_text()
    plan = "would drain a3m-1, wait for job 42, then reset GPU 3\nand more"
    lines, out = files.apply(preview={"node": "a3m-1", "plan": plan}, now=NOW + 5)
    assert out["changed"] is False and files.state.read_text() == before
    assert files.lines()[-1] == lines[0]
    assert lines[0] == {"decision": "preview", "node": "a3m-1", "plan": plan.replace("\n", "\\n"),
                        "time": "1970-01-02T03:46:45Z"}
    assert guard.message(lines[0]) == "preview a3m-1: " + plan.replace("\n", "\\n")
    files.apply(check=True, preview={"node": "a3m-1", "plan": "x"})
    assert len(files.lines()) == 2


@pytest.mark.parametrize("preview,words", [
    ({"plan": "x"}, "preview needs a node"),
    ({"node": "a3m-1"}, "preview needs a plan"),
    ({"node": "a3m-1", "plan": ["x"]}, "preview needs a plan"),
])
def test_a_preview_without_a_node_or_plan_is_refused(files, preview, words):
    with pytest.raises(guard.GuardError, match=words):
        files.apply(preview=preview)
    assert files.lines() == []


@pytest.mark.parametrize("given", [
    {"alerts": [alert("a3m-1")], "preview": {"node": "a3m-1", "plan": "x"}},
    {"release": "a3m-1", "preview": {"node": "a3m-1", "plan": "x"}},
    {"outcome": {"run": "x", "outcome": "failed"}, "release": "a3m-1"},
    {"held": True, "alerts": [alert("a3m-1")]},
])
def test_one_of_alerts_outcome_release_preview_and_held(files, given):
    with pytest.raises(guard.GuardError, match="give one of alerts, outcome, release, preview and held, not "):
        files.apply(**given)
    assert files.lines() == [] and not files.state.exists()


# --- a person's decisions stand

def test_held_returns_the_nodes_a_remediation_holds_and_writes_nothing(files):
    assert files.apply(held=True) == ([], {"held_nodes": [], "changed": False,
                                           "books": {"location": str(files.state), "retries": 0}})
    assert not files.state.exists() and not files.audit.exists()
    _lines, out = files.apply(alerts=[alert("a3m-3"), alert("a3m-1"), alert("a3m-2")], dry_run=False, max_per_hour=3)
    runs = dict((a["node"], a["run"]) for a in out["act"])
    files.apply(outcome={"run": runs["a3m-2"], "outcome": "cleared", "rung": "rerun", "returned": True})
    files.apply(outcome={"run": runs["a3m-3"], "outcome": "waiting_for_job", "rung": None})
    before, logged = files.state.read_text(), files.lines()
    for check in (False, True):
        lines, out = files.apply(check=check, held=True)
        assert lines == [] and out["held_nodes"] == ["a3m-1", "a3m-3"] and out["changed"] is False
    assert files.state.read_text() == before and files.lines() == logged


def test_a_release_keeps_its_reason_in_the_audit_and_the_run(files):
    _lines, out = files.apply(alerts=[alert("a3m-1")], dry_run=False)
    lines, out = files.apply(release="a3m-1", release_reason="resumed in Slurm by the on-call\tafter a check")
    assert out["released"] == [files.runs()[0]["id"]] and out["changed"] is True
    reason = "resumed in Slurm by the on-call\\tafter a check"
    assert files.lines()[-1]["reason"] == reason and lines[0]["reason"] == reason
    assert files.runs()[0]["released_reason"] == reason and files.runs()[0]["outcome"] == "released"
    assert files.apply(held=True)[1]["held_nodes"] == []
    files.apply(alerts=[alert("a3m-2")], dry_run=False)
    files.apply(release="a3m-2")
    assert files.lines()[-1]["reason"] == "released by a person"


@pytest.mark.parametrize("outcome,held", [("waiting_for_job", ["a3m-1"]), ("person_drained", [])])
def test_the_new_outcomes_are_recorded(files, outcome, held):
    _lines, out = files.apply(alerts=[alert("a3m-1")], dry_run=False)
    files.apply(outcome={"run": out["act"][0]["run"], "outcome": outcome, "rung": None, "returned": False})
    assert files.lines()[-1]["outcome"] == outcome and files.runs()[0]["outcome"] == outcome
    assert files.apply(held=True)[1]["held_nodes"] == held


@pytest.mark.parametrize("item,words", [
    ({"outcome": "fixed"}, "outcome must be one of"),
    ({"outcome": "cleared", "rung": "replace_gpu"}, "rung must be one of"),
])
def test_an_outcome_that_would_spoil_the_state_is_refused(files, item, words):
    _lines, out = files.apply(alerts=[alert("a3m-1")], dry_run=False)
    before = files.state.read_text()
    with pytest.raises(guard.GuardError, match=words):
        files.apply(outcome=dict(item, run=out["act"][0]["run"]))
    assert files.state.read_text() == before


def test_the_options_through_the_action(tmp_path):
    base = tmp_path / "remediate"
    common = {"hosts": HOSTS, "state_file": str(base / "state.json"), "audit_log": str(base / "audit.jsonl")}

    def task(name, **args):
        return {"name": name, "gpudirect.gcp.remediation_guard": dict(common, **args), "register": name}

    rc, output, result = play(tmp_path, [
        task("dry", alerts=[alert("a3m-1"), alert("a3m-2")], max_per_hour=1),
        task("plan", preview={"node": "a3m-1", "plan": "would drain a3m-1, then reset GPU 1"}),
        task("live", alerts=[alert("a3m-1")], dry_run=False),
        task("held", held=True),
        task("back", release="a3m-1", release_reason="resumed in Slurm"),
        task("after", held=True),
    ], show="{{ {'dry': dry, 'plan': plan, 'live': live, 'held': held, 'back': back, 'after': after} }}")
    assert rc == 0, output[-3000:]
    assert [d["decision"] for d in result["dry"]["decisions"]] == ["dry_run", "held"]
    assert [p["node"] for p in result["dry"]["preview"]] == ["a3m-1"]
    assert result["plan"]["changed"] is False and result["plan"]["messages"] == [
        "preview a3m-1: would drain a3m-1, then reset GPU 1"]
    assert result["held"]["held_nodes"] == ["a3m-1"] and result["held"]["changed"] is False
    assert result["back"]["released"] == [result["live"]["act"][0]["run"]]
    assert result["after"]["held_nodes"] == []
    logged = [json.loads(line) for line in (base / "audit.jsonl").read_text().splitlines()]
    assert [line["decision"] for line in logged] == ["dry_run", "held", "preview", "act", "release"]
    assert logged[-1]["reason"] == "resumed in Slurm"


def play(tmp_path, tasks, show="{{ out | default(none) }}"):
    book = tmp_path / "play.yml"
    tasks = list(tasks) + [{"name": "Show", "ansible.builtin.debug": {"msg": "RESULT={{ (%s) | to_json }}"
                                                                      % show[3:-3]}}]
    book.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]))
    return _playbook_result.run(["-i", "localhost,", "-c", "local", book], {})


# --- documentation and argument spec agree

def test_every_option_is_documented_as_the_action_reads_it():
    doc = yaml.safe_load(module_doc.DOCUMENTATION)["options"]
    # the credentials' options come from the gce_auth fragment
    doc.update(yaml.safe_load(gce_auth.ModuleDocFragment.DOCUMENTATION)["options"])
    assert sorted(doc) == sorted(action.ARGUMENT_SPEC)
    for name, spec in action.ARGUMENT_SPEC.items():
        for key in ("type", "elements", "default", "required"):
            assert doc[name].get(key) == spec.get(key), (name, key)
    outcomes = " ".join(doc["outcome"]["description"])
    assert [o for o in guard.OUTCOMES if "C(%s)" % o not in outcomes] == []
    returned = yaml.safe_load(module_doc.RETURN)
    assert {"preview", "held_nodes", "decisions", "act", "held", "recorded", "released"} <= set(returned)
