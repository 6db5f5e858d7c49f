#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: fleet_ledger
short_description: Keep and read the ledger of the physical hosts under the GPU VMs
version_added: 1.2.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - On Google Cloud GPU VMs the unit that fails is often the physical host below the VM. The ledger keeps what
    happened to each physical host across runs and across the VMs on it - failing findings, the remediation guard's
    decisions, how remediations ended, reports to Google - so that a VM re-created on a host with history is known
    at once, and a host whose fault came back after a repair cleared it is named as a candidate for a report to
    Google.
  - Records are keyed by the physical host (the C(host) part of a place, from the inventory's C(gce_topology)) and,
    where a finding names one, by the GPU's serial number or UUID (C(gpu)).
  - 'Each record is C({kind, host, time}) and its kind''s fields - C(finding) (C(component), C(subject), C(cause)),
    C(remediation) (C(decision)), C(outcome) (C(outcome)), C(report) (C(outcome)) - with C(node) (the VM), C(place)
    and C(source) where known. docs/fleet.md lists every field.'
  - Every text is masked (secrets) and bounded, one line, whoever gives it. A record of another shape, given or
    stored, is skipped and named in one line in RV(left_out); it never costs the others.
  - With O(state=recorded) the records from O(findings) (the failing ones), O(audit) and O(records) are added; one identical
    to a record already there is not added again. Retention (O(max_age_days), O(max_records), O(max_bytes), the
    oldest dropped first) is applied on every write.
  - With O(state=query) the ledger is read and nothing written - the history of the physical hosts asked for
    (O(hosts), and those of O(nodes) through O(places)), the hosts with records in the last O(days) days, the
    report candidates, and summaries per physical host and per sub-block.
  - O(store) is a path on the controller (one JSON file, locked from read to write, made 0600 in a 0700 directory,
    never opened through a link), or C(gs://BUCKET/OBJECT), one Cloud Storage object written only over the
    generation it was read at; when another run wrote it first the ledger is read again and the records added
    again to what that run wrote.
  - An action plugin; it runs on the controller whatever the task's host.
options:
  state:
    description:
      - V(recorded) adds records; V(query) reads.
    type: str
    choices: [recorded, query]
    default: query
  store:
    description:
      - Where the ledger is - a path on the controller, or C(gs://BUCKET/OBJECT) (C(gs://BUCKET) alone - the object
        C(gpudirect-gcp/fleet/ledger.json)).
      - The playbooks pass C(gpudirect_fleet_ledger).
    type: str
    required: true
  records:
    description:
      - Records to add with O(state=recorded) - each a mapping with C(kind) and its fields, and either C(host) (the
        physical host) or C(node) (a VM of O(places), whose physical host keys it). C(time) defaults to now.
    type: list
    elements: raw
    default: []
  findings:
    description:
      - Findings (as the diagnosis makes them, each on its VM in C(host)) to add with O(state=recorded); only the
        failing ones are recorded, each keyed by its VM's physical host from O(places).
    type: list
    elements: raw
    default: []
  audit:
    description:
      - The audit lines of M(gpudirect.gcp.remediation_guard) (its RV(gpudirect.gcp.remediation_guard#module:audit)) to
        add with O(state=recorded) - its decisions C(act), C(dry_run) and C(held) on an alert about a node become
        C(remediation) records, an C(outcome) line an C(outcome) record, each keyed by the node's physical host from
        O(places) at the line's own time.
    type: list
    elements: raw
    default: []
  page:
    description:
      - With O(state=query), also draw the fleet page at this path on the controller - one HTML file, per physical
        host and per sub-block, with each one's failures a day over the last 30 days, repeat offenders first (a host
        that failed again after a repair cleared it). It holds no script and loads nothing; every text in it is
        escaped. It is written whole (a temporary file renamed over it) and only when it differs; its directory must
        exist.
    type: str
  places:
    description:
      - Where each VM sits, C({VM - place}), a place as a finding holds it (C(cluster), C(block), C(subblock),
        C(host) - the physical host - and C(nvlink_domain)).
      - A finding or record about a VM with no physical host here is not recorded, and named in RV(left_out).
    type: dict
    default: {}
  source:
    description: What recorded the records (a playbook's name), kept in each.
    type: str
  hosts:
    description:
      - Physical hosts whose history O(state=query) returns; with neither this nor O(nodes), those with records in
        the last O(days) days.
    type: list
    elements: str
    default: []
  nodes:
    description:
      - VMs whose physical host's history O(state=query) returns (through O(places)), each answered in RV(nodes).
    type: list
    elements: str
    default: []
  days:
    description: How many days back RV(recent) and RV(nodes) look.
    type: int
    default: 30
  max_age_days:
    description: A record older than this many days is dropped on every write.
    type: int
    default: 365
  max_records:
    description: The most records kept; the oldest are dropped first.
    type: int
    default: 20000
  max_bytes:
    description: The most bytes the ledger's JSON may take; the oldest records are dropped first.
    type: int
    default: 8388608
  storage_endpoint:
    description: Base URL of the Cloud Storage JSON API. Default - E(GCP_STORAGE_API_ENDPOINT), else the public one.
    type: str
extends_documentation_fragment:
  - gpudirect.gcp.attributes
  - gpudirect.gcp.gce_auth
notes:
  - For a C(gs://) store the credentials are found as for the C(gpudirect.gcp.gce_gpu) inventory, and in an AWX job
    from its Google Compute Engine credential. The scope requested is
    C(https://www.googleapis.com/auth/devstorage.read_write); they need C(storage.objects.get) and
    C(storage.objects.create) on the bucket. O(api_endpoint) is not used.
  - The inventory plugin C(gpudirect.gcp.gce_gpu) reads a local ledger (its option C(fleet_ledger)) and puts the VMs
    whose physical host has recent history in the group C(gpu_host_history).
attributes:
  check_mode:
    support: full
    details: Reads the ledger and computes what would be added and dropped; writes nothing (a missing file is not
      made).
  diff_mode:
    support: full
    details: With O(state=recorded), the record counts before and after, and each record added in one line.
  idempotent:
    support: partial
    details: A record identical to one in the ledger is not added again; a record stamped now is a new one.
  action:
    support: full
    description: Runs on the controller as an action plugin.
"""

EXAMPLES = r"""
- name: Keep the diagnosis's failing findings, by physical host
  gpudirect.gcp.fleet_ledger:
    state: recorded
    store: /var/lib/gpudirect/fleet/ledger.json
    findings: "{{ diagnose_findings }}"
    places: "{{ diagnose_places }}"
    source: diagnose

- name: A report to Google, in a ledger every AWX job shares
  gpudirect.gcp.fleet_ledger:
    state: recorded
    store: gs://my-cluster-ops/clusters/train-a/fleet/ledger.json
    records:
      - kind: report
        node: a3m-node-7
        outcome: reported
        behavior: UNRECOVERABLE_GPU_ERROR
    places:
      a3m-node-7: {block: b1, subblock: s2, host: h-0042}

- name: The VMs whose physical host failed again after a repair cleared it
  gpudirect.gcp.fleet_ledger:
    store: /var/lib/gpudirect/fleet/ledger.json
    nodes: "{{ groups['gpu_nodes'] }}"
    places: "{{ dict(groups['gpu_nodes'] | zip(groups['gpu_nodes'] | map('extract', hostvars)
               | map(attribute='gce_topology', default={}))) }}"
  register: fleet

- name: Draw the fleet page beside a diagnosis report
  gpudirect.gcp.fleet_ledger:
    store: /var/lib/gpudirect/fleet/ledger.json
    page: "{{ diagnose_report.run_dir }}/fleet.html"
"""

RETURN = r"""
page:
  description: The fleet page's path, where O(page) was given.
  returned: when O(page) is given
  type: str
location:
  description: Where the ledger is (the file, or the object's C(gs://) URI).
  returned: success
  type: str
left_out:
  description: One line per record left out - given or stored, of another shape, or about a VM with no physical host.
  returned: success
  type: list
  elements: str
added:
  description: How many records were added (in check mode, would be).
  returned: with state recorded
  type: int
lines:
  description: Each record added, in one line - when, the physical host (and VM), what.
  returned: with state recorded
  type: list
  elements: str
dropped:
  description: How many records retention dropped.
  returned: with state recorded
  type: int
records:
  description: How many records the ledger holds (after the write, with state recorded).
  returned: success
  type: int
retries:
  description: How often the records were added again because another run wrote the object first.
  returned: with state recorded
  type: int
history:
  description: C({physical host - [its records, each in one line, oldest first]}) of the hosts asked for.
  returned: with state query
  type: dict
recent:
  description: Each physical host with records in the last O(days) days - C(host), C(records), C(failures), C(last)
    (seconds since the epoch) and C(why), in one line.
  returned: with state query
  type: list
  elements: dict
candidates:
  description:
    - The physical hosts that failed again after a remediation ended cleared, with no report to Google since - C(host),
      C(rung) (what cleared it), C(cleared), C(failed), C(node) and C(why), in one line. Candidates for a report to
      Google as faulty; the latest failure first.
  returned: with state query
  type: list
  elements: dict
nodes:
  description: C({VM - {host, recent, candidate}}) for each of O(nodes) - its physical host, the one line of RV(recent)
    about it (or null), and C({rung, why}) where its host is a candidate (or null).
  returned: with state query
  type: dict
candidate_nodes:
  description: C({VM - {rung, why}}) of the VMs of O(nodes) whose physical host is a candidate.
  returned: with state query
  type: dict
summary:
  description:
    - C(hosts) - one per physical host, repeat offenders first - C(host), C(place), C(counts) (records by kind),
      C(failures), C(days) (failures by UTC date), C(first), C(last), C(gpus), C(repeat) (why, or null).
    - C(subblocks) - one per sub-block, those with repeat offenders first - C(block), C(subblock), C(hosts),
      C(counts), C(failures), C(days), C(repeat_hosts).
  returned: with state query
  type: dict
"""
