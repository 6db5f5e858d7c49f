# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One job per NVLink domain's IMEX channels (A4X, A4X Max), judged by the Slurm prolog.

The GPUs of an NVLink domain's VMs share memory through IMEX, and an IMEX channel is what lets a process
import memory another exported. With the channel the driver creates at load (channel 0) and no per-job
channel from Slurm, every job in the domain opens the same channel, so two jobs in one domain can import
each other's memory or break each other's imports (NVIDIA's IMEX guide: channels are the isolation between
users of one IMEX domain). Slurm's answer is a channel per job (SwitchType=switch/nvidia_imex); without it,
the prolog of a job refuses to start it, or names it, while another job runs in its domain.

The slurm_hooks role writes the node's domain file (ENV_FILE names it to the agent):
  {"domain": "<block>/<sub-block>", "nodes": [Slurm node names of the domain], "channel_per_job": bool,
   "on_shared": "fail" | "warn" | "ignore"}
A node without the file (another family, or a placement not known) is not judged. One squeue call asks
slurmctld which jobs hold the domain's nodes. A check that cannot run warns: it never drains a node.

Plain Python with no ansible import: the node health agent runs it from a copy on the node.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd

ENV_FILE = "GPUDIRECT_NVLINK_DOMAIN_FILE"
ON_SHARED = ("fail", "warn", "ignore")
# jobs that hold or may still hold GPU memory: running, completing (memory not yet freed), configuring
# (another prolog under way) and suspended
STATES = "R,CG,CF,S"
_FIELDS = 3
_NODE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_CANNOT = "could not check the jobs of the domain: "


class DomainFileError(ValueError):
    """A domain file the prolog cannot use; one line naming the key."""


def load(text):
    """The domain file's content, checked; DomainFileError names the key at fault."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise DomainFileError("not JSON: %s" % exc)
    if not isinstance(data, dict):
        raise DomainFileError("not a JSON object")
    if not isinstance(data.get("domain"), str) or not data["domain"]:
        raise DomainFileError("domain: missing")
    nodes = data.get("nodes")
    if not isinstance(nodes, list) or not nodes or not all(isinstance(n, str) for n in nodes):
        raise DomainFileError("nodes: must be a non-empty list of Slurm node names")
    for name in nodes:
        # squeue reads a comma list: a name with a comma or a host-list bracket would widen it
        if not _NODE_NAME.match(name):
            raise DomainFileError("nodes: %r is not one Slurm node name" % (name,))
    if not isinstance(data.get("channel_per_job", False), bool):
        raise DomainFileError("channel_per_job: must be true or false")
    on_shared = data.get("on_shared", "fail")
    if on_shared not in ON_SHARED:
        raise DomainFileError("on_shared: must be fail, warn or ignore, got %r" % (on_shared,))
    return {"domain": data["domain"], "nodes": list(nodes), "channel_per_job": data.get("channel_per_job", False),
            "on_shared": on_shared}


def squeue_argv(nodes):
    """squeue listing job|user|nodes of every job that holds one of the nodes."""
    return ["squeue", "--noheader", "--states=" + STATES, "--nodelist=" + ",".join(nodes),
            "--format=%A|%u|%N"]


def parse_squeue(text):
    """([{job, user, nodes}], [lines that are not a record]); a job listed twice counts once."""
    jobs, bad, seen = [], [], set()
    for line in (text or "").splitlines():
        line = line.strip()
        if not line:
            continue
        parts = [p.strip() for p in line.split("|")]
        if len(parts) != _FIELDS or not parts[0]:
            bad.append(line)
            continue
        if parts[0] not in seen:
            seen.add(parts[0])
            jobs.append({"job": parts[0], "user": parts[1], "nodes": parts[2]})
    return jobs, bad


def judge(domain, job_id, jobs):
    """Findings about the domain's other jobs. domain: load()'s result."""
    if domain["channel_per_job"] or domain["on_shared"] == "ignore":
        return []
    others = [j for j in jobs if j["job"] != job_id]
    if not others:
        return []
    first = others[0]
    who = "job %s (%s on %s)" % (first["job"], first["user"] or "?", first["nodes"] or "?")
    if len(others) > 1:
        who += " and %d more job%s run" % (len(others) - 1, "s" if len(others) > 2 else "")
    else:
        who += " runs"
    # the line that becomes the drain reason starts with what matters: Slurm cuts long reasons
    cause = ("%s on the same IMEX channels: jobs of one NVLink domain can import each other's GPU memory; give "
             "each job its own channel (SwitchType=switch/nvidia_imex) or run one job per domain" % who)
    return [_finding(domain["domain"], domain["on_shared"], cause)]


def _finding(domain, severity, cause):
    return fd.make("imex", "NVLink domain %s" % domain, severity, cause)


def check(run, which, environ, read=None):
    """The prolog's findings about the other jobs of this node's NVLink domain ([] without a domain file)."""
    path = environ.get(ENV_FILE)
    if not path:
        return []
    try:
        domain = load((read or _read)(path))
    except (IOError, OSError) as exc:
        return [fd.make("imex", path, "warn", "cannot read it: %s" % (getattr(exc, "strerror", None) or exc))]
    except DomainFileError as exc:
        return [fd.make("imex", path, "warn", "%s (the slurm_hooks role writes it)" % exc)]
    if domain["channel_per_job"] or domain["on_shared"] == "ignore":
        return []
    job_id = environ.get("SLURM_JOB_ID")
    if not job_id:
        return [_finding(domain["domain"], "warn", _CANNOT + "SLURM_JOB_ID unset")]
    argv = squeue_argv(domain["nodes"])
    squeue = which(argv[0])
    if not squeue:
        return [_finding(domain["domain"], "warn", _CANNOT + "squeue not found")]
    rc, out, err = run([squeue] + argv[1:])
    if rc != 0:
        lines = (err or "").strip().splitlines()
        return [_finding(domain["domain"], "warn", _CANNOT + "squeue failed (exit %d)%s"
                         % (rc, (": " + lines[0]) if lines else ""))]
    jobs, bad = parse_squeue(out)
    found = judge(domain, job_id, jobs)
    if bad:
        found.append(_finding(domain["domain"], "warn", "squeue answered a line that is not job|user|nodes: %r%s"
                              % (bad[0], (" (+%d more)" % (len(bad) - 1)) if len(bad) > 1 else "")))
    return found


def _read(path):
    with open(path) as handle:
        return handle.read()
