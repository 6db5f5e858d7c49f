# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The repair ladder a remediation climbs on a node, from its failing findings (the _remediate_plan
filter).

Two tables. The rungs: finding.RUNGS holds their names and order (least disruptive first; the node's checks
name them), and RUNG_PARTS here the rest of each, keyed by name - the setting that allows it (None: always),
the work it takes from a failing finding, how the plan says it, and the task file of the remediate role that
performs it (one file per rung, chosen by name). table() joins the two, and a rung without every part fails
at import. KINDS holds, per kind of finding, the rungs that can clear it: a rung that cannot clear any
failing finding is never climbed, and a finding no rung can clear (a maintenance event, a fault with no
repair here) leaves the node drained and handed over. Everything that lists rungs or kinds (the guard, the
role, the docs, the tests) is built from these tables or checked against them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import shlex

from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import REPAIR_TAGS
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import faulty_host


class RungTableError(ValueError):
    """A rung the two tables do not both hold whole: a programming error, named in one line."""


def _phase(item, node):
    return item.get("phase") or REPAIR_TAGS.get(item.get("component"))


def _unit(item, node):
    return node["services"].get(item.get("component"))


def _reset(item, node):
    # the finding's own action, and only a GPU reset: a node's finding names what runs as root here
    return item["action"] if fd.is_gpu_reset(item.get("action")) else None


def repair_named(host, item, repairs):
    """A diagnosis's repair line for a finding whose repair the node check names: its command (a GPU reset,
    a service restart), else its phase's re-run, else none (an application's fault: re-run the job)."""
    if item.get("action"):
        return repairs.node_command(host, "ansible.builtin.command", " ".join(shlex.quote(a) for a in item["action"]))
    if item.get("phase") in REPAIR_TAGS:
        return repairs.role(host, item["phase"])
    return None


def _repair_reboot(host, item, repairs):
    return repairs.node_command(host, "ansible.builtin.reboot")


def _repair_report_host(host, item, repairs):
    return repairs.report_host(host, "%s %s: %s" % (item.get("component") or "gpu", item["subject"], item["cause"]),
                               faulty_host.behavior_from(item)[0])


# The controller's parts of each rung of finding.RUNGS, by its name:
#   allow: the remediate role setting (remediate_allow_*) that must be true for automation to climb it,
#          None: always;
#   work:  what it acts on, from each failing finding whose kind it can clear: a function (finding, node)
#          giving one thing or None; None: the rung acts on the node as a whole;
#   step:  the key of the plan's step its work goes under (None: no work), and with: other keys of its
#          step, each from the node ({key: what of the node});
#   shows: how one thing of its work reads in says; says: the plan's words for it, {work} the things;
#   repair: how a diagnosis's repair line spells it for one finding, (host, finding, repairs) -> line;
#   what:  what it does, for the docs and a decision held for want of its setting;
#   tasks: the remediate role's task file that performs it.
RUNG_PARTS = {
    "rerun": {"allow": None, "work": _phase, "step": "phases", "with": {}, "shows": str,
              "says": "re-apply the phase(s) {work}", "what": "re-applying the phases that make the failing settings",
              "tasks": "rung_rerun.yml",
              "repair": repair_named},
    "restart": {"allow": None, "work": _unit, "step": "services", "with": {}, "shows": str,
                "says": "restart {work}", "what": "a restart of the collection's services whose running state drifted",
                "tasks": "rung_restart.yml",
                "repair": repair_named},
    "reset_gpu": {"allow": None, "work": _reset, "step": "commands", "with": {"stop": "gpu_holders"},
                  "shows": lambda command: command[-1], "says": "reset GPU(s) {work}",
                  "what": "a reset of the failing GPUs, with the services that hold them stopped",
                  "tasks": "rung_reset_gpu.yml",
                  "repair": repair_named},
    "reboot": {"allow": "remediate_allow_reboot", "work": None, "step": None, "with": {}, "shows": None,
               "says": "reboot the node", "what": "a reboot of the node", "tasks": "rung_reboot.yml",
               "repair": _repair_reboot},
    "report_host": {"allow": "remediate_allow_report_host", "work": None, "step": None, "with": {}, "shows": None,
                    "says": "report its host to Google as faulty",
                    "what": "Google's host repair (the host reported as faulty; the VM restarts on other hardware)",
                    "tasks": "rung_report_host.yml",
                    "repair": _repair_report_host},
}
PARTS = ("allow", "work", "step", "with", "shows", "says", "what", "tasks", "repair")


def table():
    """The rungs in order, each row its name (rung) and every part: RungTableError, naming the rung, where
    the two tables do not match or a part is missing."""
    extra = sorted(set(RUNG_PARTS) - set(fd.RUNGS))
    if extra:
        raise RungTableError("ladder.RUNG_PARTS holds %s, which finding.RUNGS does not name" % ", ".join(extra))
    rows = []
    for rung in fd.RUNGS:
        parts = RUNG_PARTS.get(rung)
        if not isinstance(parts, dict):
            raise RungTableError("rung %s has no row in ladder.RUNG_PARTS" % rung)
        missing = [part for part in PARTS if part not in parts]
        unknown = sorted(set(parts) - set(PARTS))
        if missing or unknown:
            raise RungTableError("rung %s in ladder.RUNG_PARTS: %s" % (rung, "; ".join(
                (["lacks %s" % ", ".join(missing)] if missing else [])
                + (["has no part %s" % ", ".join(unknown)] if unknown else []))))
        if not parts["tasks"] or not parts["says"] or not parts["what"]:
            raise RungTableError("rung %s in ladder.RUNG_PARTS has an empty tasks, says or what" % rung)
        if (parts["work"] is None) != (parts["step"] is None) or (parts["work"] is None) != (parts["shows"] is None):
            raise RungTableError("rung %s in ladder.RUNG_PARTS: work, step and shows are all given or all None" % rung)
        rows.append(dict(parts, rung=rung))
    return tuple(rows)


def order():
    """The rungs' names, least disruptive first."""
    return tuple(row["rung"] for row in table())


def above(rung):
    """The rung one above rung, in the ladder's order: where a repair that cleared a fault once did not hold (the
    fleet ledger's repeat after a clear), the next remediation starts here. None above the top rung, or for a
    name the ladder does not hold."""
    names = order()
    return names[names.index(rung) + 1] if rung in names[:-1] else None


def allow_settings():
    """The settings that allow a rung, in the rungs' order."""
    return [row["allow"] for row in table() if row["allow"] is not None]


def allows(row, allow):
    """Whether allow ({setting: bool}; a setting not given allows) lets automation climb a rung."""
    return row["allow"] is None or bool(allow.get(row["allow"], True))


def step_keys():
    """The keys every step of the plan has for the rungs' work: [] where the step's rung has none."""
    keys = []
    for row in table():
        for key in ([row["step"]] if row["step"] else []) + list(row["with"]):
            if key not in keys:
                keys.append(key)
    return keys


def doc_table():
    """The rungs as docs/remediation.md lists them: one Markdown table, lines."""
    lines = ["| rung | the repair | allowed by | task file |", "|---|---|---|---|"]
    for row in table():
        lines.append("| `%s` | %s | %s | `roles/remediate/tasks/%s` |" % (
            row["rung"], row["what"], "`%s`" % row["allow"] if row["allow"] else "always", row["tasks"]))
    return lines


# checked at import: a rung missing a part is never skipped in silence
table()


def _is_maintenance(item):
    return item.get("component") == "host" and item.get("subject") == "maintenance"


# kind: its name; rungs: those that can clear it, least disruptive first (none: drain and hand over);
# match: whether a failing finding is of this kind (the first kind that matches); why: for the docs and
# for a node handed over. Kinds are tried in this order.
KINDS = (
    {"kind": "maintenance", "rungs": (), "match": _is_maintenance,
     "why": "Google's host maintenance: only Google ends it; a reboot or a repair here would not"},
    {"kind": "google_only", "rungs": ("report_host",), "match": lambda f: f.get("rung") == "report_host",
     "why": "a fault of the host's hardware that only Google repairs"},
    {"kind": "service", "rungs": ("restart", "reboot"), "match": lambda f: f.get("component") == "rxdm",
     "why": "a service of the collection whose running state drifted: re-applying its settings changes nothing"},
    {"kind": "gpu_reset", "rungs": ("reset_gpu", "reboot", "report_host"),
     "match": lambda f: f.get("rung") == "reset_gpu",
     "why": "a GPU fault a reset clears (the services holding the GPUs are stopped around it)"},
    {"kind": "gpu_reboot", "rungs": ("reboot", "report_host"), "match": lambda f: f.get("rung") == "reboot",
     "why": "a fault of the GPUs or their links that only a reboot clears"},
    {"kind": "settings", "rungs": ("rerun",),
     "match": lambda f: bool(f.get("phase")) or f.get("component") in REPAIR_TAGS,
     "why": "a setting a phase of site.yml makes: re-applying the phase clears it; a reboot would not"},
    {"kind": "other", "rungs": (), "match": lambda f: True,
     "why": "a fault with no repair the collection can make"},
)


def kind_of(item):
    """The kind (a row of KINDS) of a failing finding."""
    return next(kind for kind in KINDS if kind["match"](item))


def rung_row(rung):
    return next(row for row in table() if row["rung"] == rung)


def plan(failing, floor=None, allow=None, services=None, gpu_holders=()):
    """The ladder for a node's failing findings: {steps, hand_over, kinds}.

    steps: [{rung, tasks, says, and step_keys(): phases, services, commands, stop}] to try in order: every
    rung some finding's kind can clear, from the guard's floor up, allowed by allow ({setting: bool}; a
    setting not given allows), with work to do on this node. hand_over: one line per finding no rung can
    clear (its node stays drained for a person), [] otherwise. services: {component: systemd unit} of the
    services the collection runs (restart rung). gpu_holders: units stopped around a GPU reset."""
    allow = dict(allow or {})
    node = {"services": dict(services or {}), "gpu_holders": [u for u in gpu_holders if u]}
    rows = table()
    names = [row["rung"] for row in rows]
    kinds = [(item, kind_of(item)) for item in failing]
    hand_over = ["%s %s: %s" % (item.get("component"), item.get("subject"), kind["why"])
                 for item, kind in kinds if not kind["rungs"]]
    rungs = set(rung for _item, kind in kinds for rung in kind["rungs"])
    start = names.index(floor) if floor in names else 0
    keys = step_keys()
    steps = []
    for row in rows[start:]:
        if row["rung"] not in rungs or not allows(row, allow):
            continue
        work = []
        if row["work"] is not None:
            for item, kind in kinds:
                thing = row["work"](item, node) if row["rung"] in kind["rungs"] else None
                if thing and thing not in work:
                    work.append(thing)
            if not work:
                continue
        step = dict((key, []) for key in keys)
        if row["step"]:
            step[row["step"]] = work
        step.update((key, list(node[what])) for key, what in row["with"].items())
        step.update(rung=row["rung"], tasks=row["tasks"],
                    says=row["says"].format(work=", ".join(row["shows"](thing) for thing in work)))
        steps.append(step)
    return {"steps": [] if hand_over else steps, "hand_over": hand_over,
            "kinds": sorted(set(kind["kind"] for _item, kind in kinds))}
