# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""remediation_guard: what automation may do about alerts, on the controller (documented in
plugins/modules/remediation_guard.py; the work is plugin_utils/remediation/guard.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import make_unsafe
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import alert_data, guard

ARGUMENT_SPEC = dict(
    alerts=dict(type="list", elements="raw", default=[]),
    alert_vars=dict(type="list", elements="str", default=[]),
    outcome=dict(type="dict"),
    release=dict(type="str"),
    hosts=dict(type="list", elements="str", required=True),
    state_file=dict(type="path", required=True),
    audit_log=dict(type="path", required=True),
    enabled=dict(type="bool", default=True),
    dry_run=dict(type="bool", default=True),
    max_per_hour=dict(type="int", default=2),
    max_share=dict(type="float", default=0.1),
    escalate_window_s=dict(type="int", default=21600),
    allow_report_host=dict(type="bool", default=False),
    node_label=dict(type="str", default="instance"),
)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        try:
            # read as stored, never templated: an alert's text is data (plugin_utils/remediation/alert_data.py)
            args["alerts"] = make_unsafe(alert_data.plain(args["alerts"], "alerts")
                                         + alert_data.alerts_from_vars(task_vars or {}, args["alert_vars"]))
        except alert_data.AlertDataError as exc:
            raise AnsibleActionFail("remediation_guard: %s" % exc)
        given = [name for name in ("outcome", "release") if args.get(name)] + (["alerts"] if args["alerts"] else [])
        if len(given) > 1:
            raise AnsibleActionFail("remediation_guard: give one of alerts, outcome and release, not %s"
                                    % " and ".join(given))
        check = bool(self._task.check_mode)
        now = time.time()
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
        try:
            settings = guard.settings_of(args)
            with guard.StateFile(args["state_file"], create=not check) as state_file:
                judge = guard.Guard(state_file.read(), settings, now)
                lines, out = self._step(judge, args, stamp)
                if not check:
                    if any(line["decision"] in ("act", "outcome", "release") for line in lines):
                        state_file.write(judge.trimmed())
                    guard.audit(args["audit_log"], lines)
        except guard.GuardError as exc:
            raise AnsibleActionFail("remediation_guard: %s" % exc)
        result.update(out)
        result["changed"] = bool(out.get("act")) or bool(out.get("recorded")) or bool(out.get("released"))
        result["audit"] = make_unsafe(lines)
        result["messages"] = make_unsafe(["%s %s: %s" % (line["decision"], line.get("node") or "-", line.get("reason")
                                                         or line.get("outcome") or "released %d run(s)"
                                                         % len(line.get("runs") or []))
                                          for line in lines])
        return result

    @staticmethod
    def _step(judge, args, stamp):
        hosts = list(args["hosts"])
        if args.get("outcome"):
            item = args["outcome"]
            if item.get("outcome") not in guard.OUTCOMES:
                raise guard.GuardError("outcome must be one of %s, not %r"
                                       % (", ".join(guard.OUTCOMES), item.get("outcome")))
            run = judge.record(item.get("run"), item["outcome"], item.get("rung"), item.get("returned", False))
            if run is None:
                raise guard.GuardError("no remediation run %r in the state file" % (item.get("run"),))
            line = {"time": stamp, "decision": "outcome", "node": run["node"], "run": run["id"],
                    "alert": run.get("alert"), "rung": item.get("rung"), "outcome": item["outcome"],
                    "returned": bool(item.get("returned")), "detail": item.get("detail", "")}
            return [line], {"recorded": make_unsafe(run)}
        if args.get("release"):
            runs = judge.release(args["release"])
            line = {"time": stamp, "decision": "release", "node": args["release"], "runs": [r["id"] for r in runs]}
            return [line], {"released": [r["id"] for r in runs]}
        lines, act = [], []
        for alert in args["alerts"]:
            decision = judge.decide(alert, hosts)
            lines.append(dict(decision, time=stamp))
            if decision["decision"] == "act":
                act.append({"node": decision["node"], "rung": decision["rung"], "run": decision["run"],
                            "finding": decision["finding"], "alert": decision["alert"]})
        return lines, {"decisions": make_unsafe(lines), "act": make_unsafe(act),
                       "held": make_unsafe([d for d in lines if d["decision"] == "held"])}
