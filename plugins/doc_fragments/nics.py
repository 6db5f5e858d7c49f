# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The settings beside the node check's nics part (module_utils/health/node_health.py NIC_SETTINGS) that
gpu_nic_ready shares: both modules take them as options of their own. No O() or RV() here: a pointer to one
module's option or return value would lead nowhere in the other."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r"""
options:
  rdma:
    description:
      - How to treat the RDMA checks on the families that use RDMA (gIB) - each NIC's RDMA device C(ACTIVE), its
        GID table holding the NIC's address, and that address at the GID index the family's NCCL settings pin,
        where they pin one.
      - C(auto) checks the RDMA devices when the node has any, and does not fail a node without any.
      - C(required) checks them on every family, and fails every NIC when the node has no RDMA devices.
      - C(skip) does not check RDMA.
    type: str
    choices: [auto, required, skip]
    default: auto
"""
