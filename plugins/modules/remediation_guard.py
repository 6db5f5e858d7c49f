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
  - A node that fails again within O(escalate_window_s) of the end of a remediation in which a rung ran starts
    one rung above the last one run, however long that remediation took.
  - In dry run the caps are counted as a live run counts them (each alert sees the ones before it in the same
    call), nothing is kept in O(state_file), and the nodes that would be acted on are returned in RV(preview).
  - Give one of O(alerts), O(outcome), O(release), O(preview) and O(held). With O(outcome) it records how a run
    ended; with O(release) it ends a node's open runs after a person returned it; with O(preview) it logs what a
    dry run would do on a node; with O(held) it returns the nodes a remediation holds.
  - 'State is JSON, C({"version": 1, "runs": [...]}); a state of another shape, a run in it of another shape, or a
    newer version fails the task in one line naming the file or object (and the run), and is never read as empty.
    A state without a version, from an older release, is read as version 1.'
  - The books (the state and the audit) are kept in one of two places. With O(state_bucket), in Cloud Storage, so
    that they outlive an AWX job and every job sees the runs of the others - the state in the object
    C(<state_prefix>/state.json), the audit as one object per decision batch,
    C(<state_prefix>/audit/<UTC time>-<batch>.jsonl), each line with its C(batch).
  - In the bucket the state is written only over the generation the decisions were made on (C(ifGenerationMatch));
    when another job wrote it first, the batch is noted in the audit as superseded (a line with C(decision)
    C(retried) naming it) and the alerts are decided again on what that job wrote, up to 8 times, so two jobs
    never both take the last slot of a cap.
  - Without O(state_bucket), in O(state_file) (locked from read to write) and O(audit_log) on the controller.
  - Every decision's audit line is written before the state, so a decision that cannot be logged changes nothing.
  - An alert names its node by its O(node_label) label (the first of them set, then C(node), then C(nodename)),
    without a C(:port). That is a node's inventory name, or the address of exactly one node in O(addresses)
    (Prometheus's default C(instance) label is the scrape address); the decision and the audit use the inventory
    name (and C(named), what the alert said, where it differs).
  - Firing alerts about one node in one call are one decision, about the most severe (label C(severity)) or else
    the first; the others are listed in its C(also).
  - A firing alert that names no node of O(hosts), or an empty O(hosts), is logged (C(ignored)) and returned in
    RV(unplaced); the caller fails the run then. No run starts in such a call - the alerts that would start one are
    C(held), saying why - since the nodes are never reached after a failed run; a dry run still decides as usual.
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
    description:
      - How a run ended - C(run) (its id), C(outcome), C(rung) (the last rung run, or none), C(returned) (back in
        service) and C(detail).
      - C(outcome) is one of C(cleared) (its rung cleared the finding), C(not_cleared) (no rung did; the node stays
        drained), C(failed) (a step failed; the node stays drained), C(released) (a person returned the node),
        C(waiting_for_job) (the node was drained but its job outlived the wait; no rung ran, the node stays drained
        for a person and the run stays open, holding the node, until O(release)) or C(person_drained) (someone
        else's drain was found on the node; nothing was done and the run is closed, as released).
      - A run in which no rung ran (C(waiting_for_job), C(person_drained)) does not make the node's next
        remediation start a rung higher.
    type: dict
  release:
    description: A node a person returned to service (resumed outside the automation); its open runs end, with
      O(release_reason).
    type: str
  release_reason:
    description: Why the node was released, kept in the audit line (C(reason)) and in each run released
      (C(released_reason)).
    type: str
    default: released by a person
  preview:
    description:
      - What a dry run would do on a node, after a read-only check of it - C(node) and C(plan), one line of text
        (C(would drain node1, wait for job 42, then reset GPU 3)).
      - It is appended to O(audit_log) as a line with C(decision) C(preview), C(node), C(plan) and C(time); the state
        is not read or changed.
    type: dict
  held:
    description:
      - Return the nodes an open run holds (drained by a remediation, not returned, not released) in
        RV(held_nodes), and nothing else - no decision, no audit line, no file made or changed.
    type: bool
    default: false
  hosts:
    description: The node set the caps apply to (the inventory's GPU nodes).
    type: list
    elements: str
    required: true
  addresses:
    description:
      - The address of each node of O(hosts) (its C(ansible_host); a C(:port) is dropped), so that an alert naming a
        node by address finds it. Names not in O(hosts), and empty addresses, are not used.
    type: dict
    default: {}
  places:
    description:
      - Where each node sits, by node - C({cluster, block, subblock, host, nvlink_domain}), C(host) being the
        physical host under the VM; the remediate role gives each node's from the inventory's C(gce_topology). An
        audit line about a node given here has its C(place), each part one line of at most 128 characters.
    type: dict
    version_added: 1.2.0
    default: {}
  state_file:
    description: Where the runs are kept between decisions, without O(state_bucket). Required then.
    type: path
  audit_log:
    description: The JSON-lines log every decision and outcome is appended to, without O(state_bucket). Required
      then.
    type: path
  state_bucket:
    description:
      - A Cloud Storage bucket (its name, not a C(gs://) URL) to keep the state and the audit in, instead of
        O(state_file) and O(audit_log).
      - The credentials need C(storage.objects.get), C(storage.objects.create) and C(storage.objects.delete) on it
        (for example C(roles/storage.objectUser)).
    type: str
  state_prefix:
    description: The object name prefix of the books in O(state_bucket), without leading or trailing slashes.
    type: str
    default: gpudirect-gcp/remediate
  storage_endpoint:
    description: Base URL of the Cloud Storage JSON API. Default - E(GCP_STORAGE_API_ENDPOINT), else the public one.
    type: str
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
    description: The share of O(hosts) that may be under remediation at once (rounded down, at least 1; 0.1 of 64 nodes
      is 6). Counted exactly as the decimal given - 0.7 of 90 nodes is 63.
    type: float
    default: 0.1
  escalate_window_s:
    description: A node failing again within this many seconds of a remediation starts one rung higher.
    type: int
    default: 21600
  allow_report_host:
    description:
      - Let automation climb to C(report_host) (Google's host repair; the VM restarts elsewhere).
      - O(allow) decides instead where it names C(remediate_allow_report_host).
    type: bool
    default: false
  allow:
    description:
      - The settings that allow a rung, by name, as the remediate role has them (C(remediate_allow_reboot),
        C(remediate_allow_report_host); the C(allow) of each rung in plugins/plugin_utils/remediation/ladder.py).
      - Every rung is gated the same way - an alert whose ladder, from the rung it would start at, holds no allowed
        rung is held, naming the settings. A setting not given allows, except C(remediate_allow_report_host),
        which O(allow_report_host) gives then. A name no rung has fails.
    type: dict
    version_added: 1.2.0
    default: {}
  node_label:
    description:
      - The alert labels naming the node, tried in order (then C(node) and C(nodename)); a C(:port) is dropped.
    type: list
    elements: str
    default: [instance]
  repeat_after_clear:
    description:
      - The nodes whose physical host failed again after a remediation cleared it at some rung, whichever VM was on
        it then - C({node - {rung, why}}), the C(candidate_nodes) of M(gpudirect.gcp.fleet_ledger). Such a node
        starts one rung above that rung (when that is above where it would start), and the decision says why.
    type: dict
    version_added: 1.2.0
    default: {}
extends_documentation_fragment:
  - gpudirect.gcp.attributes
  - gpudirect.gcp.gce_auth
notes:
  - The credentials for O(state_bucket) are found as for the C(gpudirect.gcp.gce_gpu) inventory, and in an AWX job
    from its Google Compute Engine credential (E(GCE_CREDENTIALS_FILE_PATH)). The scope requested is
    C(https://www.googleapis.com/auth/devstorage.read_write). O(api_endpoint) is not used.
attributes:
  check_mode:
    support: full
    details: Decides and writes nothing (no state, no audit line or object); O(held) reads as it always does.
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

- name: The same, with the books in Cloud Storage, shared by every job
  gpudirect.gcp.remediation_guard:
    alert_vars: [ansible_eda, remediate_alerts]
    hosts: "{{ groups['gpu_nodes'] }}"
    addresses: "{{ dict(groups['gpu_nodes'] | zip(groups['gpu_nodes'] | map('extract', hostvars)
                   | map(attribute='ansible_host', default=''))) }}"
    state_bucket: my-cluster-ops
    state_prefix: clusters/train-a/remediate
    dry_run: false
  register: guarded

- name: Log what a dry run would do on a node, after a read-only check of it
  gpudirect.gcp.remediation_guard:
    preview:
      node: "{{ item.node }}"
      plan: "would drain {{ item.node }}, then repair it from {{ item.rung }}"
    hosts: "{{ groups['gpu_nodes'] }}"
    state_file: /var/lib/gpudirect-remediate/state.json
    audit_log: /var/log/gpudirect-remediate/audit.jsonl
  loop: "{{ guarded.preview }}"

- name: The nodes a remediation holds drained
  gpudirect.gcp.remediation_guard:
    held: true
    hosts: "{{ groups['gpu_nodes'] }}"
    state_file: /var/lib/gpudirect-remediate/state.json
    audit_log: /var/log/gpudirect-remediate/audit.jsonl
  register: holding

- name: A person resumed the node in Slurm; the automation lets it go
  gpudirect.gcp.remediation_guard:
    release: a3m-node-7
    release_reason: resumed by the on-call after a manual GPU check
    hosts: "{{ groups['gpu_nodes'] }}"
    state_file: /var/lib/gpudirect-remediate/state.json
    audit_log: /var/log/gpudirect-remediate/audit.jsonl
"""

RETURN = r"""
decisions:
  description:
    - One per alert, or per node for its firing alerts - C(decision), C(node) (the inventory name), C(alert),
      C(status), C(finding), C(rung), C(run), C(reason), C(time); C(named) where the alert named the node otherwise,
      C(also) for the other alerts about the node, C(batch) in a bucket.
  returned: with alerts
  type: list
  elements: dict
unplaced:
  description: What firing alerts named that is no node of O(hosts) (or says that an alert names none); the caller
    fails the run where this is not empty, or O(hosts) is.
  returned: with alerts
  type: list
  elements: str
books:
  description: Where the books are (C(location), the state file or the state object's C(gs://) URI) and how often
    the decisions were made again because another job wrote the state first (C(retries)).
  returned: success
  type: dict
act:
  description: The alerts to act on - C(node), C(rung), C(run), C(finding), C(alert).
  returned: with alerts
  type: list
  elements: dict
preview:
  description: In dry run, the alerts that would be acted on - C(node), C(rung), C(finding), C(alert) (as RV(act),
    without C(run)); the nodes to check read-only and give to O(preview).
  returned: with alerts
  type: list
  elements: dict
held_nodes:
  description: The nodes an open run holds, sorted.
  returned: with held
  type: list
  elements: str
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
  description: Each audit line in one line - what, the node, why (a preview's plan, a release's reason).
  returned: always
  type: list
  elements: str
audit:
  description: The lines appended to O(audit_log), or written to the bucket (none in check mode).
  returned: always
  type: list
  elements: dict
"""
