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
    the VM off the host (C(disruptionSchedule) C(IMMEDIATE), the only schedule the API allows) - the VM restarts.
  - For faults no role of this collection can repair, as the diagnose playbook names them (a node slow in pairwise
    NCCL tests, a GPU NIC that reaches none of its peers). The diagnose role calls it only when asked
    (C(diagnose_report_faulty_hosts)).
  - In check mode nothing is sent; the result holds the request that would be (C(request)), without credentials.
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
    description: The kind of fault (C(faultReasons[].behavior)).
    type: str
    default: PERFORMANCE
    choices: [PERFORMANCE, SILENT_DATA_CORRUPTION, UNRECOVERABLE_GPU_ERROR, BEHAVIOR_UNSPECIFIED]
  description:
    description: Why, in words (C(faultReasons[].description)); the diagnose finding's cause fits.
    type: str
    required: true
extends_documentation_fragment:
  - gpudirect.gcp.gce_auth
notes:
  - The credentials need C(compute.instances.reportHostAsFaulty) (for example C(roles/compute.instanceAdmin.v1));
    the scope requested is C(https://www.googleapis.com/auth/compute).
  - A refused connection, HTTP 429 or 503 is retried; any other failure is reported once, in one line naming the VM,
    and never retried, so the same host is not reported twice.
attributes:
  check_mode:
    support: full
    description: A dry run - nothing is sent; the result holds the request that would be.
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
"""

RETURN = r"""
request:
  description: What was (or, in check mode, would be) sent; no credentials.
  returned: always
  type: dict
  contains:
    method: {description: HTTP method., type: str, sample: POST}
    url: {description: The method's URL., type: str}
    body: {description: The request body., type: dict}
operation:
  description: Name of the zonal operation the API started.
  returned: when sent
  type: str
  sample: operation-1764000000000-abc
dry_run:
  description: True in check mode, when nothing was sent.
  returned: always
  type: bool
"""
