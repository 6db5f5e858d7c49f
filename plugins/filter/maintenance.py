# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The maintenance role's filter (plugins/plugin_utils/plays/maintenance_plan.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.module_utils.health.slurm_node import SlurmNodeError
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import make_unsafe
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import maintenance_plan as mp

INPUTS = ("node", "slurm", "api", "metadata", "reservations", "record", "check", "check_why")


def maintenance_plan(inputs, lead_h=mp.DEFAULT_LEAD_S / 3600.0, owner=mp.OWNER, now=None):
    if not isinstance(inputs, dict) or not inputs.get("node"):
        raise AnsibleFilterError("_maintenance_plan: expects a mapping with the node's Slurm name (node), got %r"
                                 % (inputs,))
    unknown = sorted(set(inputs) - set(INPUTS))
    if unknown:
        raise AnsibleFilterError("_maintenance_plan: %s: unknown inputs %s (known: %s)"
                                 % (inputs["node"], ", ".join(unknown), ", ".join(INPUTS)))
    try:
        lead_s = float(lead_h) * 3600
    except (TypeError, ValueError):
        raise AnsibleFilterError("_maintenance_plan: lead_h must be a number of hours, not %r" % (lead_h,))
    if lead_s < 0:
        raise AnsibleFilterError("_maintenance_plan: lead_h must be 0 or more, not %r" % (lead_h,))
    args = dict((k, v) for k, v in inputs.items() if k != "node")
    try:
        if isinstance(args.get("reservations"), str):
            args["reservations"] = mp.parse_reservations(args["reservations"])
        return make_unsafe(mp.plan(inputs["node"], time.time() if now is None else float(now), lead_s, owner, **args))
    except (mp.PlanError, SlurmNodeError) as exc:
        raise AnsibleFilterError("_maintenance_plan: %s: %s" % (inputs["node"], exc))


class FilterModule(object):
    def filters(self):
        return {"_maintenance_plan": maintenance_plan}
