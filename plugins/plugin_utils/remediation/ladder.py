# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The repair ladder a remediation climbs on a node, from its failing findings (the _remediate_plan
filter).

Two tables. RUNG_TABLE holds each rung (in finding.RUNGS order, least disruptive first): the setting that
allows it (None: always), the task file of the remediate role that performs it (one file per rung, chosen
by name) and how the plan says it. KINDS holds, per kind of finding, the rungs that can clear it: a rung
that cannot clear any failing finding is never climbed, and a finding no rung can clear (a maintenance
event, a fault with no repair here) leaves the node drained and handed over. Everything that lists rungs
or kinds (the role, the docs, the tests) is built from these tables or checked against them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import REPAIR_TAGS

# rung: its name; allow: the remediate role setting that must be true for automation to climb it;
# tasks: the role's task file; says: the plan's words for it, with {work} for what it acts on
RUNG_TABLE = (
    {"rung": "rerun", "allow": None, "tasks": "rung_rerun.yml", "says": "re-apply {work}"},
    {"rung": "restart", "allow": None, "tasks": "rung_restart.yml", "says": "restart {work}"},
    {"rung": "reset_gpu", "allow": None, "tasks": "rung_reset_gpu.yml", "says": "reset {work}"},
    {"rung": "reboot", "allow": "remediate_allow_reboot", "tasks": "rung_reboot.yml", "says": "reboot the node"},
    {"rung": "report_host", "allow": "remediate_allow_report_host", "tasks": "rung_report_host.yml",
     "says": "report its host to Google as faulty"},
)


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
    return next(row for row in RUNG_TABLE if row["rung"] == rung)


def _gpu_reset(action):
    return isinstance(action, list) and len(action) > 1 and action[0] == "nvidia-smi" and "--gpu-reset" in action


def plan(failing, floor=None, allow=None, services=None, gpu_holders=()):
    """The ladder for a node's failing findings: {steps, hand_over, kinds}.

    steps: [{rung, tasks, phases, services, commands, stop, says}] to try in order: every rung some
    finding's kind can clear, from the guard's floor up, allowed by allow ({setting: bool}; a setting not
    given allows), with work to do on this node. hand_over: one line per finding no rung can clear
    (its node stays drained for a person), [] otherwise. services: {component: systemd unit} of the
    services the collection runs (restart rung). gpu_holders: units stopped around a GPU reset."""
    allow, services = dict(allow or {}), dict(services or {})
    kinds = [(item, kind_of(item)) for item in failing]
    hand_over = ["%s %s: %s" % (item.get("component"), item.get("subject"), kind["why"])
                 for item, kind in kinds if not kind["rungs"]]
    rungs = set(rung for _item, kind in kinds for rung in kind["rungs"])
    start = fd.RUNGS.index(floor) if floor in fd.RUNGS else 0
    phases, units, commands = [], [], []
    for item, kind in kinds:
        phase = item.get("phase") or REPAIR_TAGS.get(item.get("component"))
        if kind["kind"] == "settings" and phase and phase not in phases:
            phases.append(phase)
        unit = services.get(item.get("component"))
        if kind["kind"] == "service" and unit and unit not in units:
            units.append(unit)
        if _gpu_reset(item.get("action")) and item["action"] not in commands:
            commands.append(item["action"])
    work = {"rerun": phases, "restart": units, "reset_gpu": commands, "reboot": True, "report_host": True}
    steps = []
    for row in RUNG_TABLE:
        rung = row["rung"]
        if fd.RUNGS.index(rung) < start or rung not in rungs or not work[rung]:
            continue
        if row["allow"] is not None and not allow.get(row["allow"], True):
            continue
        said = {"rerun": "the phase(s) %s" % ", ".join(phases), "restart": ", ".join(units),
                "reset_gpu": "GPU(s) %s" % ", ".join(c[-1] for c in commands)}.get(rung, "")
        steps.append({"rung": rung, "tasks": row["tasks"], "phases": phases if rung == "rerun" else [],
                      "services": units if rung == "restart" else [],
                      "commands": commands if rung == "reset_gpu" else [],
                      "stop": [u for u in gpu_holders if u] if rung == "reset_gpu" else [],
                      "says": row["says"].format(work=said)})
    return {"steps": [] if hand_over else steps, "hand_over": hand_over,
            "kinds": sorted(set(kind["kind"] for _item, kind in kinds))}
