# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a node runs a job, so that no NCCL test is started on it.

An NCCL test drives every GPU and NIC of a node at full speed: on a node that runs someone's job it
slows or breaks that job. A node is:

  - ``busy`` when any GPU runs a compute process (``nvidia-smi -q -x``: ``<processes>``, type C or
    C+G; graphics-only processes such as a display server are no job), or when Slurm shows the node
    running work (allocated, mixed, completing, or draining, which still has jobs on it);
  - ``unknown`` when its GPUs' processes, or its Slurm state where Slurm is configured, cannot be
    read: not proven idle, so it is never tested as idle by default;
  - ``idle`` otherwise (a drained Slurm node with no process on its GPUs is idle).

Plain Python with no ansible import, like the rest of this folder.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.common.safe_text import one_line

# sinfo %T long state names that mean jobs run on the node now
SLURM_BUSY_STATES = ("allocated", "mixed", "completing", "draining")
# %T marks a state with one of these suffixes (not responding, powered down, powering up, ...)
_SLURM_SUFFIXES = "*~#!%$@^-"
_NAME_LIMIT = 120


def program_name(process_name):
    """The program of a process as nvidia-smi names it (a path, maybe with arguments): its file name."""
    first = (process_name or "").strip().split(" ", 1)[0]
    return first.rstrip("/").rsplit("/", 1)[-1]


def compute_processes(gpus, ignore=()):
    """The compute processes on the GPUs, as (jobs, ignored): each gpu (index), pci_bus_id, pid, type,
    process_name, used_memory_mib. ignore: program names that are the node's own daemons (RxDM holds
    memory on every GPU), never a job."""
    ignore = set(ignore or ())
    found, ignored = [], []
    for gpu in gpus or []:
        for proc in gpu.get("processes") or []:
            if "C" not in (proc.get("type") or "").upper():
                continue
            record = {"gpu": gpu.get("index"), "pci_bus_id": gpu.get("pci_bus_id"), "pid": proc.get("pid"),
                      "type": proc.get("type"), "process_name": proc.get("process_name"),
                      "used_memory_mib": proc.get("used_memory_mib")}
            (ignored if program_name(record["process_name"]) in ignore else found).append(record)
    return found, ignored


def parse_sinfo_states(text):
    """``sinfo -h -n NODE -o %T`` -> the node's states, lower case, without suffixes, in order, once each.

    A node in several partitions prints one line each; a flag state prints as ``idle+drain``."""
    states = []
    for line in (text or "").splitlines():
        for part in line.strip().lower().split("+"):
            state = part.strip().rstrip(_SLURM_SUFFIXES)
            if state and state not in states:
                states.append(state)
    return states


def slurm_busy(states):
    return any(s in SLURM_BUSY_STATES for s in states or [])


def parse_squeue(text):
    """``squeue -h -w NODE -o %i|%u|%j|%T`` -> [{id, user, name, state}]; lines of another shape are skipped."""
    jobs = []
    for line in (text or "").splitlines():
        parts = line.strip().split("|")
        if len(parts) == 4 and parts[0]:
            jobs.append(dict(zip(("id", "user", "name", "state"), parts)))
    return jobs


def _process_line(proc):
    memory = " (%s MiB)" % proc["used_memory_mib"] if proc.get("used_memory_mib") is not None else ""
    return "GPU %s: pid %s %s%s" % (proc["gpu"], proc["pid"] if proc["pid"] is not None else "?",
                                    one_line(proc["process_name"] or "(name not given)", _NAME_LIMIT), memory)


def _slurm_line(slurm):
    states = [s for s in slurm["states"] if s in SLURM_BUSY_STATES]
    jobs = ["job %s (%s, %s)" % (one_line(j["id"], 40), one_line(j["name"], _NAME_LIMIT), one_line(j["user"], 40))
            for j in slurm.get("jobs") or []]
    return "Slurm node %s is %s%s" % (one_line(slurm.get("node"), 80), "+".join(states),
                                      (": " + ", ".join(jobs)) if jobs else "")


def decide(gpus=None, gpu_error=None, slurm=None, slurm_error=None, ignore=()):
    """The node's state with the reasons that name the processes (pid, name, GPU) and the Slurm job or state.

    gpus: nvidia_smi.parse() records, or None with gpu_error saying why they could not be read.
    ignore: program names of the node's own GPU daemons (compute_processes), returned as ``ignored``.
    slurm: {node, states, jobs} where Slurm knows the node, None where it is not installed, not configured
    or does not list the node; slurm_error where it is configured but cannot be read.
    """
    reasons = []
    unknown = []
    processes = []
    ignored = []
    if gpu_error is not None:
        unknown.append("could not read the GPU processes: " + one_line(gpu_error, 300))
    elif not gpus:
        unknown.append("could not read the GPU processes: nvidia-smi lists no GPU")
    else:
        blind = [g for g in gpus if g.get("processes") is None]
        if blind:
            unknown.append("could not read the GPU processes: nvidia-smi lists no process block for GPU %s"
                           % ", ".join(str(g.get("index")) for g in blind))
        processes, ignored = compute_processes(gpus, ignore)
        if processes:
            reasons.append("; ".join(_process_line(p) for p in processes))
    if slurm_error is not None:
        unknown.append("could not read the Slurm state: " + one_line(slurm_error, 300))
    elif slurm and slurm_busy(slurm.get("states")):
        reasons.append(_slurm_line(slurm))
    state = "busy" if reasons else ("unknown" if unknown else "idle")
    return {"state": state, "busy": state == "busy", "reasons": reasons + unknown, "processes": processes,
            "ignored": ignored, "slurm": slurm}


def summary(decision):
    """One line: the state and why."""
    reasons = decision.get("reasons") or []
    return "%s%s" % (decision.get("state"), (": " + "; ".join(reasons)) if reasons else "")


def describe(host, decision):
    """One line: the node, its state and why."""
    return "%s: %s" % (host, summary(decision))


def wait_idle(look, wait_s, interval_s, clock=None, sleep=None):
    """look() -> decision, again every interval_s until it is idle or wait_s has passed (0: once).
    Returns (the last decision, seconds waited); never sleeps past the deadline."""
    clock, sleep = clock or time.time, sleep or time.sleep
    start = clock()
    deadline = start + max(0.0, float(wait_s))
    while True:
        decision = look()
        now = clock()
        if decision["state"] == "idle" or now >= deadline:
            return decision, now - start
        sleep(min(float(interval_s), max(0.0, deadline - now)))
