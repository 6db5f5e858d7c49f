# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The repair ladder a remediation climbs on a node, from its failing findings (the _remediate_plan
filter): the rungs in the order of finding.RUNGS, from the least disruptive that any finding names (or
the guard's floor, when higher), each with what it does - the site.yml phases to re-apply, the node
commands (GPU resets) to run. A rung with nothing to do on this node is left out."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import REPAIR_TAGS


def plan(failing, floor=None, allowed=fd.RUNGS):
    """[{rung, phases, commands}] to try in order; [] where no allowed rung is left."""
    # a finding with no rung of its own whose component a phase configures is repaired by re-applying it
    named = [item.get("rung") if item.get("rung") in fd.RUNGS else "rerun" for item in failing
             if item.get("rung") in fd.RUNGS or item.get("phase") or item.get("component") in REPAIR_TAGS]
    start = min([fd.RUNGS.index(r) for r in named] or [0])
    if floor in fd.RUNGS:
        start = max(start, fd.RUNGS.index(floor))
    phases, commands = [], []
    for item in failing:
        phase = item.get("phase") or REPAIR_TAGS.get(item.get("component"))
        if phase and phase not in phases and item.get("rung") in (None, "rerun"):
            phases.append(phase)
        action = item.get("action")
        if (isinstance(action, list) and action and action[0] == "nvidia-smi" and "--gpu-reset" in action
                and action not in commands):
            commands.append(action)
    out = []
    for rung in fd.RUNGS[start:]:
        if rung not in allowed:
            continue
        if rung == "rerun" and not phases:
            continue
        if rung == "reset_gpu" and not commands:
            continue
        out.append({"rung": rung, "phases": phases if rung == "rerun" else [],
                    "commands": commands if rung == "reset_gpu" else []})
    return out
