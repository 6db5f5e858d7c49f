#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_busy_info
short_description: Tell whether a node runs a job on its GPUs, so no NCCL test is started on it
version_added: 1.1.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Reads the compute processes on every GPU (C(nvidia-smi -q -x), the C(processes) block of each GPU) and,
    where Slurm is installed and configured on the node, the node's Slurm state (C(sinfo -h -n NODE -o %T))
    and its jobs (C(squeue)).
  - C(busy) when any GPU runs a compute process (type C or C+G; graphics-only processes are no job) or
    Slurm shows the node C(allocated), C(mixed), C(completing) or C(draining).
  - C(unknown) when C(nvidia-smi) is missing or fails, lists no GPU or no process block, or Slurm is
    configured but does not answer. An unknown node is not proven idle, and the NCCL tests leave it out
    like a busy one.
  - C(idle) otherwise; a drained Slurm node whose GPUs run nothing is idle.
  - Changes nothing.
options:
  nvidia_smi:
    description: The C(nvidia-smi) command, a name on PATH or an absolute path.
    type: str
    default: nvidia-smi
  ignore_processes:
    description:
      - Program names (the file name of the process nvidia-smi lists) of the node's own GPU daemons, which
        are no job. RxDM holds memory on every GPU of a TCPX or TCPXO node; the roles pass the family
        table's C(rxdm.gpu_processes). Listed in RV(ignored).
    type: list
    elements: str
    default: []
  slurm:
    description: Read the node's Slurm state where C(sinfo) is on PATH and a Slurm configuration is found.
    type: bool
    default: true
  slurm_node:
    description: The node's Slurm name; empty for the short host name.
    type: str
    default: ""
  wait_s:
    description:
      - Look again every O(interval_s) until the node is idle, for at most this many seconds; V(0) looks once.
      - The wait before a disruptive step on a drained node. A Slurm drain keeps the running job, so the node
        is idle only once that job has ended. The result is the last look; RV(waited_s) says how long it took.
    type: float
    default: 0
  interval_s:
    description: Seconds between two looks while O(wait_s) lasts.
    type: float
    default: 5
extends_documentation_fragment:
  - gpudirect.gcp.slurm
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
"""

EXAMPLES = r"""
- name: Look whether the node runs a job
  gpudirect.gcp.gpu_busy_info:
  register: busy

- name: Say why the node is not idle
  ansible.builtin.debug:
    msg: "{{ busy.msg }}"
  when: busy.state != 'idle'
"""

RETURN = r"""
state:
  description: C(idle), C(busy) or C(unknown).
  returned: always
  type: str
  sample: busy
busy:
  description: Whether the node runs a job (C(state) is C(busy)).
  returned: always
  type: bool
reasons:
  description: One line per cause, naming each compute process (GPU, pid, name, memory), the Slurm state
    and jobs, or what could not be read.
  returned: always
  type: list
  elements: str
  sample: ["GPU 0: pid 100477 /usr/bin/python3 (22430 MiB)"]
processes:
  description: The compute processes on the GPUs.
  returned: always
  type: list
  elements: dict
  contains:
    gpu: {description: The GPU's index., type: int}
    pci_bus_id: {description: The GPU's bus id as nvidia-smi prints it., type: str}
    pid: {description: The process id (null where the driver does not give it)., type: int}
    type: {description: C(C) or C(C+G)., type: str}
    process_name: {description: The process' name as nvidia-smi prints it., type: str}
    used_memory_mib: {description: "GPU memory the process holds, in MiB.", type: int}
ignored:
  description: The compute processes of the programs in O(ignore_processes), with the keys of RV(processes).
  returned: always
  type: list
  elements: dict
slurm:
  description: The node's Slurm name, states and jobs (C(id), C(user), C(name), C(state)); null where
    Slurm is not installed or not configured on the node, or was not asked for.
  returned: always
  type: dict
  sample: {"node": "a3-node1", "states": ["mixed"], "jobs": [{"id": "4711", "user": "alice", "name": "train",
           "state": "RUNNING"}]}
waited_s:
  description: Seconds spent waiting for the node to become idle (V(0) without O(wait_s)).
  returned: always
  type: float
  sample: 42.5
msg:
  description: One line with the state and the reasons.
  returned: always
  type: str
  sample: "busy: GPU 0: pid 100477 /usr/bin/python3 (22430 MiB)"
"""

import os
import socket

from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import gpu_busy, nvidia_smi
from ansible_collections.gpudirect.gcp.plugins.module_utils.health import slurm_node
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def _first_line(text):
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[0] if lines else "no output"


def read_gpus(gm):
    """(records, None) or (None, why they could not be read)."""
    cmd = gm.params["nvidia_smi"]
    path = cmd if os.path.isabs(cmd) else gm.which(cmd)
    if not path or not os.access(path, os.X_OK):
        return None, "%s not found" % cmd
    rc, out, err = gm.run([path, "-q", "-x"])
    if rc != 0:
        return None, "%s -q -x exited %d: %s" % (cmd, rc, _first_line(err or out))
    try:
        return nvidia_smi.parse(out), None
    except nvidia_smi.ParseError as exc:
        return None, str(exc)


def read_slurm(gm):
    """(slurm record or None, None) or (None, why a configured Slurm could not be read)."""
    sinfo = gm.which("sinfo")
    paths = gm.params["slurm_conf_paths"]
    if not gm.params["slurm"] or not sinfo or not slurm_node.configured(paths, os.environ, os.path.exists):
        return None, None
    node = gm.params["slurm_node"] or socket.gethostname().split(".")[0]
    rc, out, err = gm.run([sinfo, "-h", "-n", node, "-o", "%T"])
    if rc != 0:
        return None, "sinfo -n %s exited %d: %s" % (node, rc, _first_line(err or out))
    states = gpu_busy.parse_sinfo_states(out)
    if not states:
        # sinfo prints nothing for a node this Slurm does not list
        return None, None
    jobs = []
    squeue = gm.which("squeue")
    if gpu_busy.slurm_busy(states) and squeue:
        rc, out, err = gm.run([squeue, "-h", "-w", node, "-o", "%i|%u|%j|%T"])
        jobs = gpu_busy.parse_squeue(out) if rc == 0 else []
    return {"node": node, "states": states, "jobs": jobs}, None


def main():
    gm = GpuModule(dict(
        nvidia_smi=dict(type="str", default="nvidia-smi"),
        ignore_processes=dict(type="list", elements="str", default=[]),
        slurm=dict(type="bool", default=True),
        slurm_node=dict(type="str", default=""),
        slurm_conf_paths=dict(type="list", elements="path", default=slurm_node.CONF_PATHS),
        wait_s=dict(type="float", default=0),
        interval_s=dict(type="float", default=5),
    ))
    if gm.params["wait_s"] < 0 or gm.params["interval_s"] <= 0:
        gm.fail("gpu_busy_info: wait_s must be 0 or more and interval_s above 0, not %s and %s"
                % (gm.params["wait_s"], gm.params["interval_s"]))
    decision, waited = gpu_busy.wait_idle(lambda: look(gm), gm.params["wait_s"], gm.params["interval_s"])
    gm.exit(changed=False, msg=gpu_busy.summary(decision), waited_s=round(waited, 1), **decision)


def look(gm):
    gpus, gpu_error = read_gpus(gm)
    slurm, slurm_error = read_slurm(gm)
    return gpu_busy.decide(gpus=gpus, gpu_error=gpu_error, slurm=slurm, slurm_error=slurm_error,
                           ignore=gm.params["ignore_processes"])


if __name__ == "__main__":
    main()
