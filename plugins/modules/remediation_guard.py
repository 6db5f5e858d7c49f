#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: remediation_guard
short_description: Decide what automated remediation may do about alerts, within caps, and log every decision
version_added: 1.1.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Before automation touches a node for an alert (the playbook gpudirect.gcp.remediate, run by the collection's
    rulebook from Alertmanager's webhooks, or by an AWX job), this decides per alert - C(act) (with the rung to
    start at and a run id), C(held) (by a cap, the off switch or a rung left to a person), C(dry_run) or
    C(ignored) - and appends one JSON line per decision to O(audit_log).
  - A resolved alert never returns a node to service (a node that stopped reporting resolves its alerts too);
    a node goes back only after a passing node check in the remediation that drained it.
  - At most O(max_per_hour) remediations start in any hour and at most O(max_share) of O(hosts) is under
    remediation at once (drained by it and not returned); the rest are held, and the decision says by what.
  - A node that fails again within O(escalate_window_s) of a remediation starts one rung above the last one run.
  - With O(outcome) it records how a run ended; with O(release) it ends a node's open runs after a person
    returned it. State is a JSON file, locked from read to write.
  - An action plugin; it runs on the controller whatever the task's host. In check mode it decides and writes
    nothing.
options:
  alerts:
    description:
      - Alertmanager alerts (each with C(status), C(labels), C(annotations)), as its webhook sends them.
      - A task templates its arguments, so an alert given here as C("{{ ansible_eda.event.alert }}") has any Jinja
        expression in its text evaluated on the controller first. Give alerts that come from outside with
        O(alert_vars) instead.
    type: list
    elements: raw
    default: []
  alert_vars:
    description:
      - Names of variables that hold alerts, read as they were given and never templated, so that an alert's labels
        and annotations stay text whatever they hold; every string of them is marked unsafe.
      - A variable holding a mapping with C(event.alert) (ansible-rulebook's C(ansible_eda), from C(run_playbook) or
        the EDA controller's C(run_job_template)) gives that alert; a list gives its items; an absent or empty one
        gives none. Anything else (a template string, say) fails the task in one line naming the variable.
    type: list
    elements: str
    default: []
  outcome:
    description: How a run ended - C(run) (its id), C(outcome) (C(cleared), C(not_cleared), C(failed)),
      C(rung) (the last rung run), C(returned) (back in service) and C(detail).
    type: dict
  release:
    description: A node a person returned to service; its open runs end.
    type: str
  hosts:
    description: The node set the caps apply to (the inventory's GPU nodes).
    type: list
    elements: str
    required: true
  state_file:
    description: Where the runs are kept between decisions.
    type: path
    required: true
  audit_log:
    description: The JSON-lines log every decision and outcome is appended to.
    type: path
    required: true
  enabled:
    description: The global switch; V(false) holds every alert.
    type: bool
    default: true
  dry_run:
    description: Decide and log, start nothing.
    type: bool
    default: true
  max_per_hour:
    description: Remediations that may start in any hour.
    type: int
    default: 2
  max_share:
    description: The share of O(hosts) that may be under remediation at once (rounded down, at least 1; 0.1 of 64 nodes is 6).
    type: float
    default: 0.1
  escalate_window_s:
    description: A node failing again within this many seconds of a remediation starts one rung higher.
    type: int
    default: 21600
  allow_report_host:
    description: Let automation climb to C(report_host) (Google's host repair; the VM restarts elsewhere).
    type: bool
    default: false
  node_label:
    description: The alert label naming the node (a C(:port) is dropped).
    type: str
    default: instance
extends_documentation_fragment:
  - gpudirect.gcp.attributes
attributes:
  check_mode:
    support: full
    details: Decides and writes nothing (no state, no audit line).
  diff_mode:
    support: none
  idempotent:
    support: none
    details: Every decision is appended to the audit; an alert acted on once is ignored after (its node is under
      remediation).
  action:
    support: full
    description: Runs on the controller as an action plugin.
"""

EXAMPLES = r"""
- name: Decide what to do about the alert the rulebook passed, or the alerts an AWX job was given
  gpudirect.gcp.remediation_guard:
    # read as given, never templated: an alert's text is data
    alert_vars: [ansible_eda, remediate_alerts]
    hosts: "{{ groups['gpu_nodes'] }}"
    state_file: /var/lib/gpudirect-remediate/state.json
    audit_log: /var/log/gpudirect-remediate/audit.jsonl
    dry_run: false
  register: guarded
"""

RETURN = r"""
decisions:
  description: One per alert - C(decision), C(node), C(alert), C(status), C(finding), C(rung), C(run), C(reason), C(time).
  returned: with alerts
  type: list
  elements: dict
act:
  description: The alerts to act on - C(node), C(rung), C(run), C(finding), C(alert).
  returned: with alerts
  type: list
  elements: dict
held:
  description: The decisions held by a guard.
  returned: with alerts
  type: list
  elements: dict
recorded:
  description: The run as recorded (with outcome).
  returned: with outcome
  type: dict
released:
  description: The ids of the runs released.
  returned: with release
  type: list
  elements: str
messages:
  description: Each decision in one line - what, the node, why.
  returned: always
  type: list
  elements: str
audit:
  description: The lines appended to O(audit_log) (none in check mode).
  returned: always
  type: list
  elements: dict
"""
