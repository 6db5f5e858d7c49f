#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: nccl_job_evidence
short_description: Gather what one node holds of a hung or slow NCCL job into one archive
version_added: 1.1.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - For the engineer paged for a job that hangs or crawls, in one pass on a node of the job, into one
    C(.tar.gz) on the node - NCCL RAS's status (read over O(watch_s), so a hang and the ranks it waits for
    are judged), the job's processes, a Python stack dump of every rank (C(py-spy dump)) and its kernel
    stack, PyTorch's flight-recorder files the ranks wrote, C(nvidia-smi -q -x), the kernel's GPU, NVLink and
    NIC lines since the job started, every rank's NCCL environment, the journals of O(units) (RxDM, the
    plugin installer) and the job's output files (those O(output_files) name and those C(scontrol) gives).
  - The job's processes are those of the Slurm job O(job) by their own record - its id in their
    environment, no other job's cgroup, and the job's user (from C(scontrol)) as their owner. The pids
    NCCL RAS places on this node are ranks only where they pass the same check; one that does not is
    ignored and named in RV(parts). Only the variables that shape NCCL are kept of an environment;
    values of secret-looking variables, arguments and credentials are masked in everything written.
  - What the job names is read as the job's and no further - flight-recorder files only of the exact
    prefix and rank in the prefix's own directory, no symlink followed (but the system's own, root's in
    a directory only root may change), no C(..), only regular files of the rank's user (of the job's user
    for C(scontrol)'s StdOut and StdErr), a FIFO or device never opened for reading, at most
    O(max_file_mb) a file and O(max_total_mb) in all.
  - A read of C(/proc) that can block (a process stuck in the kernel) is given O(proc_timeout_s); the
    process that outlasts it is skipped and named. The processes looked at are those Slurm places in the job
    on this node (C(scontrol listpids), else the job's cgroups) and those NCCL RAS names; every process of the
    node only where Slurm names none.
  - Every command (C(scontrol), C(nvidia-smi), C(journalctl)) and every read of a file the job names is given
    O(command_timeout_s) (a stack dump O(py_spy_timeout_s)); one still running then is killed, or left behind
    where a kill cannot end it (C(nvidia-smi) asleep in the driver of a sick GPU), and its part says so. The
    whole collection stops at O(deadline_s); what would start later is named in RV(parts) as left out, and the
    archive holds what was gathered.
  - C(NCCL DIAG) lines (NCCL 2.31 and later, printed whatever C(NCCL_DEBUG) says) in the job's output or the
    journals become findings where they report a failure or a degraded result.
  - A part that cannot be had (no C(py-spy), no RAS, a file unreadable) is named in RV(parts) with its reason;
    it never fails the node.
  - Writes only the archive (under O(dest)); the job is not touched (C(py-spy dump) pauses each rank for
    a moment to read its stack). The archive is written to a new file of its own (mode 0600) and renamed
    into place, never through a symlink and never over another user's file.
options:
  job:
    description: The Slurm job id; empty takes the job of the ranks NCCL RAS lists on this node.
    type: str
    default: ""
  node:
    description: This node's name in the evidence (the inventory name); RAS's ranks whose address O(names)
      maps to it, or that give it as their host, are this node's.
    type: str
    required: true
  dest:
    description: Directory on the node the archive is written in (made if missing, mode 0700). It must not
      be reached through a symlink other than the system's own, must belong to the user the module runs as
      or to root, and may be writable by others only with the sticky bit (as C(/tmp)); the module fails
      otherwise.
    type: path
    default: /var/tmp/gpudirect-job-evidence
  timeout_s:
    description: Seconds to wait for RAS to answer each status.
    type: float
    default: 10
  watch_s:
    description: Seconds to read RAS's status over; ranks that disagree on their counts with none moving for
      that long are judged hung. 0 reads it once.
    type: float
    default: 10
  py_spy:
    description: The C(py-spy) executable (a name looked up on PATH, or a path); missing keeps only kernel stacks.
    type: str
    default: py-spy
  py_spy_timeout_s:
    description: Seconds one stack dump may take.
    type: int
    default: 20
  command_timeout_s:
    description: Seconds any other command, or a read of one file the job names, may take.
    type: float
    default: 60
  deadline_s:
    description:
      - Seconds the whole collection may take, from the module's start; a task that runs it can set Ansible's
        C(timeout) a little above this, for a node that does not answer at all.
    type: float
    default: 240
  units:
    description: systemd units whose journal since the job started is kept (RxDM, the NCCL plugin installer).
    type: list
    elements: str
    default: []
  output_files:
    description: The job's output files on this node to keep (their last O(max_file_mb) MiB) and scan for
      C(NCCL DIAG) lines; C(scontrol)'s StdOut and StdErr of the job are added where they are on this node.
    type: list
    elements: path
    default: []
  since:
    description: Epoch seconds the kernel lines and journals are kept from; 0 takes a minute before the
      job's first process started on this node (an hour back where none is found).
    type: int
    default: 0
  max_file_mb:
    description: The most MiB kept of any one file or output.
    type: int
    default: 64
  max_total_mb:
    description: The most MiB read and kept of all files and outputs together; what comes after is cut or
      left out and named in RV(parts).
    type: int
    default: 256
  proc_timeout_s:
    description: Seconds the reads of one process's C(/proc) files may take (its environment, command line,
      kernel stack); a process stuck longer is skipped and named in RV(parts).
    type: float
    default: 5
extends_documentation_fragment:
  - gpudirect.gcp.nccl_ras
  - gpudirect.gcp.job
  - gpudirect.gcp.attributes
attributes:
  check_mode:
    support: full
    details: Reads the job and says what it found; writes no archive.
  diff_mode:
    support: none
  idempotent:
    support: none
    details: Each run writes a new archive (the job's state at that moment).
notes:
  - Run it with become; reading another user's processes, their environments and stacks takes root.
  - The playbook gpudirect.gcp.diagnose_job runs it on every node of a job at once and joins the archives
    into one with a summary that names the odd rank and its node.
"""

EXAMPLES = r"""
- name: Gather the evidence of job 4242 on this node
  gpudirect.gcp.nccl_job_evidence:
    job: "4242"
    node: "{{ inventory_hostname }}"
    units: [gpudirect-rxdm.service]
  become: true
  register: evidence

- name: Bring the archive back
  ansible.builtin.fetch:
    src: "{{ evidence.archive }}"
    dest: "evidence/{{ inventory_hostname }}.tar.gz"
    flat: true
  when: evidence.archive
"""

RETURN = r"""
archive:
  description: The archive on the node; null in check mode and where the node runs nothing of the job.
  returned: always
  type: str
  sample: /var/tmp/gpudirect-job-evidence/job-4242-node3-20261129T221502.tar.gz
job:
  description: The Slurm job id (given, or found from RAS's ranks); null where none is known.
  returned: always
  type: str
ras:
  description: RAS's view - C(state) (C(none) where nothing answers and no process of the job runs here,
    C(unknown) where RAS could not be read while the job runs (TLS, a refusal, a malformed status), C(ok),
    C(hang), C(faulty)), C(reads), C(nccl_version), C(communicators), C(odd_ranks) (ranks whose counts differ
    from most ranks', with their host and node), C(unmoved_s) (seconds no rank issued a collective over the
    watch, 0 from a single read) and C(watched_s).
  returned: always
  type: dict
verdicts:
  description: What RAS's statuses were judged to show (C(kind), C(comm), C(ranks), C(hosts)).
  returned: always
  type: list
  elements: dict
ranks:
  description: The job's ranks on this node - C(rank), C(local_rank), C(pid), C(frame) (the innermost function of
    its main thread, from py-spy) and C(flight_recorder) (files kept).
  returned: always
  type: list
  elements: dict
processes:
  description: How many processes of the job run on this node.
  returned: always
  type: int
xids:
  description: The Xid events in the kernel lines kept.
  returned: always
  type: list
  elements: dict
diag:
  description: The C(NCCL DIAG) lines found, each with its C(source).
  returned: always
  type: list
  elements: dict
findings:
  description: RAS's verdicts (component C(job)) and the C(NCCL DIAG) lines reporting a fault (component C(fabric)).
  returned: always
  type: list
  elements: dict
inspector:
  description: The node's Inspector bandwidth (with O(inspector_dir)), as gpudirect.gcp.nccl_job_status returns it.
  returned: always
  type: list
  elements: dict
slow_gpus:
  description: The node's GPUs slower than its other GPUs by the straggler test (with O(inspector_dir)) -
    C(job), C(comm), C(collective), C(message_size), C(gpu), C(gbs) and C(ratio) to the node's other GPUs' median.
  returned: always
  type: list
  elements: dict
parts:
  description: Per part (C(ras), C(processes), C(nccl_env), C(stacks), C(flight_recorder), C(gpus), C(kernel),
    C(logs), C(job_output), C(slurm), C(inspector)) whether it was had whole, its files, and the reasons it was not
    (each one line - a pid RAS names that is not of the job, a symlink not followed, a process that outlasted
    O(proc_timeout_s), the total limit reached).
  returned: always
  type: dict
masked:
  description: How many environment values were masked as secrets.
  returned: always
  type: int
msg:
  description: One line with what was gathered.
  returned: always
  type: str
"""

import os
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_job_evidence as evidence
from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_ras
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def message(result):
    lacking = sorted(part for part, entry in result["parts"].items() if not entry["ok"])
    return "job %s on %s: %d rank(s), RAS %s%s%s" % (
        result["job"] or "?", result["node"], len(result["ranks"]), result["ras"]["state"],
        "; %d finding(s)" % len(result["findings"]) if result["findings"] else "",
        "; lacking: %s" % ", ".join(lacking) if lacking else "")


def main():
    gm = GpuModule(dict(
        nccl_ras.ARGUMENT_SPEC,
        job=dict(type="str", default=""),
        node=dict(type="str", required=True),
        names=dict(type="dict", default={}),
        dest=dict(type="path", default="/var/tmp/gpudirect-job-evidence"),
        timeout_s=dict(type="float", default=10),
        watch_s=dict(type="float", default=10),
        interval_s=dict(type="float", default=5),
        py_spy=dict(type="str", default="py-spy"),
        py_spy_timeout_s=dict(type="int", default=20),
        units=dict(type="list", elements="str", default=[]),
        output_files=dict(type="list", elements="path", default=[]),
        inspector_dir=dict(type="path", default=""),
        inspector_stale_s=dict(type="float", default=120),
        since=dict(type="int", default=0),
        max_file_mb=dict(type="int", default=64),
        max_total_mb=dict(type="int", default=256),
        proc_timeout_s=dict(type="float", default=5),
        command_timeout_s=dict(type="float", default=60),
        deadline_s=dict(type="float", default=240),
    ))
    params = dict(gm.params)
    job = params["job"].strip()
    if job and not job.replace("_", "").isdigit():
        gm.fail("nccl_job_evidence: job %r is not a Slurm job id" % job)
    for option in ("timeout_s", "interval_s", "py_spy_timeout_s", "max_file_mb", "max_total_mb", "proc_timeout_s",
                   "command_timeout_s", "deadline_s"):
        if params[option] <= 0:
            gm.fail("nccl_job_evidence: %s must be above 0, not %s" % (option, params[option]))
    if params["watch_s"] < 0:
        gm.fail("nccl_job_evidence: watch_s must be 0 or more, not %s" % params["watch_s"])
    if params["inspector_dir"] and not os.path.isdir(params["inspector_dir"]):
        gm.fail("nccl_job_evidence: inspector_dir %s is not a directory" % params["inspector_dir"])
    params["job"] = job
    spy = params["py_spy"]
    params["py_spy"] = (spy if os.path.isabs(spy) and os.access(spy, os.X_OK) else
                        None if os.path.isabs(spy) else gm.which(spy))
    for tool in ("scontrol", "nvidia-smi", "journalctl"):
        params[tool.replace("-", "_")] = gm.which(tool)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    name = "job-%s-%s-%s" % (job or "unknown", params["node"].replace("/", "_"), stamp)
    write = not gm.check_mode
    store = None
    if write:
        try:
            store = evidence.Archive(params["dest"], name)
        except evidence.Refused as exc:
            gm.fail("nccl_job_evidence: dest %s: %s" % (params["dest"], exc))
        except OSError as exc:
            gm.fail("nccl_job_evidence: dest %s: %s" % (params["dest"], exc.strerror or exc))
    bundle = evidence.Bundle(None, params["max_file_mb"] * 1024 * 1024, write=write,
                             max_total_bytes=params["max_total_mb"] * 1024 * 1024,
                             sink=store.add if store else None)
    try:
        result = evidence.collect(params, gm.run, bundle, nccl_ras.status, time.monotonic, time.sleep)
    except BaseException:
        if store:
            store.discard()
        raise
    result["archive"] = None
    if store and (result["processes"] or result["ras"]["state"] != "none"):
        try:
            result["archive"] = store.commit()
        except evidence.Refused as exc:
            gm.fail("nccl_job_evidence: dest %s: %s" % (params["dest"], exc), **result)
    elif store:
        store.discard()
    gm.exit(changed=result["archive"] is not None, msg=message(result), **result)


if __name__ == "__main__":
    main()
