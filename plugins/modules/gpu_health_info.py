#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_health_info
short_description: Judge a node's GPUs against its machine family
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Reads the node's GPUs the way an on-call engineer would, and says what is wrong with each, against the
    family table's GPU count, model and NVLink links.
  - "Checks: the NVIDIA driver loaded; every GPU on the PCI bus seen by the driver (a GPU that fell off the bus
    is named by its bus id); Xid faults in the kernel log since boot (the lines of one multi-line report
    count once), each through the collection's Xid catalogue and O(xid_policy) (an Xid the catalogue lacks is
    named as unknown); uncorrectable ECC errors, pending or failed
    row remapping, pending page retirement; PCIe link width below the maximum (and generation, for a GPU at
    full performance); clock event reasons that mean a fault; persistence mode; NVLink links inactive or
    fewer than the family has, or all inactive; C(nvidia-fabricmanager) running on families with NVSwitches;
    NVSwitch SXid lines in the kernel log (a fatal one fails, a non-fatal one warns); on the families whose
    GPUs join an NVLink fabric (A4X, A4X Max), every GPU's fabric state (completed, success, non-zero clique and cluster ids); wherever a GPU reports it, the
    fabric's own health summary (unhealthy, degraded bandwidth, an unhealthy route or a wrong configuration
    fail; limited capacity or a recovery in progress warn)."
  - "On families with IMEX (A4X, A4X Max), also IMEX: the service running, C(nodes_config.cfg) listing exactly the
    VMs of the node's NVLink domain (O(imex_nodes)), the channel devices present, and C(nvidia-imex-ctl -q)
    answering C(READY); these findings have component C(imex)."
  - "On families with GPUDirect RDMA (transport gIB), also each expected RDMA device: present, its port
    C(ACTIVE) on an Ethernet link, its active MTU what the VPC MTU allows (C(ibv_devinfo)), and its error
    counters read twice, O(rdma_interval_s) apart, so a port that flaps or drops packets now is named; these
    findings have component C(rdma) and the subject C(<device> port <n>)."
  - "Where the node has NVIDIA DCGM (C(dcgmi)), also its diagnostic, C(dcgmi diag -r O(dcgm_level) -j), bounded
    by O(dcgm_timeout_s): a test that fails is a finding on its GPU, with the repair DCGM's error severity asks
    for; DCGM that cannot run is a C(warn) that says so."
  - Each finding carries the least disruptive repair that clears it (RV(findings[].rung)) and, where one command
    on the node does it, that command (RV(findings[].action)).
  - A tool that is missing or breaks gives a C(warn) whose cause starts with C(could not run), never a C(fail).
    Output that is cut or not what the tool prints gives a C(warn) whose cause starts with C(could not read)
    (the GPUs listed before a cut are still judged); a DCGM run in which no test ran gives one whose cause
    starts with C(could not check).
  - Changes nothing. Runs C(nvidia-smi) and C(dmesg), so it needs root (become).
options:
  family:
    description: The node's machine family (C(gpu_family) from the inventory).
    type: str
    required: true
extends_documentation_fragment:
  - gpudirect.gcp.gpu
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
seealso:
  - name: NVIDIA Xid errors
    description: What each Xid means and NVIDIA's recommended action.
    link: https://docs.nvidia.com/deploy/xid-errors/index.html
"""

EXAMPLES = r"""
- name: Judge the GPUs
  gpudirect.gcp.gpu_health_info:
    family: "{{ gpu_family }}"
  become: true
  register: gpu_health

- name: Judge the GPUs, failing a GPU on Xid 13 only at 5 faults within an hour
  gpudirect.gcp.gpu_health_info:
    family: "{{ gpu_family }}"
    xid_policy:
      "13": {severity: fail, repair: reset_gpu, count: 5, window_s: 3600}
  become: true
  register: gpu_health

- name: Name every failing GPU
  ansible.builtin.debug:
    msg: "{{ item.subject }}: {{ item.cause }} (repair: {{ item.rung }})"
  loop: "{{ gpu_health.findings | selectattr('severity', 'equalto', 'fail') }}"
"""

RETURN = r"""
driver:
  description: The loaded NVIDIA driver's version, or null when none is loaded.
  returned: always
  type: str
  sample: 580.159.04
gpus:
  description: What C(nvidia-smi -q -x) says of each GPU the driver sees (the records of the
    P(gpudirect.gcp.nvidia_smi_parse#filter) filter).
  returned: always
  type: list
  elements: dict
xids:
  description: Xid faults in the kernel log since boot, counted per GPU (C(pci_bus_id), C(0000:9b:00)) and Xid
    (the lines of one multi-line report count once).
  returned: always
  type: list
  elements: dict
  sample: [{"pci_bus_id": "0000:9b:00", "xid": 79, "count": 1}]
dcgm:
  description: DCGM's diagnostic where it ran (C(level), and C(error) when it could not run), or null where the
    node has no C(dcgmi) or O(dcgm_level) is 0.
  returned: always
  type: dict
rdma_ports:
  description: Each RDMA port (families with GPUDirect RDMA), with C(device), C(port), C(state), C(active_mtu)
    and C(errors) (how much its error counters rose between the two reads).
  returned: always
  type: list
  elements: dict
  sample: [{"device": "mlx5_0", "port": "1", "state": "ACTIVE", "active_mtu": 4096, "errors": 0}]
findings:
  description: One per fault.
  returned: always
  type: list
  elements: dict
  contains:
    component:
      description: C(gpu), C(imex) for the IMEX checks, or C(rdma) for the RDMA ports.
      type: str
    subject:
      description: The GPU (index and bus id), the RDMA device and port, or the driver, tool or service at fault.
      type: str
      sample: GPU 3 (0000:8b:00)
    severity:
      description: C(fail), or C(warn) (including checks that could not run).
      type: str
    cause:
      description: One line with the evidence.
      type: str
      sample: "Xid 79 (GPU has fallen off the bus) since boot; the driver no longer sees it"
    rung:
      description: The least disruptive repair that clears it, C(rerun), C(reset_gpu), C(reboot) or C(report_host).
      type: str
    action:
      description: The command that does that repair on the node, as an argument list, or null.
      type: list
      elements: str
    phase:
      description: The C(gpudirect.gcp.site) phase, by the component it configures (C(host)), whose re-run is
        the repair, or null.
      type: str
verdict:
  description: C(fail) when any finding fails, C(warn) when any warns, else C(pass).
  returned: always
  type: str
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule
from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health


def main():
    gm = GpuModule(dict(family=dict(type="str", required=True), **node_health.gpu_options()))
    if gm.params["family"] not in families.FAMILIES:
        gm.fail("family: unknown family %r (known: %s)" % (gm.params["family"], ", ".join(families.family_names())))
    result = node_health.gpu_state(gm.params["family"], gm.params, gm.run, gm.which)
    gm.exit(changed=False, verdict=node_health.verdict(result["findings"]), **result)


if __name__ == "__main__":
    main()
