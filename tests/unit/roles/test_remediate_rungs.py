# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The repair rungs are one table (finding.RUNGS and ladder.RUNG_PARTS): the remediate role's allow mapping, its
options, its task files and the docs match it, and a new rung reaches the findings, the planner, the guard, the
role's mapping and the docs check without touching them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest
import yaml

from ansible_collections.gpudirect.gcp.plugins.filter import remediate
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import node_checks
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import guard, ladder

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLE = os.path.join(ROOT, "roles", "remediate")
DOC = os.path.join(ROOT, "docs", "remediation.md")


def _yaml(*path):
    with open(os.path.join(ROLE, *path), encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def _text(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def mapping_problems():
    """Where the role's one allow mapping, its defaults and its options differ from the table's settings."""
    settings = ladder.allow_settings()
    out = []
    mapping = _yaml("vars", "main.yml")["_remediate_allow"]
    if list(mapping) != settings:
        out.append("vars/main.yml _remediate_allow holds %s, the table %s" % (list(mapping), settings))
    out += ["vars/main.yml _remediate_allow: %s is %r" % (name, value) for name, value in mapping.items()
            if value != "{{ %s | bool }}" % name]
    defaults = _yaml("defaults", "main.yml")
    specs = _yaml("meta", "argument_specs.yml")["argument_specs"]
    for name in settings:
        if not name.startswith("remediate_allow_"):
            out.append("%s is no remediate_allow_ setting" % name)
        if not isinstance(defaults.get(name), bool):
            out.append("defaults/main.yml has no boolean %s" % name)
        for entry in ("main", "guard"):
            spec = specs[entry]["options"].get(name)
            if not spec or spec.get("type") != "bool" or spec.get("default") != defaults.get(name):
                out.append("meta/argument_specs.yml %s has no bool %s defaulting as defaults/main.yml" % (entry, name))
    return out


def task_file_problems():
    """Rungs without their task file, and rung task files no rung has."""
    have = set(name for name in os.listdir(os.path.join(ROLE, "tasks")) if re.match(r"rung_\w+\.yml$", name))
    want = set(row["tasks"] for row in ladder.table())
    return ["no task file %s" % name for name in sorted(want - have)] + \
        ["task file %s is no rung's" % name for name in sorted(have - want)]


def _between(text, start, end):
    return text.split(start, 1)[1].split(end, 1)[0].strip("\n").splitlines()


def doc_problems():
    """Where the docs that list the rungs differ from the table."""
    out = []
    text = _text(DOC)
    if _between(text, "<!-- rungs:start -->", "<!-- rungs:end -->") != ladder.doc_table():
        out.append("docs/remediation.md's rungs table is not ladder.doc_table():\n" + "\n".join(ladder.doc_table()))
    settings = re.findall(r"^\| `(remediate_allow_\w+)` \|", text, re.M)
    if settings != ladder.allow_settings():
        out.append("docs/remediation.md's settings table lists %s, the table %s" % (settings, ladder.allow_settings()))
    # every kind's rungs, in the kinds table (maintenance and a fault with no repair share its "none" row)
    kinds = _between(text, "| kind | rungs |", "\n\n")[1:]
    documented = set(tuple(re.findall(r"`(\w+)`", row.split("|")[2])) for row in kinds)
    if documented != set(tuple(kind["rungs"]) for kind in ladder.KINDS):
        out.append("docs/remediation.md's kinds table gives rungs %s, KINDS %s"
                   % (sorted(documented), sorted(set(tuple(k["rungs"]) for k in ladder.KINDS))))
    # the role's description names every rung, in order (its README is generated from it)
    described = [d for d in _yaml("meta", "argument_specs.yml")["argument_specs"]["main"]["description"]
                 if d.startswith("It climbs only the rungs")][0]
    if re.findall(r"C\((\w+)\)", described) != list(ladder.order()):
        out.append("meta/argument_specs.yml main's description names the rungs %s, the table %s"
                   % (re.findall(r"C\((\w+)\)", described), list(ladder.order())))
    return out


def test_the_roles_allow_mapping_options_task_files_and_docs_match_the_table():
    assert mapping_problems() == []
    assert task_file_problems() == []
    assert doc_problems() == []


def test_the_role_passes_every_rungs_setting_through_its_one_mapping_only():
    tasks = dict((name, _text(os.path.join(ROLE, "tasks", name))) for name in os.listdir(os.path.join(ROLE, "tasks")))
    assert [name for name, text in tasks.items() if "remediate_allow_" in text] == []
    assert "_remediate_plan(_remediate_floor | default(none), _remediate_allow," in tasks["main.yml"]
    (decide,) = [t for t in yaml.safe_load(tasks["guard.yml"]) if "gpudirect.gcp.remediation_guard" in t]
    assert decide["gpudirect.gcp.remediation_guard"]["allow"] == "{{ _remediate_allow }}"
    assert "allow_report_host" not in decide["gpudirect.gcp.remediation_guard"]


def test_the_checks_see_what_they_look_for(monkeypatch):
    """Each check above fails on a table that is not the one the files follow."""
    parts = dict(ladder.RUNG_PARTS, reboot=dict(ladder.RUNG_PARTS["reboot"], allow=None, tasks="rung_restart.yml"))
    monkeypatch.setattr(ladder, "RUNG_PARTS", parts)
    assert "vars/main.yml _remediate_allow holds" in mapping_problems()[0]
    assert task_file_problems() == ["task file rung_reboot.yml is no rung's"]
    problems = doc_problems()
    assert len(problems) == 2 and problems[0].startswith("docs/remediation.md's rungs table is not")
    assert problems[1] == ("docs/remediation.md's settings table lists ['remediate_allow_reboot', "
                           "'remediate_allow_report_host'], the table ['remediate_allow_report_host']")


# --- a throwaway rung: its name in finding.RUNGS, its row in ladder.RUNG_PARTS, and a kind that it clears

MIGRATE = {"allow": "remediate_allow_migrate", "work": lambda item, node: item.get("subject"), "step": "vms",
           "with": {}, "shows": str, "says": "migrate {work}", "what": "a live migration of the VM",
           "tasks": "rung_migrate.yml",
           "repair": lambda host, item, repairs: "migrate the VM %s off its host" % host}
MIGRATABLE = {"kind": "migratable", "rungs": ("migrate", "report_host"), "match": lambda f: f.get("rung") == "migrate",
              "why": "a host fault a migration leaves behind"}


@pytest.fixture
def migrate(monkeypatch):
    rungs = fd.RUNGS[:fd.RUNGS.index("reboot") + 1] + ("migrate",) + fd.RUNGS[fd.RUNGS.index("reboot") + 1:]
    monkeypatch.setattr(fd, "RUNGS", rungs)
    monkeypatch.setattr(ladder, "RUNG_PARTS", dict(ladder.RUNG_PARTS, migrate=MIGRATE))
    monkeypatch.setattr(ladder, "KINDS", (MIGRATABLE,) + ladder.KINDS)
    return fd.make("gpu", "GPU 2", "fail", "the host's memory corrects more than it should", rung="migrate")


def test_a_rung_unknown_to_the_table_is_refused_by_the_findings_planner_and_guard():
    with pytest.raises(ValueError, match="unknown repair rung 'migrate'"):
        fd.make("gpu", "GPU 2", "fail", "x", rung="migrate")
    with pytest.raises(Exception, match="allow names remediate_allow_migrate, which no rung has"):
        remediate.remediate_plan([], None, {"remediate_allow_migrate": True})
    with pytest.raises(guard.GuardError, match="unknown rung 'migrate'"):
        guard.runs_of({"runs": [{"id": "r1", "node": "n1", "started": 1.0, "rung": "migrate"}]}, "the state")


def test_a_new_rung_reaches_the_findings_the_planner_the_guard_the_roles_mapping_and_the_docs(migrate):
    # the findings: a check may name it
    assert migrate["rung"] == "migrate" and fd.rung_order("migrate") == fd.RUNGS.index("reboot") + 1

    # the planner, in the table's order, with its work, its words and its setting, through the role's filter
    allow = {"remediate_allow_migrate": True, "remediate_allow_report_host": True}
    out = remediate.remediate_plan([migrate], None, allow)
    assert [(s["rung"], s["tasks"], s["says"], s["vms"]) for s in out["steps"]] == [
        ("migrate", "rung_migrate.yml", "migrate GPU 2", ["GPU 2"]),
        ("report_host", "rung_report_host.yml", "report its host to Google as faulty", [])]
    assert all(set(s) >= {"phases", "services", "commands", "stop", "vms"} for s in out["steps"])
    assert [s["rung"] for s in ladder.plan([migrate], None, dict(allow, remediate_allow_migrate=False))["steps"]] == \
        ["report_host"]
    assert [s["rung"] for s in ladder.plan([migrate], "report_host", allow)["steps"]] == ["report_host"]

    # the guard: its ladder, its escalation and its gate
    judge = guard.Guard({}, {"enabled": True, "dry_run": False, "max_per_hour": 10, "max_share": 1.0,
                             "escalate_window_s": 21600, "allow_report_host": False, "node_label": "instance",
                             "allow": {"remediate_allow_migrate": True}}, 10000.0)
    alert = {"status": "firing", "labels": {"alertname": "GPUDirectNodeRemediable", "instance": "n1", "rung": "reboot"}}
    first = judge.decide(alert, ["n1"])
    judge.record(first["run"], "not_cleared", "reboot")
    judge.release("n1")
    again = judge.decide(alert, ["n1"])
    assert (again["decision"], again["rung"]) == ("act", "migrate") and "escalated" in again["reason"]
    assert judge.record(again["run"], "cleared", "migrate", returned=True)["last_rung"] == "migrate"
    assert guard.runs_of(judge.trimmed(), "the state")[-1]["last_rung"] == "migrate"
    judge.settings["allow"] = {"remediate_allow_migrate": False}
    held = judge.decide(dict(alert, labels=dict(alert["labels"], instance="n2", rung="migrate")), ["n1", "n2"])
    assert held["decision"] == "held" and "remediate_allow_migrate and remediate_allow_report_host" in held["reason"]

    # the diagnosis: a finding naming the rung gets the rung's repair line
    evidence = {"gpu": {"findings": [migrate]}}
    assert [f["repair"] for f in node_checks.gpu("n1", evidence, None)] == ["migrate the VM n1 off its host"]

    # the role's mapping, its options and the docs: each check names what a real rung must add
    assert "vars/main.yml _remediate_allow holds ['remediate_allow_reboot', 'remediate_allow_report_host'], the " \
           "table ['remediate_allow_reboot', 'remediate_allow_migrate', 'remediate_allow_report_host']" \
           in mapping_problems()
    assert "defaults/main.yml has no boolean remediate_allow_migrate" in mapping_problems()
    assert task_file_problems() == ["no task file rung_migrate.yml"]
    problems = doc_problems()
    assert any(p.startswith("docs/remediation.md's rungs table") and "| `migrate` | a live migration of the VM | "
               "`remediate_allow_migrate` | `roles/remediate/tasks/rung_migrate.yml` |" in p for p in problems)
    assert any("kinds table" in p for p in problems) and any("main's description" in p for p in problems)


def test_a_new_rung_missing_a_part_fails_before_anything_runs(migrate, monkeypatch):
    monkeypatch.setattr(ladder, "RUNG_PARTS", dict(ladder.RUNG_PARTS, migrate=dict(MIGRATE, tasks=None)))
    with pytest.raises(ladder.RungTableError, match="rung migrate in ladder.RUNG_PARTS has an empty tasks"):
        ladder.plan([migrate], None, {})
    monkeypatch.setattr(ladder, "RUNG_PARTS", dict((k, v) for k, v in ladder.RUNG_PARTS.items() if k != "migrate"))
    with pytest.raises(ladder.RungTableError, match="rung migrate has no row in ladder.RUNG_PARTS"):
        guard.allow_of({})
