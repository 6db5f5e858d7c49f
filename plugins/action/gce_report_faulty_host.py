# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gce_report_faulty_host: instances.reportHostAsFaulty from the controller, by Google's rules (documented in
plugins/modules/gce_report_faulty_host.py; the rules are plugins/plugin_utils/gce/faulty_host.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.utils.display import Display

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.action_base import ActionError, GpuAction, \
    with_gce_auth
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import faulty_host as fh
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_api
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import make_unsafe

display = Display()

BEHAVIORS = list(fh.BEHAVIORS)
# what a report is sent with when neither the option nor a finding says
DEFAULT_BEHAVIOR = "PERFORMANCE"
WRITE_SCOPES = ["https://www.googleapis.com/auth/compute"]
SELF_LINK_BASE = "https://www.googleapis.com/compute/v1/"


def request_for(args):
    """(path, body) of the call; what a dry run shows."""
    path = gce_api.instance_path(args["project"], args["zone"], args["instance"], "reportHostAsFaulty")
    body = {"disruptionSchedule": "IMMEDIATE",
            "faultReasons": [{"behavior": args["behavior"], "description": args["description"]}]}
    return path, body


def chosen_behavior(args):
    """(behavior, where it came from): the option, else the finding's row of faulty_host.BEHAVIOR_RULES."""
    if args.get("behavior"):
        return args["behavior"], "option"
    if args.get("finding"):
        behavior, kind = fh.behavior_from(args["finding"])
        return behavior, "finding (%s)" % kind
    return DEFAULT_BEHAVIOR, "default"


ARGUMENT_SPEC = with_gce_auth(dict(
    instance=dict(type="str", required=True),
    project=dict(type="str", required=True),
    zone=dict(type="str", required=True),
    behavior=dict(type="str", choices=BEHAVIORS),
    finding=dict(type="dict"),
    description=dict(type="str", required=True),
    wait_s=dict(type="int", default=900),
))


class ActionModule(GpuAction):

    MODULE = "gce_report_faulty_host"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    ERRORS = (gce_api.GceApiError,)

    def act(self, result, args, task_vars):
        if args["wait_s"] < 0:
            raise ActionError("wait_s is %d; it must be 0 (do not follow the operation) or more" % args["wait_s"])
        endpoint = self.gce_auth(result, args)
        args["behavior"], source = chosen_behavior(args)
        path, body = request_for(args)
        vm = "instance %s (project %s, zone %s)" % (args["instance"], args["project"], args["zone"])
        request = {"method": "POST", "url": "%s/compute/v1/%s" % (endpoint, path), "body": body}
        result.update(request=request, dry_run=self.check_mode, behavior=args["behavior"], behavior_from=source,
                      changed=False)
        try:
            with self.gce_client(args, endpoint, scopes=WRITE_SCOPES) as client:
                refusal = self._qualify(client, args, result)
                if refusal:
                    return self._end(result, refusal[0], "the host of %s was not reported (%s): %s"
                                     % (vm, refusal[0], refusal[1]))
                if self.check_mode:
                    return self._dry_run(result, vm, args, "it qualifies")
                return self._report(client, args, path, body, vm, result)
        except gce_api.GceApiError as exc:
            if self.check_mode:
                # a dry run still shows the request where the checks cannot be read
                result["warnings"].append("could not check that %s qualifies: %s" % (vm, exc))
                return self._dry_run(result, vm, args, "not checked: %s" % exc)
            outcome = fh.outcome_of_error(exc.status, str(exc))
            return self._end(result, outcome, "the host of %s was not reported (%s): %s" % (vm, outcome, exc))

    def _qualify(self, client, args, result):
        """Google's conditions, read from the API: None when the VM qualifies, else (outcome, why)."""
        ipath = gce_api.instance_path(args["project"], args["zone"], args["instance"])
        instance = client.get(ipath, params={"fields": fh.INSTANCE_FIELDS},
                              what="reading the VM", permission="compute.instances.get") or {}
        scheduling = instance.get("scheduling") or {}
        result.update(instance_status=make_unsafe(instance.get("status")),
                      machine_type=make_unsafe(gce_api_name(instance.get("machineType"))),
                      provisioning_model=make_unsafe(scheduling.get("provisioningModel") or "STANDARD"))
        refusal = fh.qualify(instance)
        if refusal:
            return refusal
        target = instance.get("selfLink") or SELF_LINK_BASE + ipath
        operations = []
        zpath = "projects/%s/zones/%s/operations" % (gce_api.segment(args["project"]), gce_api.segment(args["zone"]))
        params = {"filter": fh.in_flight_filter(target), "fields": fh.OPERATION_FIELDS,
                  "maxResults": gce_api.PAGE_SIZE}
        for page in client.list_pages(zpath, params, args["project"], what="listing the zone's operations",
                                      permission="compute.zoneOperations.list"):
            operations.extend(page.get("items") or [])
        busy = fh.in_flight(operations, target)
        result["in_flight"] = make_unsafe(["%s %s (%s)" % (op.get("operationType"), op.get("name"),
                                                           op.get("status")) for op in busy])
        if busy:
            return "in_flight", "%s is in progress on the VM; report it again once that has ended" % (
                "; ".join(result["in_flight"]))
        return None

    def _dry_run(self, result, vm, args, checked):
        result.update(changed=True, outcome="dry_run", msg=make_unsafe(
            "dry run: would report the host of %s as faulty (%s); %s" % (vm, args["behavior"], checked)))
        return result

    def _end(self, result, outcome, line):
        result["outcome"] = outcome
        if fh.failed(outcome):
            return self.failed(result, ActionError(make_unsafe(line)))
        result["msg"] = make_unsafe(line)
        return result

    def _report(self, client, args, path, body, vm, result):
        operation = client.post(path, body, what="sending the report",
                                permission="compute.instances.reportHostAsFaulty") or {}
        # from here the report was made: whatever follows says so, and nothing sends it again
        result["changed"] = True
        name = operation.get("name")
        result["operation"] = make_unsafe(name)
        if not args["wait_s"] or not name:
            result["operation_status"] = make_unsafe(operation.get("status"))
            return self._end(result, "reported", "reported the host of %s as faulty (%s): operation %s, not "
                                                 "followed (wait_s 0)" % (vm, args["behavior"], name))
        opath = "projects/%s/zones/%s/operations/" % (gce_api.segment(args["project"]), gce_api.segment(args["zone"]))

        def read(op_name):
            return client.get(opath + gce_api.segment(op_name), what="reading operation %s" % op_name,
                              permission="compute.zoneOperations.get") or {}

        def say(line):
            display.v("%s: %s: %s" % (self.MODULE, vm, line))

        try:
            operation, took = fh.follow(read, operation, args["wait_s"], say=say)
        except gce_api.GceApiError as exc:
            return self._end(result, "error", "reported the host of %s as faulty (operation %s), but following the "
                                              "operation failed: %s" % (vm, name, exc))
        status = operation.get("status") or "unknown"
        result.update(operation_status=make_unsafe(status), elapsed_s=round(took, 1))
        if status != "DONE":
            return self._end(result, "timed_out", "reported the host of %s as faulty (operation %s), which is "
                                                  "still %s after %.0f s (wait_s); it goes on at Google and is "
                                                  "not sent again" % (vm, name, status, took))
        error = fh.operation_error(operation)
        if error:
            result["operation_error"] = make_unsafe(error[1])
            return self._end(result, error[0], "reported the host of %s as faulty, but operation %s ended with an "
                                               "error after %.0f s: %s" % (vm, name, took, error[1]))
        return self._end(result, "reported", "reported the host of %s as faulty (%s): operation %s DONE after "
                                             "%.0f s" % (vm, args["behavior"], name, took))


def gce_api_name(url):
    return (url or "").rstrip("/").rsplit("/", 1)[-1] or None
