# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gce_instance_maintenance_info: each host's upcoming host maintenance as the Compute API has it, read from the
controller (documented in plugins/modules/gce_instance_maintenance_info.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import maintenance
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.action_base import GpuAction, with_gce_auth
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_api
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import make_unsafe

# instances.get, only what the answer needs
FIELDS = "name,status,resourceStatus(upcomingMaintenance)"

ARGUMENT_SPEC = with_gce_auth(dict(
    hosts=dict(type="list", elements="str", required=True),
))


def instance_of(host, hvars):
    """(project, zone, name) of a host from its inventory variables, or (None, why)."""
    missing = [key for key in ("gce_project", "gce_zone", "gce_name") if not hvars.get(key)]
    if missing:
        return None, "the inventory gives %s no %s" % (host, ", ".join(missing))
    return (hvars["gce_project"], hvars["gce_zone"], hvars["gce_name"]), None


def answer(resource):
    """{status, upcoming}: the instance's status and its upcoming maintenance (normalised), or None."""
    upcoming = ((resource or {}).get("resourceStatus") or {}).get("upcomingMaintenance")
    return {"status": (resource or {}).get("status"),
            "upcoming": maintenance.normalize_upcoming(upcoming) if isinstance(upcoming, dict) and upcoming else None}


class ActionModule(GpuAction):

    MODULE = "gce_instance_maintenance_info"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    def act(self, result, args, task_vars):
        hostvars = task_vars.get("hostvars") or {}
        hosts = {}
        wanted = []
        for host in args["hosts"]:
            where, why = instance_of(host, hostvars.get(host) or {})
            if where is None:
                hosts[host] = {"status": None, "upcoming": None, "error": why}
            else:
                wanted.append((host, where))
        result.update(changed=False, hosts=hosts)
        if not wanted:
            return result
        endpoint = self.gce_auth(result, args)
        missing = gce_api.check_dependencies()
        if missing:
            for host, _where in wanted:
                hosts[host] = {"status": None, "upcoming": None, "error": missing}
            return result
        try:
            with self.gce_client(args, endpoint) as client:
                for host, (project, zone, name) in wanted:
                    try:
                        resource = client.get(gce_api.instance_path(project, zone, name), params={"fields": FIELDS},
                                              project=project, what="instances.get %s" % name,
                                              permission="compute.instances.get")
                        hosts[host] = dict(answer(resource), error=None)
                    except (gce_api.GceApiError, ValueError) as exc:
                        # one instance that cannot be read costs the others nothing
                        hosts[host] = {"status": None, "upcoming": None, "error": str(exc)}
        except gce_api.GceApiError as exc:
            for host, _where in wanted:
                hosts[host] = {"status": None, "upcoming": None, "error": "cannot reach the Compute API: %s" % exc}
        # the API's text is never templated
        result["hosts"] = make_unsafe(hosts)
        return result
