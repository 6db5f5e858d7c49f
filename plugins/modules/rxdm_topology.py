#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: rxdm_topology
short_description: Write the TCPX RxDM topology file from the node's own GPU and NIC layout
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Writes the C(gpu_rxq_configuration.textproto) that RxDM's C(--gpu_nic_preset manual) reads. Each GPU NIC in
    O(gpu_interfaces) is paired with the NVIDIA GPUs that share its PCIe switch (the longest common sysfs
    device path, then the nearest bus number), each GPU on its own RX queues; the interface names are the
    node's own, so the file fits COS (eth*) and Ubuntu (enp*) images alike.
  - Fails with one line naming the NIC or the GPU count when the layout does not fit.
options:
  dest:
    description: The file to write.
    type: path
    required: true
  gpu_interfaces:
    description: The node's GPU NIC interfaces, in GPU-NIC order.
    type: list
    elements: str
    required: true
  gpus_per_nic:
    description: GPUs each GPU NIC serves.
    type: int
    required: true
  queue_ids:
    description: RX queue ids of the first, second, ... GPU of a NIC.
    type: list
    elements: list
    required: true
  rss_set_size:
    description: RSS queues left to the kernel.
    type: int
    required: true
  tcpd_queue_size:
    description: Queues per GPU.
    type: int
    required: true
  max_rx_rules:
    description: Flow steering rule limit.
    type: int
    required: true
  sysfs_root:
    description: Where sysfs is read (C(class/net/<if>/device), C(bus/pci/devices)).
    type: path
    default: /sys
  mode:
    description: File mode.
    type: str
    default: "0644"
extends_documentation_fragment:
  - gpudirect.gcp.attributes
attributes:
  check_mode:
    support: full
    details: Reports whether the file would change, with the diff; writes nothing.
  diff_mode:
    support: full
    details: The file's content before and after.
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: Write the RxDM topology file for A3 High on an Ubuntu image
  gpudirect.gcp.rxdm_topology:
    dest: /opt/tcpdirect_benchmark/gpu_rxq_configuration.textproto
    gpu_interfaces: [enp6s0, enp12s0, enp134s0, enp140s0]
    gpus_per_nic: 2
    queue_ids: [[8, 9, 10, 11], [12, 13, 14, 15]]
    rss_set_size: 8
    tcpd_queue_size: 8
    max_rx_rules: 100000
"""

RETURN = r"""
content:
  description: The topology file as written (or as it would be written in check mode).
  returned: success
  type: str
pairs:
  description: GPU NIC interface to the PCI addresses of the GPUs it serves.
  returned: success
  type: dict
  sample: {"enp6s0": ["0000:04:00.0", "0000:05:00.0"]}
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils.rxdm import rxdm_topology as logic
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def main():
    gm = GpuModule(dict(
        dest=dict(type="path", required=True),
        gpu_interfaces=dict(type="list", elements="str", required=True),
        gpus_per_nic=dict(type="int", required=True),
        queue_ids=dict(type="list", elements="list", required=True),
        rss_set_size=dict(type="int", required=True),
        tcpd_queue_size=dict(type="int", required=True),
        max_rx_rules=dict(type="int", required=True),
        sysfs_root=dict(type="path", default="/sys"),
        mode=dict(type="str", default="0644"),
    ))
    p = gm.params
    topology = dict((k, p[k]) for k in ("gpus_per_nic", "rss_set_size", "tcpd_queue_size", "max_rx_rules"))
    try:
        topology["queue_ids"] = [[int(q) for q in ids] for ids in p["queue_ids"]]
        mode = int(p["mode"], 8)
    except (TypeError, ValueError) as exc:
        gm.fail("queue_ids must be lists of integers and mode an octal string: %s" % exc)
    try:
        content, pairs = logic.build(p["sysfs_root"], p["gpu_interfaces"], topology)
    except logic.TopologyError as exc:
        gm.fail("rxdm_topology: %s" % exc)
    result = gm.put_file("rxdm_topology", "dest", p["dest"], content, mode)
    result.update(content=content, pairs=pairs)
    gm.exit(**result)


if __name__ == "__main__":
    main()
