#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gce_instance_maintenance_info
short_description: Read each GPU VM's upcoming host maintenance from the Compute API
version_added: 1.2.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Reads each host's instance (C(instances.get), only C(status) and C(resourceStatus.upcomingMaintenance)) from the
    controller and returns its scheduled host maintenance - C(type), C(maintenanceStatus), the window and whether it
    can be started early - in the shape M(gpudirect.gcp.gce_maintenance_info) gives from the metadata server.
  - The instance is the host's C(gce_project), C(gce_zone) and C(gce_name), as the C(gpudirect.gcp.gce_gpu)
    inventory sets them. A host without them, or whose instance cannot be read, gets an C(error) and no
    maintenance; the others are read all the same, and the task does not fail.
  - An action plugin; it runs on the controller whatever the task's host, and changes nothing.
options:
  hosts:
    description: The inventory hosts whose instances are read.
    type: list
    elements: str
    required: true
extends_documentation_fragment:
  - gpudirect.gcp.gce_auth
  - gpudirect.gcp.attributes.READ_ONLY_ACTION
notes:
  - The credentials need C(compute.instances.get) (in C(roles/compute.viewer)).
seealso:
  - module: gpudirect.gcp.gce_maintenance_info
  - name: Monitor and plan for a host maintenance event
    description: Google's description of upcomingMaintenance.
    link: https://cloud.google.com/compute/docs/instances/monitor-plan-host-maintenance-event
"""

EXAMPLES = r"""
- name: Read the nodes' upcoming host maintenance
  gpudirect.gcp.gce_instance_maintenance_info:
    hosts: "{{ ansible_play_hosts }}"
  run_once: true
  register: api_maintenance

- name: Say which nodes have maintenance scheduled
  ansible.builtin.debug:
    msg: "{{ api_maintenance.hosts | dict2items | selectattr('value.upcoming') | map(attribute='key') | list }}"
  run_once: true
"""

RETURN = r"""
hosts:
  description:
    - Per host, C(status) (the instance's), C(upcoming) (C(status), C(type), C(window_start), C(window_end),
      C(latest_start), C(can_reschedule); null when nothing is scheduled) and C(error) (why it could not be read,
      or null).
  returned: always
  type: dict
  sample: {"a3-node1": {"status": "RUNNING", "error": null, "upcoming": {"status": "PENDING", "type": "SCHEDULED",
           "window_start": "2026-03-02T04:00:00Z", "window_end": "2026-03-02T08:00:00Z", "latest_start": null,
           "can_reschedule": true}}}
"""
