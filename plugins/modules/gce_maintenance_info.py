#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gce_maintenance_info
short_description: Read a GPU VM's host maintenance from its metadata server and judge it for running jobs
version_added: 1.0.0
description:
  - "Asks the node's GCE metadata server for C(instance/maintenance-event) and C(instance/upcoming-maintenance),
    with the header C(Metadata-Flavor: Google), directly (never through a proxy)."
  - A3 and A4 VMs do not live-migrate, so host maintenance stops the VM and the job on it. Maintenance under way
    (an event other than C(NONE), a window that is C(ONGOING) or has started) is a C(fail) finding; a window
    that starts within O(warn_within_h) a C(warn), so the node can be drained first. Nothing scheduled is no
    finding.
  - A metadata server that cannot be reached or answers an error is a C(warn) finding that says it could not
    run; the module itself does not fail.
  - Never changes the node.
author:
  - gpudirect.gcp contributors (@gpudirect)
extends_documentation_fragment:
  - gpudirect.gcp.maintenance
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
options:
  timeout:
    description: Seconds to wait for each answer of the metadata server.
    type: float
    default: 3
seealso:
  - name: Monitor and plan for a host maintenance event
    description: Google's description of the maintenance notices on the metadata server.
    link: https://cloud.google.com/compute/docs/instances/monitor-plan-host-maintenance-event
"""

EXAMPLES = r"""
- name: Is maintenance due on the node?
  gpudirect.gcp.gce_maintenance_info:
    warn_within_h: 48
  register: maintenance

- name: Say so
  ansible.builtin.debug:
    msg: "{{ maintenance.findings | map(attribute='cause') | list }}"
  when: maintenance.findings | length > 0
"""

RETURN = r"""
event:
  description: C(instance/maintenance-event) (C(NONE) when no maintenance is under way), or null when unread.
  returned: always
  type: str
  sample: NONE
upcoming:
  description: The scheduled maintenance (C(status), C(type), C(window_start), C(window_end), C(latest_start),
    C(can_reschedule)), or null when nothing is scheduled.
  returned: always
  type: dict
findings:
  description: Zero or one finding, with C(component) C(host), C(subject) C(maintenance), C(severity), C(cause)
    and C(can_reschedule) (whether the maintenance can be started now with
    C(gcloud compute instances perform-maintenance)).
  returned: always
  type: list
  elements: dict
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import maintenance
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def main():
    gm = GpuModule(dict(
        metadata_url=dict(type="str", default=maintenance.DEFAULT_URL),
        timeout=dict(type="float", default=3),
        warn_within_h=dict(type="float", default=24),
    ))
    p = gm.params
    state = maintenance.read(p["metadata_url"], p["timeout"])
    found = maintenance.judge(state, warn_within_s=p["warn_within_h"] * 3600)
    gm.exit(changed=False, event=state["event"], upcoming=state["upcoming"], findings=found)


if __name__ == "__main__":
    main()
