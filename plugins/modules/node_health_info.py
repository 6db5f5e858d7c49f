#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: node_health_info
short_description: Run the node-level GPUDirect health checks on a node and return every finding
version_added: 1.0.0
description:
  - Runs on the node the same checks as the node health agent (P(gpudirect.gcp.node_health#role), on a timer)
    and the Slurm hooks, from the same code, so the three agree on every finding.
  - "The parts: the GPUs, IMEX and the RDMA ports (O(gpu), as M(gpudirect.gcp.gpu_health_info)); the GPU NICs,
    each NIC's RDMA device, and full-size pings to the peers each NIC names (O(nics), as
    M(gpudirect.gcp.gpu_nic_ready)); RxDM (O(rxdm)); the NCCL net plugin's files against its install record
    (O(plugin)); the NCCL env file (O(profile)); host maintenance from the metadata server (O(maintenance))."
  - A part left unset is not checked. One part that cannot run gives a C(warn) finding that says so and costs
    no other part.
  - A finding is C(fail) for a fault of the node and C(warn) for a check that could not run or a fault to
    plan for. The module reports findings and never fails on them; it fails only on options it cannot use,
    in one line naming the option.
  - Changes nothing. Reads the kernel log and runs C(nvidia-smi), so it needs root (become).
author:
  - gpudirect.gcp contributors (@gpudirect)
extends_documentation_fragment:
  # one per part of the node check (node_health.PARTS), shared with the module that checks that part alone
  - gpudirect.gcp.gpu.part
  - gpudirect.gcp.nics
  - gpudirect.gcp.rxdm.part
  - gpudirect.gcp.plugin.part
  - gpudirect.gcp.profile.part
  - gpudirect.gcp.maintenance.part
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
options:
  config:
    description:
      - The whole configuration at once, as the P(gpudirect.gcp.node_health#role) role writes it for the agent
        (C(family), one key per part, C(peers), C(rdma)); the collection's diagnose role passes it this way.
      - Mutually exclusive with O(family) and the part options; exactly one of O(config) and O(family) is required.
    type: dict
    version_added: 1.1.0
  family:
    description: The node's machine family (C(gpu_family) from the inventory).
    type: str
  nics:
    description:
      - The GPU NICs the node must have, as the P(gpudirect.gcp.gpu_nic_facts#module) map gives them
        (C(gpu_nics)); the checks read C(nic), C(iface), C(mac), C(expected_mtu), C(ip) and C(network) of
        each. A NIC is found by its C(iface), else by its C(mac); one with neither is reported missing.
    type: list
    elements: dict
  peers:
    description:
      - Addresses of the same NIC on other nodes, keyed by the NIC's API name (C(nic)), pinged out of each NIC at
        full size without fragmenting (C(ping -M do -s MTU-28)). A failed ping is kept in the NIC's C(peers) in
        RV(nics), not made a finding here, since which end is at fault needs every node's pings.
    type: dict
  rxdm_wait_s:
    description: Seconds RxDM may take to become ready; 0 takes one look.
    type: int
    default: 0
  command_timeout_s:
    description:
      - Seconds each command the checks run (C(nvidia-smi), the container engine, C(systemctl), C(ip), C(ping))
        may take; one still running then is killed, or left behind where a kill cannot end it (C(nvidia-smi)
        asleep in the driver of a sick GPU), and its part says so. DCGM's diagnostic gets O(gpu.dcgm_timeout_s)
        and 30 seconds more instead.
    type: float
    default: 60
    version_added: 1.1.0
seealso:
  - module: gpudirect.gcp.gpu_health_info
  - module: gpudirect.gcp.gpu_nic_ready
"""

EXAMPLES = r"""
- name: Check a node's GPUs, NICs, plugin and profile
  gpudirect.gcp.node_health_info:
    family: a3-mega
    gpu: {}
    nics:
      - {nic: gpu0, iface: enp6s0, expected_mtu: 8244, ip: 10.1.0.2}
    plugin:
      record_file: .gpudirect-installed
    profile:
      path: /etc/nccl/nccl.env
  become: true
  register: node

- name: Show what is wrong
  ansible.builtin.debug:
    msg: "{{ node.summary }}"
  when: node.verdict != 'pass'
"""

RETURN = r"""
findings:
  description:
    - Every finding, each with C(component) (gpu, imex, rdma, nic, rxdm, nccl_plugin, nccl_profile, host),
      C(subject), C(severity) (C(fail) or C(warn)) and C(cause). GPU, IMEX and RDMA findings add C(rung) and
      C(action) (the least disruptive repair), maintenance findings C(can_reschedule).
  returned: always
  type: list
  elements: dict
verdict:
  description: C(fail) when any finding fails, else C(warn) when any warns, else C(pass).
  returned: always
  type: str
  sample: pass
summary:
  description: The findings in one line, the first failure first (C(healthy) when there are none).
  returned: always
  type: str
gpu:
  description: The GPUs as read (C(driver), C(count), C(expected), C(gpus), C(xids), C(rdma_ports)), or null.
  returned: always
  type: dict
nics:
  description:
    - Each expected NIC as found (C(iface), C(mtu), C(ipv4), C(problems), C(local_problems), C(peers) with
      each ping's C(address) and C(ok), C(ready)), or null when the NICs were not checked or could not be read.
  returned: always
  type: list
  elements: dict
rxdm:
  description: RxDM's state (C(ready), C(reason), C(image), C(unit_state), C(restarts), C(log_tail); C(error) when
    it could not be looked at), or null.
  returned: always
  type: dict
plugin:
  description: The plugin's install record and its files that are missing or modified, or null.
  returned: always
  type: dict
profile:
  description: The env file (C(path), C(present), C(error), C(env), C(problems), C(consistent)), or null.
  returned: always
  type: dict
maintenance:
  description: The metadata server's C(event) and C(upcoming) maintenance, or null.
  returned: always
  type: dict
duration_s:
  description: Seconds the checks took.
  returned: always
  type: float
"""

import copy
import os

from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule
from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health


def argument_spec():
    """config or family, rxdm_wait_s, command_timeout_s, and one option per part of the node check
    (node_health.PARTS) and per setting of its nics part."""
    spec = dict(config=dict(type="dict"), family=dict(type="str"), rxdm_wait_s=dict(type="int", default=0),
                command_timeout_s=dict(type="float", default=60))
    # copies: the table is shared by every caller in this process
    spec.update((part["key"], copy.deepcopy(part["spec"])) for part in node_health.PARTS)
    spec.update(copy.deepcopy(node_health.NIC_SETTINGS))
    return spec


def main():
    keys = ["family"] + node_health.part_keys() + list(node_health.NIC_SETTINGS)
    # rdma has a default, so only a config together with another option that is set is refused
    gm = GpuModule(argument_spec(), required_one_of=[("config", "family")],
                   mutually_exclusive=[("config", key) for key in keys if key != "rdma"])
    config = gm.params["config"] if gm.params["config"] is not None else dict((key, gm.params[key]) for key in keys)
    if gm.params["command_timeout_s"] <= 0:
        gm.fail("command_timeout_s must be above 0, not %s" % gm.params["command_timeout_s"])
    gpu = config.get("gpu") if isinstance(config, dict) else None
    # DCGM's diagnostic runs for minutes by design, under a timeout(1) of its own
    dcgm_s = ((gpu.get("dcgm_timeout_s") if isinstance(gpu, dict) else None) or 300) + 30

    def run(argv):
        dcgm = any(os.path.basename(str(arg)) == "dcgmi" for arg in argv)
        return gm.run(argv, timeout=dcgm_s if dcgm else gm.params["command_timeout_s"])

    try:
        result = node_health.check(config, run, gm.which, rxdm_wait_s=max(0, gm.params["rxdm_wait_s"]))
    except node_health.ConfigError as exc:
        gm.fail(str(exc))
    gm.exit(changed=False, verdict=node_health.verdict(result["findings"]),
            summary=node_health.one_line(result["findings"]), **result)


if __name__ == "__main__":
    main()
