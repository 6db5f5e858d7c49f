# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node check's gpu part (module_utils/health/node_health.py gpu_options): gpu_health_info takes its
settings as options (DOCUMENTATION), node_health_info as the suboptions of its gpu option (PART), and
gpu_versions_info the one it shares with them (SYS_DIR)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


# Literal text, as ansible-test reads a fragment. PART repeats the options of DOCUMENTATION one level
# down (defaults may differ); tests/unit/docs/test_shared_options.py fails where their texts part.
class ModuleDocFragment(object):

    DOCUMENTATION = r"""
options:
  sys_dir:
    description: Where sysfs is mounted. Only a test bed without GPUs points it elsewhere.
    type: path
    default: /sys

  imex_nodes:
    description:
      - Addresses of the VMs of the node's NVLink domain, which IMEX's C(nodes_config.cfg) must list (the
        P(gpudirect.gcp.nvlink_domain_peers#filter) filter gives them). Unset, the list is not compared.
      - Ignored on families without IMEX.
    type: list
    elements: str
  imex_wait_s:
    description:
      - Seconds to keep looking while IMEX has a failing finding, since the domain connects only once its other
        VMs have started IMEX too. 0 takes one look.
    type: int
    default: 0
  dcgm_level:
    description:
      - The level of DCGM's diagnostic (C(dcgmi diag -r)) where the node has C(dcgmi). 1 takes seconds; 2 about
        two minutes; 3 and 4 stress the GPUs for tens of minutes (run them on drained nodes). 0 leaves DCGM out.
    type: int
    default: 1
    choices: [0, 1, 2, 3, 4]
  dcgm_timeout_s:
    description: Seconds DCGM's diagnostic may take before it counts as one that could not run.
    type: int
    default: 300
  rdma_interval_s:
    description:
      - Seconds between the two reads of the RDMA error counters; a counter that rises in between names its
        port. Ignored on families without RDMA devices.
    type: float
    default: 1.0
  xid_policy:
    description:
      - Changes to the collection's Xid catalogue (NVIDIA's reading of each Xid), per Xid, the rest kept as the
        catalogue says. Keys are Xid numbers (C("79") or C(79)); each value may set any of C(severity)
        (C(fail) or C(warn)), C(repair) (a repair rung, as the findings' C(rung) names them), C(count) (events
        of that Xid on one GPU, 1 or more, that make its severity apply; fewer give a C(warn)) and C(window_s)
        (the seconds those events must fall within, 1 or more; null counts since boot, as where the log lines
        carry no time).
      - "Example: C({\"79\": {\"severity\": \"fail\"}, \"13\": {\"count\": 5, \"window_s\": 3600,
        \"severity\": \"fail\", \"repair\": \"reset_gpu\"}}). An Xid the catalogue lacks may be given one."
      - A bad entry (a code that is not a number, an unknown field, a severity or rung not listed, a count or
        window that is not a whole number of 1 or more) gives one C(warn) finding with the subject
        C(xid_policy) naming the code and field; the catalogue's value stands for that field, and the rest of
        the policy applies.
      - Unset, the catalogue applies as it is.
    type: dict
"""

    SYS_DIR = r"""
options:
  sys_dir:
    description: Where sysfs is mounted. Only a test bed without GPUs points it elsewhere.
    type: path
    default: /sys
"""

    PART = r"""
options:
  gpu:
    description: Check the GPUs (and IMEX and the RDMA ports where the family has them).
    type: dict
    suboptions:
      sys_dir:
        description: Where sysfs is mounted. Only a test bed without GPUs points it elsewhere.
        type: path
        default: /sys

      imex_nodes:
        description:
          - Addresses of the VMs of the node's NVLink domain, which IMEX's C(nodes_config.cfg) must list (the
            P(gpudirect.gcp.nvlink_domain_peers#filter) filter gives them). Unset, the list is not compared.
          - Ignored on families without IMEX.
        type: list
        elements: str
      imex_wait_s:
        description:
          - Seconds to keep looking while IMEX has a failing finding, since the domain connects only once its other
            VMs have started IMEX too. 0 takes one look.
        type: int
        default: 0
      dcgm_level:
        description:
          - The level of DCGM's diagnostic (C(dcgmi diag -r)) where the node has C(dcgmi). 1 takes seconds; 2 about
            two minutes; 3 and 4 stress the GPUs for tens of minutes (run them on drained nodes). 0 leaves DCGM out.
        type: int
        default: 1
        choices: [0, 1, 2, 3, 4]
      dcgm_timeout_s:
        description: Seconds DCGM's diagnostic may take before it counts as one that could not run.
        type: int
        default: 300
      rdma_interval_s:
        description:
          - Seconds between the two reads of the RDMA error counters; a counter that rises in between names its
            port. Ignored on families without RDMA devices.
        type: float
        default: 1.0
      xid_policy:
        description:
          - Changes to the collection's Xid catalogue (NVIDIA's reading of each Xid), per Xid, the rest kept as the
            catalogue says. Keys are Xid numbers (C("79") or C(79)); each value may set any of C(severity)
            (C(fail) or C(warn)), C(repair) (a repair rung, as the findings' C(rung) names them), C(count) (events
            of that Xid on one GPU, 1 or more, that make its severity apply; fewer give a C(warn)) and C(window_s)
            (the seconds those events must fall within, 1 or more; null counts since boot, as where the log lines
            carry no time).
          - "Example: C({\"79\": {\"severity\": \"fail\"}, \"13\": {\"count\": 5, \"window_s\": 3600,
            \"severity\": \"fail\", \"repair\": \"reset_gpu\"}}). An Xid the catalogue lacks may be given one."
          - A bad entry (a code that is not a number, an unknown field, a severity or rung not listed, a count or
            window that is not a whole number of 1 or more) gives one C(warn) finding with the subject
            C(xid_policy) naming the code and field; the catalogue's value stands for that field, and the rest of
            the policy applies.
          - Unset, the catalogue applies as it is.
        type: dict
"""
