#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gce_report_faulty_host
short_description: Report the host under a Compute Engine VM as faulty, so that Google repairs it
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Calls the Compute API method C(instances.reportHostAsFaulty) for one VM, from the controller. Google then moves
    the VM off the host (C(disruptionSchedule) C(IMMEDIATE), the only schedule the API allows) - the VM stops and
    restarts on other hardware, ending whatever runs on it. Drain the node first (the remediate role does).
  - For faults no role of this collection can repair, as the diagnose playbook names them (a node slow in pairwise
    NCCL tests, a GPU NIC that reaches none of its peers). The diagnose role calls it only when asked
    (C(diagnose_report_faulty_hosts)).
  - "Google's rules are checked first, from the API: the VM is C(RUNNING); its machine type is one the method
    accepts (A4X Max, A4X, A4, A3 Ultra, A3 Mega, A3 High; not A3 Edge - the family table's C(faulty_host_report));
    it is reservation-bound (C(scheduling.provisioningModel) C(RESERVATION_BOUND); Google takes reports of flex-start
    and spot VMs through the account team only); and no operation on it is in progress (C(zoneOperations.list)
    filtered by its C(targetLink) and C(status != DONE)). A VM that fails one is not reported: RV(outcome) and a
    one-line msg name why."
  - The call's operation is then followed (C(zoneOperations.get), a look after 0.25 s, then twice as long each time
    up to 10 s) until it is C(DONE) or O(wait_s) has passed; C(-v) shows each change of its status.
  - In check mode nothing is sent; the checks are still read, and the result holds the request that would be sent
    (C(request)), without credentials. Where the checks cannot be read (no credentials, no API), the dry run still
    shows the request, with a warning.
  - An action plugin; it runs on the controller whatever the task's host.
options:
  instance:
    description: Name of the VM.
    type: str
    required: true
  project:
    description: Project of the VM.
    type: str
    required: true
  zone:
    description: Zone of the VM.
    type: str
    required: true
  behavior:
    description:
      - The kind of fault (C(faultReasons[].behavior)); given, it wins over O(finding).
      - Not given, it comes from O(finding) (C(SILENT_DATA_CORRUPTION) for wrong results, C(PERFORMANCE) for a slow
        host, C(UNRECOVERABLE_GPU_ERROR) for a GPU fault the GPU does not recover from, C(PERFORMANCE) for any other),
        else C(PERFORMANCE).
    type: str
    choices: [PERFORMANCE, SILENT_DATA_CORRUPTION, UNRECOVERABLE_GPU_ERROR, BEHAVIOR_UNSPECIFIED]
  finding:
    description: The finding the report is for (C(component), C(subject), C(cause)), which gives O(behavior).
    type: dict
  description:
    description: Why, in words (C(faultReasons[].description)); the diagnose finding's cause fits.
    type: str
    required: true
  wait_s:
    description:
      - How long to follow the operation before giving up on it (it goes on at Google; nothing is sent again).
        Google's guide gives such operations minutes. V(0) does not follow it.
    type: int
    default: 900
extends_documentation_fragment:
  - gpudirect.gcp.gce_auth
notes:
  - The credentials need C(compute.instances.get), C(compute.zoneOperations.list), C(compute.zoneOperations.get) and
    C(compute.instances.reportHostAsFaulty) (all in C(roles/compute.instanceAdmin.v1)); the scope requested is
    C(https://www.googleapis.com/auth/compute).
  - "Retries: the reads (the VM, the operations) retry a refused connection, a timeout, HTTP 429 and 5xx with backoff,
    as every read of the collection does. The report itself is retried only where it cannot have been acted on: a
    refused connection, HTTP 429 and HTTP 503, at most 3 times. Any other failure, and a report the API refused, is
    reported once, in one line naming the VM and RV(outcome), and never retried, so the same host is not reported
    twice."
attributes:
  check_mode:
    support: full
    description: A dry run - the checks are read, nothing is sent; the result holds the request that would be.
  diff_mode:
    support: none
    description: Nothing on a node changes.
  action:
    support: full
    description: Runs on the controller as an action plugin.
"""

EXAMPLES = r"""
- name: Report node7's host as faulty (dry run first with --check)
  gpudirect.gcp.gce_report_faulty_host:
    instance: "{{ hostvars['node7'].gce_name }}"
    project: "{{ hostvars['node7'].gce_project }}"
    zone: "{{ hostvars['node7'].gce_zone }}"
    behavior: PERFORMANCE
    description: NCCL busbw below the family baseline in pairwise tests

- name: Report the host under a GPU fault; the behavior follows the finding (UNRECOVERABLE_GPU_ERROR here)
  gpudirect.gcp.gce_report_faulty_host:
    instance: "{{ gce_name }}"
    project: "{{ gce_project }}"
    zone: "{{ gce_zone }}"
    finding: {component: gpu, subject: GPU 3, cause: "row remapping failed: the GPU's memory has no spare rows left"}
    description: "gpu GPU 3: row remapping failed"
    wait_s: 1200
  delegate_to: localhost
"""

RETURN = r"""
outcome:
  description:
    - How it ended, one word. V(reported) and V(dry_run) succeed; every other one fails the task.
    - V(not_running), V(machine_type_not_supported), V(not_reservation_bound), V(in_flight) - Google's conditions,
      checked before sending, or the API's own refusal of that name (C(INSTANCE_SHOULD_BE_RUNNING),
      C(MACHINE_TYPE_NOT_SUPPORTED), C(INSTANCES_WITHOUT_RESERVATION_NOT_SUPPORTED), C(FAILED_WITH_UNEXPECTED_STATUS)).
    - V(invalid) (400), V(unauthenticated) (401), V(permission_denied) (403), V(not_found) (404), V(conflict) (409),
      V(precondition_failed) (412), V(rate_limited) (429, C(RATE_LIMIT_EXCEEDED)), V(unavailable) (5xx) - the API
      refused a call.
    - V(operation_error) - the operation ended with an error (C(INTERNAL_ERROR), ...); V(timed_out) - it had not
      ended within O(wait_s); V(error) - anything else (the API unreachable, an answer it does not document).
  returned: when the task got that far (not on bad options)
  type: str
  sample: reported
request:
  description: What was (or, in check mode, would be) sent; no credentials.
  returned: always
  type: dict
  contains:
    method: {description: HTTP method., type: str, sample: POST}
    url: {description: The method's URL., type: str}
    body: {description: The request body., type: dict}
behavior:
  description: The behavior sent (or that would be).
  returned: always
  type: str
  sample: UNRECOVERABLE_GPU_ERROR
behavior_from:
  description: Where O(behavior) came from - V(option), V(finding (<rule>)) or V(default).
  returned: always
  type: str
  sample: finding (unrecoverable_gpu_error)
instance_status:
  description: The VM's status as read before the report.
  returned: when the VM was read
  type: str
  sample: RUNNING
machine_type:
  description: The VM's machine type.
  returned: when the VM was read
  type: str
  sample: a3-megagpu-8g
provisioning_model:
  description: The VM's provisioning model (C(STANDARD) where the API gives none).
  returned: when the VM was read
  type: str
  sample: RESERVATION_BOUND
in_flight:
  description: The operations in progress on the VM, each as "type name (status)".
  returned: when the VM qualified otherwise
  type: list
  elements: str
operation:
  description: Name of the zonal operation the API started.
  returned: when sent
  type: str
  sample: operation-1764000000000-abc
operation_status:
  description: The operation's status when the module stopped following it (C(DONE) unless it timed out).
  returned: when sent
  type: str
  sample: DONE
elapsed_s:
  description: Seconds from the answer to the report until the operation was seen C(DONE) (or O(wait_s) passed).
  returned: when the operation was followed
  type: float
  sample: 642.5
operation_error:
  description: The finished operation's error, in one line.
  returned: when the operation ended with an error
  type: str
dry_run:
  description: True in check mode, when nothing was sent.
  returned: always
  type: bool
"""
