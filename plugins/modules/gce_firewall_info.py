#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gce_firewall_info
short_description: Say which VPC firewall rules would block the traffic between GPU nodes
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Reads the projects' VPC firewall rules (C(firewalls.list)) from the controller and judges them as Google applies
    them (ingress only, lowest priority number first, a deny before an allow of the same priority, the implied deny
    last) for the traffic the phases send between the nodes, from every node's address.
  - On nic0's network, TCP port 22 (SSH for mpirun) and all TCP ports (MPI and NCCL bootstrap); on the GPU VPCs of
    TCPX and TCPXO families, ICMP (the readiness phase's full-MTU pings) and all TCP ports (GPUDirect data).
    The RDMA VPCs of gIB families are not judged.
  - A rule scoped by source or target tags or service accounts is taken to apply, since the inventory does not
    carry them; a reported line is always a real gap.
  - Returns one line per network and kind of traffic that is blocked. When the rules cannot be read (no
    credentials, no permission) it says so in C(could_not_check) and reports no problem.
  - An action plugin; it runs on the controller whatever the task's host, and changes nothing.
options:
  hosts:
    description: The inventory hosts of the cluster; their C(gce_nics), C(gpu_nics) and C(gce_project) are read.
    type: list
    elements: str
    required: true
  family:
    description: Machine family of the nodes.
    type: str
    required: true
  projects:
    description:
      - The projects whose rules apply. Default - the hosts' C(gce_project). With a Shared VPC, the host project.
    type: list
    elements: str
extends_documentation_fragment:
  - gpudirect.gcp.gce_auth
  - gpudirect.gcp.attributes.READ_ONLY_ACTION
notes:
  - The credentials need C(compute.firewalls.list) (in C(roles/compute.viewer)).
"""

EXAMPLES = r"""
- name: Check the VPC firewall rules between the nodes
  gpudirect.gcp.gce_firewall_info:
    hosts: "{{ ansible_play_hosts }}"
    family: "{{ gpu_family }}"
  run_once: true
  register: firewall

- name: Stop on a blocked network
  ansible.builtin.fail:
    msg: "{{ firewall.problems | join(' | ') }}"
  when: firewall.problems | length > 0
  run_once: true
"""

RETURN = r"""
problems:
  description: One line per network and kind of traffic that the rules block between the nodes.
  returned: always
  type: list
  elements: str
rules:
  description: How many firewall rules were read.
  returned: always
  type: int
projects:
  description: The projects whose rules were read.
  returned: always
  type: list
  elements: str
could_not_check:
  description: Why the rules could not be read, or null.
  returned: always
  type: str
"""
