# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Nodes that run a job, or cannot be shown idle, left out of the NCCL tests with a finding each.

The input is what gpudirect.gcp.gpu_busy_info returned on each node (module_utils/gpu/gpu_busy.py
decides busy, unknown or idle). The nccl_tests role and diagnose both leave nodes out through
here, so a node is left out, and named, the same way on every path that runs an NCCL test.
Controller-side only, pure Python.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.common.safe_text import one_line
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import finding

SUBJECT = "workload"
OPTION = "nccl_tests_test_busy_nodes"
NOT_RUN = "the GPU busy check did not run (%s)"


def state(check):
    """idle, busy or unknown from a gpu_busy_info result; a result without a state (the module failed,
    the node was skipped) is unknown, never idle."""
    value = (check or {}).get("state") if isinstance(check, dict) else None
    return value if value in ("idle", "busy", "unknown") else "unknown"


def reasons(check):
    check = check if isinstance(check, dict) else {}
    given = check.get("reasons") or []
    # a node's reasons as it gave them; a single text is one reason, never one per character
    found = [one_line(r, 600) for r in (given[:50] if isinstance(given, list) else [given])]
    if found:
        return found
    if state(check) == "unknown":
        return [NOT_RUN % one_line(check.get("msg") or "no result", 300)]
    return []


def findings(checks, hosts, test_busy=False):
    """A warn finding for each node of hosts that is not idle: component gpu, subject workload."""
    out = []
    for host in hosts:
        check = (checks or {}).get(host)
        now = state(check)
        if now == "idle":
            continue
        what = "runs a job" if now == "busy" else "is not known to be idle"
        done = ("tested anyway (%s=true)" % OPTION if test_busy else
                "left out of the NCCL tests; drain it and run them when its jobs end, or set %s=true" % OPTION)
        out.append(finding(host, "gpu", SUBJECT, "warn", "%s, %s: %s" % (what, done, "; ".join(reasons(check))),
                           None))
    return out


def left_out(items, test_busy=False):
    """The nodes these findings leave out of the NCCL tests (none when busy nodes are tested anyway)."""
    if test_busy:
        return []
    return [f["host"] for f in items if f.get("component") == "gpu" and f.get("subject") == SUBJECT]
