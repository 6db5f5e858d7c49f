# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gce_firewall_info: read the VPC firewall rules from the controller and judge them for the
nodes' traffic (documented in plugins/modules/gce_firewall_info.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.action_base import ActionError, GpuAction, with_gce_auth
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_api, gce_firewalls
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import make_unsafe


ARGUMENT_SPEC = with_gce_auth(dict(
    hosts=dict(type="list", elements="str", required=True),
    family=dict(type="str", required=True),
    projects=dict(type="list", elements="str"),
))


class ActionModule(GpuAction):

    MODULE = "gce_firewall_info"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    @staticmethod
    def _could_not_check(result, why):
        """A check that cannot run says so, as a warning; it never stops the cluster by itself."""
        result["could_not_check"] = why
        result["warnings"] = ["gce_firewall_info: could not check the VPC firewall rules: %s" % why]
        return result

    def act(self, result, args, task_vars):
        if args["family"] not in families.FAMILIES:
            raise ActionError("family: unknown GPU family %r; known: %s"
                              % (args["family"], ", ".join(families.family_names())))
        hostvars = task_vars.get("hostvars") or {}
        nodes, projects = [], []
        for host in args["hosts"]:
            hvars = hostvars.get(host) or {}
            nodes.append({"nics": hvars.get("gce_nics") or [], "gpu_nics": hvars.get("gpu_nics") or []})
            if hvars.get("gce_project") and hvars["gce_project"] not in projects:
                projects.append(hvars["gce_project"])
        projects = args["projects"] or projects
        result.update(changed=False, projects=projects, problems=[], rules=0, could_not_check=None)
        if not projects:
            return self._could_not_check(result, "no project: the hosts carry no gce_project and the projects "
                                                 "option is empty")
        endpoint = self.gce_auth(result, args)
        missing = gce_api.check_dependencies()
        if missing:
            return self._could_not_check(result, missing)
        rules = []
        try:
            with self.gce_client(args, endpoint) as client:
                for project in projects:
                    rules.extend(client.firewalls(project))
        except gce_api.GceApiError as exc:
            return self._could_not_check(result, make_unsafe("cannot read the firewall rules: %s" % exc))
        # names and ranges come from the API: never templated
        result.update(rules=len(rules), problems=make_unsafe(gce_firewalls.judge(args["family"], nodes, rules)))
        return result
