# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the modules that watch a running job (nccl_job_status, nccl_job_evidence) read beside RAS: the job's
NCCL Inspector files and the nodes' names, and how often RAS is read (module_utils/job/)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r"""
options:
  inspector_dir:
    description:
      - Where the job's NCCL Inspector writes its metrics files (its C(NCCL_INSPECTOR_DUMP_DIR), with
        C(NCCL_INSPECTOR_PROM_DUMP=1)); empty reads none. Every C(nccl_inspector_metrics_*.prom) there is read,
        for the node's bus bandwidth per job, communicator, collective and size bucket (the median of its
        GPUs), to compare the job's nodes (a node slow against its peers is a straggler).
    type: path
    default: ''
  inspector_stale_s:
    description:
      - An Inspector file not rewritten for this many seconds is left out (the job ended, or the GPU completed
        no collective since), and counted as stale.
    type: float
    default: 120
  names:
    description:
      - Node names by the address RAS reports for them (the nodes' addresses on the network NCCL bootstraps
        over), so that findings name the node, not only its address.
    type: dict
    default: {}
  interval_s:
    description: Seconds between two reads of RAS's status while watching.
    type: float
    default: 5
"""
