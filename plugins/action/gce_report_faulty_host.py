# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gce_report_faulty_host: instances.reportHostAsFaulty from the controller (documented in
plugins/modules/gce_report_faulty_host.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.action_base import GpuAction, with_gce_auth
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_api
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import make_unsafe

BEHAVIORS = ["PERFORMANCE", "SILENT_DATA_CORRUPTION", "UNRECOVERABLE_GPU_ERROR", "BEHAVIOR_UNSPECIFIED"]
WRITE_SCOPES = ["https://www.googleapis.com/auth/compute"]


def request_for(args):
    """(path, body) of the call; what a dry run shows."""
    path = gce_api.instance_path(args["project"], args["zone"], args["instance"], "reportHostAsFaulty")
    body = {"disruptionSchedule": "IMMEDIATE",
            "faultReasons": [{"behavior": args["behavior"], "description": args["description"]}]}
    return path, body


ARGUMENT_SPEC = with_gce_auth(dict(
    instance=dict(type="str", required=True),
    project=dict(type="str", required=True),
    zone=dict(type="str", required=True),
    behavior=dict(type="str", default="PERFORMANCE", choices=BEHAVIORS),
    description=dict(type="str", required=True),
))


class ActionModule(GpuAction):

    MODULE = "gce_report_faulty_host"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    ERRORS = (gce_api.GceApiError,)

    def act(self, result, args, task_vars):
        endpoint = self.gce_auth(result, args)
        path, body = request_for(args)
        vm = "instance %s (project %s, zone %s)" % (args["instance"], args["project"], args["zone"])
        request = {"method": "POST", "url": "%s/compute/v1/%s" % (endpoint, path), "body": body}
        result.update(request=request, dry_run=self.check_mode)
        if self.check_mode:
            result.update(changed=True, msg="dry run: would report the host of %s as faulty (%s)"
                          % (vm, args["behavior"]))
            return result
        with self.gce_client(args, endpoint, scopes=WRITE_SCOPES) as client:
            operation = client.post(path, body, what="reporting the host of %s as faulty" % vm,
                                    permission="compute.instances.reportHostAsFaulty")
        # the operation's name comes from the API: never templated
        name = make_unsafe((operation or {}).get("name"))
        result.update(changed=True, operation=name, msg=make_unsafe(
            "reported the host of %s as faulty (%s): operation %s" % (vm, args["behavior"], name)))
        return result
