# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""remediation_guard: what automation may do about alerts, on the controller (documented in
plugins/modules/remediation_guard.py; the work is plugin_utils/remediation/guard.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.action_base import GpuAction, with_gce_auth
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import make_unsafe
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import alert_data, guard, guard_store


ARGUMENT_SPEC = with_gce_auth(dict(
    alerts=dict(type="list", elements="raw", default=[]),
    alert_vars=dict(type="list", elements="str", default=[]),
    outcome=dict(type="dict"),
    release=dict(type="str"),
    release_reason=dict(type="str", default="released by a person"),
    preview=dict(type="dict"),
    held=dict(type="bool", default=False),
    hosts=dict(type="list", elements="str", required=True),
    addresses=dict(type="dict", default={}),
    places=dict(type="dict", default={}),
    state_file=dict(type="path"),
    audit_log=dict(type="path"),
    state_bucket=dict(type="str"),
    state_prefix=dict(type="str", default=guard_store.DEFAULT_PREFIX),
    storage_endpoint=dict(type="str"),
    enabled=dict(type="bool", default=True),
    dry_run=dict(type="bool", default=True),
    max_per_hour=dict(type="int", default=2),
    max_share=dict(type="float", default=0.1),
    escalate_window_s=dict(type="int", default=21600),
    allow_report_host=dict(type="bool", default=False),
    allow=dict(type="dict", default={}),
    node_label=dict(type="list", elements="str", default=["instance"]),
    repeat_after_clear=dict(type="dict", default={}),
))


class ActionModule(GpuAction):

    MODULE = "remediation_guard"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    ERRORS = (alert_data.AlertDataError, guard.GuardError)

    def act(self, result, args, task_vars):
        # read as stored, never templated: an alert's text is data (plugin_utils/remediation/alert_data.py)
        args["alerts"] = make_unsafe(alert_data.plain(args["alerts"], "alerts")
                                     + alert_data.alerts_from_vars(task_vars, args["alert_vars"]))
        books = None
        try:
            books = guard_store.books_for(args, os.environ, check=guard.runs_of)
            result["warnings"] = list(books.warnings)
            lines, out = guard.apply(args, self.check_mode, time.time(), books=books)
        finally:
            if books is not None:
                books.close()
        result.update(make_unsafe(out))
        result["audit"] = make_unsafe(lines)
        result["messages"] = make_unsafe([guard.message(line) for line in lines])
        return result
