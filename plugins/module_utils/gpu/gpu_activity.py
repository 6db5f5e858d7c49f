# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a job's GPUs are doing now, from two light nvidia-smi queries: spinning, computing or idle.

  nvidia-smi --query-gpu=index,uuid,utilization.gpu,power.draw,power.limit --format=csv,noheader,nounits
  nvidia-smi --query-compute-apps=pid,gpu_uuid --format=csv,noheader,nounits

A GPU whose NCCL kernels wait inside a collective that never completes is busy all the time (a kernel
is always resident, so utilization reads 100%) yet draws far below its power limit: the kernels poll
flags and move nothing. A GPU that computes (training, evaluation) is as busy and draws near its limit;
one between phases (checkpointing, data loading) is idle. The job watch takes "spin" as the evidence
that agreeing RAS counts that stopped are a hang, not a pause.

Plain Python (no ansible import): the node health agent ships it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text

QUERY_GPUS = ["--query-gpu=index,uuid,utilization.gpu,power.draw,power.limit", "--format=csv,noheader,nounits"]
QUERY_APPS = ["--query-compute-apps=pid,gpu_uuid", "--format=csv,noheader,nounits"]
# busy: a kernel resident in (nearly) every sample of nvidia-smi's window
BUSY_PCT = 90.0
# spinning: busy below this share of the power limit (polling kernels on a few SMs); a GPU that
# computes, as in evaluation, draws well above it
SPIN_POWER_SHARE = 0.5
_MISSING = ("", "[n/a]", "n/a", "[not supported]", "not supported", "[unknown error]")
MAX_GPUS = 64


def _number(text):
    value = text.strip()
    if value.lower() in _MISSING:
        return None
    number = float(value)  # ValueError: not what nvidia-smi prints
    if not math.isfinite(number) or number < 0:
        raise ValueError("%r is not a reading" % value)
    return number


def parse_gpus(text):
    """[{index, uuid, util, power, limit}] from the GPU query (a reading nvidia-smi lacks is None);
    ValueError naming the line that is not what it prints."""
    out = []
    for number, line in enumerate(safe_text.to_text(text).splitlines()[:MAX_GPUS], 1):
        if not line.strip():
            continue
        fields = [field.strip() for field in line.split(",")]
        if len(fields) != 5 or not fields[0].isdigit():
            raise ValueError("nvidia-smi's GPU query, line %d, is not index, uuid, utilization, power, limit: %s"
                             % (number, safe_text.one_line(line, 120)))
        try:
            util, power, limit = (_number(value) for value in fields[2:])
        except ValueError as exc:
            raise ValueError("nvidia-smi's GPU query, line %d: %s" % (number, exc))
        out.append({"index": int(fields[0]), "uuid": safe_text.one_line(fields[1], 100), "util": util,
                    "power": power, "limit": limit})
    return out


def parse_apps(text):
    """{pid: set of GPU uuids} from the compute-apps query; lines that are not pid, uuid are skipped."""
    out = {}
    for line in safe_text.to_text(text).splitlines()[:MAX_GPUS * 64]:
        fields = [field.strip() for field in line.split(",")]
        if len(fields) == 2 and fields[0].isdigit():
            out.setdefault(int(fields[0]), set()).add(fields[1])
    return out


def _listed(indexes):
    return "GPU%s %s" % ("s" if len(indexes) > 1 else "", ", ".join(str(i) for i in indexes))


def state(gpus, apps, pids=None):
    """{state, gpus, detail} of the job's GPUs: those running one of pids (the job's ranks as RAS names
    them), or, where none of pids runs here, every GPU with a compute process.

    state: spin (every one busy and below SPIN_POWER_SHARE of its limit), compute (every one busy, some
    near its limit), idle (one or more not busy), none (no GPU runs the job here), or unknown (a reading
    nvidia-smi did not give)."""
    wanted = set(pids or ()) & set(apps)
    uuids = set()
    for pid in (wanted or apps):
        uuids |= apps[pid]
    mine = sorted((gpu for gpu in gpus if gpu["uuid"] in uuids), key=lambda gpu: gpu["index"])
    indexes = [gpu["index"] for gpu in mine]
    if not mine:
        return {"state": "none", "gpus": [], "detail": "no GPU runs the job's processes"}
    if any(gpu["util"] is None for gpu in mine):
        return {"state": "unknown", "gpus": indexes, "detail": "nvidia-smi gives no utilization for %s"
                % _listed([gpu["index"] for gpu in mine if gpu["util"] is None])}
    resting = [gpu for gpu in mine if gpu["util"] < BUSY_PCT]
    if resting:
        return {"state": "idle", "gpus": indexes, "detail": "%s at %s%% utilization"
                % (_listed([gpu["index"] for gpu in resting]), "%g" % min(gpu["util"] for gpu in resting))}
    if any(not gpu["power"] or not gpu["limit"] for gpu in mine):
        return {"state": "unknown", "gpus": indexes, "detail": "nvidia-smi gives no power reading for %s"
                % _listed(indexes)}
    share = max(gpu["power"] / gpu["limit"] for gpu in mine)
    kind = "spin" if share < SPIN_POWER_SHARE else "compute"
    return {"state": kind, "gpus": indexes, "detail": "%s at %s%% utilization and at most %d%% of the power limit"
            % (_listed(indexes), "%g" % min(gpu["util"] for gpu in mine), round(share * 100))}


def sample(run, nvidia_smi, pids=None):
    """state() from running nvidia-smi (run(argv) -> (rc, out, err)); None when it cannot be read (a lost
    sample: the job watch neither starts nor stops its clock on it)."""
    try:
        rc, out, _err = run([nvidia_smi] + QUERY_GPUS)
        if rc != 0:
            return None
        gpus = parse_gpus(out)
        rc, out, _err = run([nvidia_smi] + QUERY_APPS)
        if rc != 0:
            return None
        found = state(gpus, parse_apps(out), pids)
    except (ValueError, OSError):
        return None
    return None if found["state"] == "unknown" else found
