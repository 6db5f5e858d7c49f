#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: nccl_job_status
short_description: Ask NCCL RAS how the NCCL job running on a node is doing, and name a hang, a dead rank or a failing one
version_added: 1.1.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Every NCCL process (NCCL 2.24 and later, unless the job sets C(NCCL_RAS_ENABLE=0)) runs NCCL's RAS service,
    and on each node of a job one of them answers on C(127.0.0.1:28028) for the whole job. This module speaks
    its socket protocol (no C(ncclras) needed) and reads the job's status in JSON (NCCL 2.28.7 and later).
  - A rank RAS considers dead, a rank it cannot reach, and a rank holding an NCCL error or aborted are named at once.
  - With O(watch_s), it reads the status again every O(interval_s) for that long. A communicator whose ranks
    disagree on how many collectives they issued, and none of which issued another for O(hang_threshold_s), hangs;
    the ranks whose counts differ from the others' are the ones the job waits for, and are named with their node.
    A status alone can read fine while a job hangs; only counts over time show it.
  - No RAS service answering is no fault, only no NCCL job on the node (RV(state) C(none)).
  - The Slurm job is read from the environment of a rank process on the node (only C(SLURM_JOB_ID) is kept).
  - Changes nothing.
options:
  timeout_s:
    description: Seconds for each status, from the connect to its last byte, however slowly RAS sends it
      (the job writes RAS's answers; one later than this is RV(state) C(unknown)).
    type: float
    default: 30
  ras_wait_s:
    description: Seconds RAS itself waits for the job's other processes while it builds a status (its C(TIMEOUT)
      command); null for NCCL's default (5).
    type: int
  watch_s:
    description: Seconds to keep reading the status to judge progress; 0 reads it once (no hang can be judged).
    type: float
    default: 0
  hang_threshold_s:
    description: Seconds without any rank issuing a collective, the ranks disagreeing, that make a hang.
      At most O(watch_s) to be judged within one run.
    type: float
    default: 60
extends_documentation_fragment:
  - gpudirect.gcp.nccl_ras
  - gpudirect.gcp.job
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
"""

EXAMPLES = r"""
- name: Watch the running job for two minutes and name a hung rank
  gpudirect.gcp.nccl_job_status:
    watch_s: 120
    hang_threshold_s: 90
    names: "{{ dict(groups['gpu_nodes'] | map('extract', hostvars, 'ansible_host') | zip(groups['gpu_nodes'])) }}"
  register: job

- name: Say what is wrong with it
  ansible.builtin.debug:
    msg: "{{ job.findings | map(attribute='cause') | list }}"
  when: job.state in ['hang', 'faulty']
"""

RETURN = r"""
state:
  description: C(none) (no NCCL job with RAS on the node), C(ok), C(hang) (a hang was judged), C(faulty)
    (a dead, unreachable or failing rank) or C(unknown) (the job could not be checked, as RAS answered but not
    as RAS does, too late, too large, too deep or with a field out of range; RV(reason) names it).
  returned: always
  type: str
  sample: hang
nccl_version:
  description: The NCCL release of the job as RAS reports it; a stand-in says so here.
  returned: when RAS answered
  type: str
  sample: 2.29.7
job:
  description: The Slurm job id of a rank process on the node; null where none is found.
  returned: always
  type: str
communicators:
  description: Per communicator its hash, size, the ranks answering, the ranks missing, and the least and most
    collectives any rank issued (at the last read).
  returned: always
  type: list
  elements: dict
verdicts:
  description: What was judged, one dict each, with C(kind) (C(hang), C(dead_rank), C(unresponsive_rank),
    C(rank_error)), C(comm), C(job), C(ranks), C(hosts) (addresses), C(stalled_s) and C(finding).
  returned: always
  type: list
  elements: dict
findings:
  description: The verdicts' findings (component C(job)), the subject naming the node(s).
  returned: always
  type: list
  elements: dict
inspector:
  description: What the node's NCCL Inspector files hold (with O(inspector_dir)); null without.
  returned: always
  type: dict
  contains:
    files: {description: The files read., type: int}
    stale_files: {description: Files left out as not rewritten for O(inspector_stale_s)., type: int}
    skipped_files:
      description: Entries left out as no Inspector file (a link, FIFO, device, socket or directory, none of
        which is followed or opened), or as changed while read (the next read has it).
      type: int
    skipped_lines: {description: "Lines that did not parse (a file is rewritten in place: one may be cut short).", type: int}
    skipped_series:
      description: Bandwidth series left out past the most one node reports (2048; the job names its communicators).
      type: int
    bandwidth:
      description: Per job, communicator, collective and message-size bucket, the median bus bandwidth (GB/s) of
        the node's GPUs.
      type: list
      elements: dict
    slow_gpus:
      description: The GPUs slower than the node's other GPUs for the same job, collective and size (below 0.85 of
        their median and three scaled MADs), with C(gpu), C(comm), C(gbs) and C(ratio).
      type: list
      elements: dict
  sample: {"files": 8, "stale_files": 0, "skipped_files": 0, "skipped_lines": 0, "skipped_series": 0,
           "bandwidth": [{"job": "4242", "comm": "DP Group 0", "collective": "AllReduce", "message_size": "4-5GB",
                          "gbs": 181.2}], "slow_gpus": []}
reason:
  description: Why no status could be judged (RV(state) C(none) or C(unknown)).
  returned: when RV(state) is C(none) or C(unknown)
  type: str
  sample: "no NCCL RAS service at 127.0.0.1:28028 (Connection refused): no NCCL job runs here, or it set NCCL_RAS_ENABLE=0"
reads:
  description: How many statuses were read.
  returned: always
  type: int
msg:
  description: One line with the state.
  returned: always
  type: str
"""

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_inspector, nccl_ras
from ansible_collections.gpudirect.gcp.plugins.module_utils.job.nccl_job_status import message, watch
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def main():
    gm = GpuModule(dict(
        nccl_ras.ARGUMENT_SPEC,
        timeout_s=dict(type="float", default=30),
        ras_wait_s=dict(type="int"),
        watch_s=dict(type="float", default=0),
        interval_s=dict(type="float", default=5),
        hang_threshold_s=dict(type="float", default=60),
        inspector_dir=dict(type="path", default=""),
        inspector_stale_s=dict(type="float", default=120),
        names=dict(type="dict", default={}),
    ))
    for option in ("timeout_s", "interval_s", "hang_threshold_s"):
        if gm.params[option] <= 0:
            gm.fail("nccl_job_status: %s must be above 0, not %s" % (option, gm.params[option]))
    if gm.params["watch_s"] < 0:
        gm.fail("nccl_job_status: watch_s must be 0 or more, not %s" % gm.params["watch_s"])
    result = watch(gm.params)
    result["inspector"] = None
    if gm.params["inspector_dir"]:
        if not os.path.isdir(gm.params["inspector_dir"]):
            gm.fail("nccl_job_status: inspector_dir %s is not a directory" % gm.params["inspector_dir"])
        result["inspector"] = nccl_inspector.read_dir(gm.params["inspector_dir"], gm.params["inspector_stale_s"])
    gm.exit(changed=False, msg=message(result), **result)


if __name__ == "__main__":
    main()
