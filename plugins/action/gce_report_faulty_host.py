# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gce_report_faulty_host: instances.reportHostAsFaulty from the controller (documented in
plugins/modules/gce_report_faulty_host.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_api
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import make_unsafe

BEHAVIORS = ["PERFORMANCE", "SILENT_DATA_CORRUPTION", "UNRECOVERABLE_GPU_ERROR", "BEHAVIOR_UNSPECIFIED"]
WRITE_SCOPES = ["https://www.googleapis.com/auth/compute"]
ARGUMENT_SPEC = dict(
    instance=dict(type="str", required=True),
    project=dict(type="str", required=True),
    zone=dict(type="str", required=True),
    behavior=dict(type="str", default="PERFORMANCE", choices=BEHAVIORS),
    description=dict(type="str", required=True),
    **gce_api.AUTH_ARGUMENT_SPEC
)


def request_for(args):
    """(path, body) of the call; what a dry run shows."""
    path = gce_api.instance_path(args["project"], args["zone"], args["instance"], "reportHostAsFaulty")
    body = {"disruptionSchedule": "IMMEDIATE",
            "faultReasons": [{"behavior": args["behavior"], "description": args["description"]}]}
    return path, body


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        endpoint = gce_api.auth_from_env(args, os.environ)
        result["warnings"] = gce_api.auth_warnings(args["auth_kind"], endpoint, args.get("service_account_file"))
        try:
            path, body = request_for(args)
        except gce_api.GceApiError as exc:
            raise AnsibleActionFail("gce_report_faulty_host: %s" % exc)
        vm = "instance %s (project %s, zone %s)" % (args["instance"], args["project"], args["zone"])
        request = {"method": "POST", "url": "%s/compute/v1/%s" % (endpoint, path), "body": body}
        result.update(request=request, dry_run=bool(self._task.check_mode))
        if self._task.check_mode:
            result.update(changed=True, msg="dry run: would report the host of %s as faulty (%s)"
                          % (vm, args["behavior"]))
            return result
        missing = gce_api.check_dependencies()
        if missing:
            raise AnsibleActionFail("gce_report_faulty_host: %s" % missing)
        client = None
        try:
            client = gce_api.client_for(args, endpoint, scopes=WRITE_SCOPES)
            operation = client.post(path, body, what="reporting the host of %s as faulty" % vm,
                                    permission="compute.instances.reportHostAsFaulty")
        except gce_api.GceApiError as exc:
            raise AnsibleActionFail("gce_report_faulty_host: %s" % exc)
        finally:
            if client is not None:
                client.close()
        # the operation's name comes from the API: never templated
        name = make_unsafe((operation or {}).get("name"))
        result.update(changed=True, operation=name, msg=make_unsafe(
            "reported the host of %s as faulty (%s): operation %s" % (vm, args["behavior"], name)))
        return result
