# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a Slurm prolog or epilog does on a GPU node: start or stop RxDM for the job, then run the
node health checks (node_health) and say whether Slurm may run the job.

  prolog  On a node of a multi-node NVLink domain (A4X, A4X Max) whose role wrote the domain file: refuse
          (or name) a job that would share the domain's IMEX channels with another job
          (nvlink_domain_jobs). For a job on more than one node, when RxDM runs per job (TCPX/TCPXO
          families): start the RxDM unit the rxdm role wrote and wait for it to become ready. Then check
          the node.
  epilog  When RxDM runs per job: stop its unit. Then check the node again (without RxDM).

RxDM's absence is expected (so not checked) where it runs per job and this job does not need it.
Plain Python with no ansible import: the node health agent runs it from a copy on the node.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health, nvlink_domain_jobs
from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text

PHASES = ("prolog", "epilog")
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def count_hosts(nodelist):
    """Hosts in a Slurm host list ("a3-[0-3,7],b1" is 6) without calling scontrol. None when unreadable."""
    if not nodelist:
        return None
    total = 0
    depth = 0
    part = ""
    parts = []
    for char in nodelist + ",":
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(part)
            part = ""
        else:
            part += char
    for part in parts:
        groups = re.findall(r"\[([^\]]*)\]", part)
        count = 1
        for group in groups:
            width = 0
            for item in group.split(","):
                match = _RANGE.match(item.strip())
                if not match:
                    return None
                low, high = int(match.group(1)), int(match.group(2) or match.group(1))
                if high < low:
                    return None
                width += high - low + 1
            count *= width
        total += count
    return total


def job_nodes(environ):
    """How many nodes the job has: SLURM_JOB_NUM_NODES, else counted from SLURM_JOB_NODELIST, else 1."""
    value = environ.get("SLURM_JOB_NUM_NODES") or environ.get("SLURM_NNODES")
    if value and value.isdigit():
        return int(value)
    return count_hosts(environ.get("SLURM_JOB_NODELIST") or environ.get("SLURM_NODELIST")) or 1


def _command(run, which, argv, what):
    """Run argv (argv[0] looked up with which); None when it worked, else the failure in one line.

    The first line of stderr says why (systemctl: "... the control process exited with error code.";
    what follows points at systemctl status and journalctl)."""
    path = which(argv[0])
    if not path:
        return "%s not found" % argv[0]
    rc, _out, err = run([path] + list(argv[1:]))
    if rc != 0:
        lines = (err or "").strip().splitlines()
        return "%s failed (exit %d)%s" % (what, rc, (": " + lines[0]) if lines else "")
    return None


def _systemctl(run, which, verb, unit):
    return _command(run, which, ["systemctl", verb, unit], "systemctl %s %s" % (verb, unit))


def drain(run, which, environ, reason):
    """Drain this node (SLURMD_NODENAME) with the reason, so sinfo -R names the finding, not a bare
    prolog error. None when it worked, else why not, in one line.

    Slurm advises against scontrol in hooks, for slurmctld's sake at scale; only a failing node calls
    this, once. Slurm caps a reason's length; the reason starts with what matters."""
    node = environ.get("SLURMD_NODENAME")
    if not node:
        return "cannot set the drain reason: SLURMD_NODENAME unset"
    return _command(run, which, ["scontrol", "update", "nodename=%s" % node, "state=drain",
                                 "reason=%s" % safe_text.one_line(reason, limit=200)], "scontrol update")


def run_hook(phase, config, run, which, nodes, rxdm_per_job, rxdm_wait_s, root="/", environ=None):
    """Judge the NVLink domain's other jobs (prolog), start/stop RxDM as the phase needs, then check the node.

    environ: the hook's environment (SLURM_JOB_ID, the domain file's path); the process's by default.
    Returns node_health.check's result plus actions (what was done to RxDM, in words).
    """
    if phase not in PHASES:
        raise ValueError("phase must be %s, got %r" % (" or ".join(PHASES), phase))
    node_health.validate(config)
    rxdm = config.get("rxdm")
    actions = []
    environ = os.environ if environ is None else environ
    before = []
    if phase == "prolog":
        before.extend(nvlink_domain_jobs.check(run, which, environ))
    wait_s = 0
    checked = dict(config)
    if rxdm and rxdm_per_job:
        unit = rxdm.get("unit") or rxdm["container"]
        if phase == "prolog" and nodes > 1:
            problem = _systemctl(run, which, "start", unit)
            if problem:
                before.append(node_health.finding("rxdm", unit, "fail", problem))
            else:
                actions.append("started %s for a %d-node job" % (unit, nodes))
                wait_s = rxdm_wait_s
        else:
            checked["rxdm"] = None
            if phase == "epilog":
                problem = _systemctl(run, which, "stop", unit)
                if problem:
                    # RxDM left running costs the next job nothing: the prolog starts it again
                    before.append(node_health.finding("rxdm", unit, "warn", problem))
                else:
                    actions.append("stopped %s" % unit)
    result = node_health.check(checked, run, which, root=root, rxdm_wait_s=wait_s)
    result["findings"] = before + result["findings"]
    result["actions"] = actions
    return result
