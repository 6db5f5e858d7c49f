# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What one node holds of a hung or slow NCCL job, read in one pass (the nccl_job_evidence module).

The job's processes are found by their Slurm job id (SLURM_JOB_ID in their environment) and by the
pids NCCL RAS lists for this node. Of an environment only the variables that shape NCCL's behaviour
are kept, and the values of secret-looking ones are masked; of a command line, secret arguments are
masked. Plain Python: it reads /proc under a root that tests point elsewhere.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import xid
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl import nccl_inspector, nccl_ras

# the variables kept of a rank's environment: NCCL's own, its plugins', PyTorch's NCCL and
# distributed settings, the rank's place in the job and where its libraries come from
KEPT_PREFIXES = ("NCCL_", "TORCH_NCCL_", "TORCH_DISTRIBUTED_", "CUDA_", "NVIDIA_", "FI_", "UCX_", "GPUDIRECT_")
KEPT_NAMES = ("SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID",
              "SLURM_JOB_NODELIST", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
              "MASTER_PORT", "LD_LIBRARY_PATH", "LD_PRELOAD")
# PyTorch's flight recorder writes <prefix><rank> when a collective times out (TORCH_NCCL_DUMP_ON_TIMEOUT)
FLIGHT_RECORDER_PREFIX = "/tmp/nccl_trace_rank_"
# the kernel's lines worth keeping for a GPU job: the NVIDIA driver (Xid, SXid, NVLink), the NICs' drivers
KERNEL_PATTERN = re.compile(r"NVRM|Xid|SXid|NVLink|nvlink|nvidia|nvswitch|mlx5|gve|ib_core|PCIe Bus Error|AER",
                            re.IGNORECASE)
# NCCL 2.31+ prints its init-time diagnostics with this prefix, whatever NCCL_DEBUG says
# (NCCL's own prefix before it, host:pid:tid, names where the line came from)
DIAG_PATTERN = re.compile(r"(?:(?P<host>[\w.\-]+):(?P<pid>\d+):\d+\s+)?NCCL DIAG\b[:\s]*(?P<text>.*)")
DIAG_FAIL = re.compile(r"\b(FAIL(ED|URE)?|ERROR|UNREACHABLE|TIMEOUT)\b", re.IGNORECASE)
DIAG_WARN = re.compile(r"\b(WARN(ING)?|SLOW|LOW|BELOW|DEGRADED)\b", re.IGNORECASE)
MAX_ENVIRON = 1024 * 1024


def _read(path, limit=MAX_ENVIRON):
    try:
        with open(path, "rb") as handle:
            return handle.read(limit)
    except (IOError, OSError):
        return None


def environ_of(pid, root="/"):
    """A process's environment as a dict of text, or None where it cannot be read (gone, not ours)."""
    raw = _read("%s/proc/%d/environ" % (root.rstrip("/"), pid))
    if raw is None:
        return None
    out = {}
    for item in raw.split(b"\0"):
        if b"=" in item:
            key, value = item.split(b"=", 1)
            out[key.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
    return out


def _stat(pid, root):
    """(ppid, comm, start in clock ticks after boot) from /proc/<pid>/stat, or None."""
    raw = _read("%s/proc/%d/stat" % (root.rstrip("/"), pid), 4096)
    if not raw:
        return None
    text = raw.decode("utf-8", "replace")
    # comm is in parentheses and may hold spaces and parentheses: the last ')' ends it
    close = text.rfind(")")
    fields = text[close + 2:].split()
    try:
        return int(fields[1]), text[text.find("(") + 1:close], int(fields[19])
    except (IndexError, ValueError):
        return None


def boot_time(root="/"):
    raw = _read("%s/proc/stat" % root.rstrip("/"), 1 << 20) or b""
    for line in raw.decode("ascii", "replace").splitlines():
        if line.startswith("btime "):
            return int(line.split()[1])
    return 0


def job_processes(job=None, pids=(), root="/", ticks=100):
    """The processes of Slurm job `job` (its id in their environment) and those of `pids` that run here,
    each {pid, ppid, comm, cmdline (masked), env (the kept variables, unmasked: mask before writing),
    started (epoch seconds)}, by pid."""
    proc = "%s/proc" % root.rstrip("/")
    wanted = set(p for p in pids if isinstance(p, int) and not isinstance(p, bool) and p > 0)
    candidates = sorted(int(name) for name in os.listdir(proc) if name.isdigit()) if job else sorted(wanted)
    booted = boot_time(root)
    out = []
    for pid in candidates:
        if pid == os.getpid():
            continue
        env = environ_of(pid, root)
        if env is None:
            continue
        if job and env.get("SLURM_JOB_ID") != str(job) and pid not in wanted:
            continue
        stat = _stat(pid, root)
        if stat is None:
            continue
        raw = _read("%s/%d/cmdline" % (proc, pid), 64 * 1024) or b""
        argv = [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]
        out.append({"pid": pid, "ppid": stat[0], "comm": safe_text.one_line(stat[1]),
                    "cmdline": [safe_text.one_line(arg, 512) for arg in safe_text.mask_argv(argv)],
                    "env": kept_env(env), "started": booted + stat[2] // max(ticks, 1)})
    return out


def kept_env(env):
    """The variables of an environment that shape NCCL's behaviour and the rank's place (unmasked)."""
    return dict((key, value) for key, value in (env or {}).items()
                if key in KEPT_NAMES or key.startswith(KEPT_PREFIXES))


def masked_env(env):
    """(the environment with secret values masked, how many were masked)."""
    masked = safe_text.mask_env(env)
    return masked, sum(1 for key in env if masked[key] != env[key])


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def ranks(processes, ras_pids=None):
    """The rank processes among a job's processes, each with its rank and local rank.

    A process is a rank when NCCL RAS lists its pid, or its launcher gave it RANK (torchrun and the
    like); where no process of the job has either, the processes srun started (SLURM_PROCID) that
    started no other process of the job are (srun launching the ranks itself)."""
    ras_pids = ras_pids or {}
    parents = set(p["ppid"] for p in processes)
    found = [p for p in processes if p["pid"] in ras_pids or "RANK" in p["env"]]
    if not found:
        found = [p for p in processes if "SLURM_PROCID" in p["env"] and p["pid"] not in parents]
    out = []
    for proc in found:
        env = proc["env"]
        rank = ras_pids.get(proc["pid"])
        if rank is None:
            rank = _int(env.get("RANK", env.get("SLURM_PROCID")))
        local = _int(env.get("LOCAL_RANK", env.get("SLURM_LOCALID")))
        out.append(dict(proc, rank=rank, local_rank=local))
    return sorted(out, key=lambda p: (p["rank"] is None, p["rank"], p["pid"]))


def flight_recorder_files(env, rank, limit=8):
    """The files PyTorch's flight recorder wrote for a rank: <TORCH_NCCL_DEBUG_INFO_TEMP_FILE><rank>."""
    if rank is None:
        return []
    prefix = env.get("TORCH_NCCL_DEBUG_INFO_TEMP_FILE") or FLIGHT_RECORDER_PREFIX
    directory, stem = os.path.split(prefix + str(rank))
    try:
        names = os.listdir(directory or ".")
    except (IOError, OSError):
        return []
    # <prefix><rank> itself, or with a suffix; never <prefix><rank><digit> (another rank)
    found = [os.path.join(directory, name) for name in names
             if name == stem or (name.startswith(stem) and not name[len(stem)].isdigit())]
    return sorted(path for path in found if os.path.isfile(path))[:limit]


def kernel_lines(text):
    """The lines of a kernel log about the GPUs, NVLink and the NICs."""
    return [line for line in safe_text.to_text(text).splitlines() if KERNEL_PATTERN.search(line)]


def diag_lines(text):
    """The NCCL DIAG lines of some output: {line (after the prefix), host, pid} (host and pid from NCCL's
    own prefix, None without one)."""
    out = []
    for line in safe_text.to_text(text).splitlines():
        match = DIAG_PATTERN.search(line)
        if match:
            out.append({"line": safe_text.one_line(match.group("text").strip(), 400),
                        "host": match.group("host"), "pid": int(match.group("pid")) if match.group("pid") else None})
    return out


def diag_findings(lines, source):
    """A finding per NCCL DIAG line that reports a failure (fail) or a degraded result (warn), about the
    process that printed it where NCCL's prefix says which.

    NCCL's diagnostics test GPU pairs and the network at communicator init; a line that says neither
    is kept in the bundle but judged nothing."""
    out = []
    for item in lines:
        line = item["line"]
        severity = "fail" if DIAG_FAIL.search(line) else ("warn" if DIAG_WARN.search(line) else None)
        if severity:
            subject = "%s (pid %d)" % (item["host"], item["pid"]) if item["host"] else source
            out.append(fd.make("fabric", subject, severity, "NCCL DIAG%s: %s (in %s)" % (
                " on " + subject if item["host"] else "", line, source)))
    return out


def py_spy_stacks(doc):
    """py-spy's JSON dump as [{thread, active, frames: ['function (file:line)', ...]}], innermost first."""
    out = []
    for thread in doc if isinstance(doc, list) else []:
        if not isinstance(thread, dict):
            continue
        frames = []
        for frame in thread.get("frames") or []:
            if isinstance(frame, dict):
                frames.append("%s (%s:%s)" % (safe_text.one_line(frame.get("name", "?"), 200),
                                              safe_text.one_line(frame.get("short_filename")
                                                                 or frame.get("filename", "?"), 200),
                                              frame.get("line", "?")))
        out.append({"thread": safe_text.one_line(thread.get("thread_name") or thread.get("thread_id", "?"), 100),
                    "active": thread.get("active") is True, "frames": frames})
    return out


def stacks_text(rank, pid, stacks):
    lines = ["rank %s, pid %d" % ("?" if rank is None else rank, pid)]
    for thread in stacks:
        lines.append("  thread %s (%s)" % (thread["thread"], "active" if thread["active"] else "idle"))
        lines.extend("    " + frame for frame in thread["frames"])
    return "\n".join(lines) + "\n"


def main_frame(stacks):
    """The innermost frame of a rank's main thread (its first thread where none is so named)."""
    threads = [t for t in stacks if t["thread"] == "MainThread"] or stacks
    for thread in threads:
        if thread["frames"]:
            return thread["frames"][0].split(" (")[0]
    return None


def odd_frames(frames):
    """{rank: frame} of the ranks whose main thread stands in a function most ranks are not in (the
    rank still computing while the others wait in a collective); {} where most agree or none do."""
    known = dict((rank, frame) for rank, frame in frames.items() if frame)
    tally = {}
    for frame in known.values():
        tally[frame] = tally.get(frame, 0) + 1
    if len(tally) < 2:
        return {}
    common, count = max(tally.items(), key=lambda item: item[1])
    if count * 2 <= len(known):
        return {}
    return dict((rank, frame) for rank, frame in known.items() if frame != common)


def scontrol_job(text):
    """The fields of `scontrol show job -o` this reads: JobState, StartTime, NodeList, StdOut, StdErr."""
    out = {}
    for field in safe_text.to_text(text).split():
        key, sep, value = field.partition("=")
        if sep and key in ("JobId", "JobState", "StartTime", "NodeList", "StdOut", "StdErr", "BatchHost"):
            out[key] = value
    return out


class Bundle(object):
    """The node's evidence directory: every file written through it, and every part's outcome.

    A part is ok, or not with the reason it could not be had (a tool missing, a file unreadable): the
    bundle says what it lacks rather than failing the node."""

    def __init__(self, directory, max_bytes, write=True):
        self.directory, self.max_bytes, self.write = directory, max_bytes, write
        self.parts, self.masked = {}, 0

    def _path(self, name):
        return os.path.join(self.directory, name)

    def put(self, part, name, text):
        data = safe_text.to_text(text)
        if len(data) > self.max_bytes:
            data = u"[first %d characters left out]\n" % (len(data) - self.max_bytes) + data[-self.max_bytes:]
        if self.write:
            path = self._path(name)
            if not os.path.isdir(os.path.dirname(path)):
                os.makedirs(os.path.dirname(path), 0o700)
            with open(path, "wb") as handle:
                handle.write(data.encode("utf-8"))
        entry = self.parts.setdefault(part, {"ok": True, "files": [], "reasons": []})
        entry["files"].append(name)

    def copy(self, part, name, source):
        """A file as it is (binary: a flight-recorder dump), up to max_bytes."""
        try:
            size = os.path.getsize(source)
            if size > self.max_bytes:
                self.lack(part, "%s is %d bytes, above the limit of %d: left out" % (source, size, self.max_bytes))
                return
            if self.write:
                with open(source, "rb") as handle:
                    data = handle.read()
                path = self._path(name)
                if not os.path.isdir(os.path.dirname(path)):
                    os.makedirs(os.path.dirname(path), 0o700)
                with open(path, "wb") as handle:
                    handle.write(data)
        except (IOError, OSError) as exc:
            self.lack(part, "cannot read %s: %s" % (source, exc))
            return
        self.parts.setdefault(part, {"ok": True, "files": [], "reasons": []})["files"].append(name)

    def lack(self, part, reason):
        entry = self.parts.setdefault(part, {"ok": True, "files": [], "reasons": []})
        entry["ok"] = False
        entry["reasons"].append(safe_text.one_line(reason, 300))


def _ras_rank_pids(comms, node, names):
    """{pid: rank} of the ranks RAS places on this node (by address, or by the name it maps to)."""
    out = {}
    for comm in comms:
        for rank in comm["ranks"] + comm["missing"]:
            if rank["host"] == node or (names or {}).get(rank["host"]) == node:
                out[rank["pid"]] = rank["rank"]
    return out


def read_ras(params, ask, clock, sleep, bundle):
    """RAS's view of the job over watch_s: (summary dict, comms of the last read, verdicts)."""
    watch = nccl_ras.HangWatch(threshold_s=max(params["watch_s"], 0.001), names=params["names"])
    # the watch counts from the first status read: a hang is ranks unmoved for all of watch_s
    started, first, reads, comms, verdicts, version, docs = clock(), None, 0, [], [], None, []
    while True:
        try:
            doc = ask(host=params["host"], port=params["port"], timeout=params["timeout_s"])
            comms = nccl_ras.snapshot(doc)
        except (nccl_ras.RasError, ValueError) as exc:
            if reads == 0:
                bundle.lack("ras", str(exc))
                return {"state": "none", "reason": safe_text.one_line(exc, 300), "reads": 0}, [], []
            break
        reads += 1
        docs.append(doc)
        version = safe_text.one_line(doc.get("nccl_version", ""), 100) or None
        now = clock()
        first = now if first is None else first
        found = watch.observe(now, comms)
        verdicts = nccl_ras.merge(verdicts, found)
        if now - first >= params["watch_s"] or any(v["kind"] == "hang" for v in found):
            break
        sleep(max(0.0, min(params["interval_s"], params["watch_s"] - (now - first))))
    bundle.put("ras", "ras/status-first.json", json.dumps(docs[0], indent=1, sort_keys=True) + "\n")
    if len(docs) > 1:
        bundle.put("ras", "ras/status-last.json", json.dumps(docs[-1], indent=1, sort_keys=True) + "\n")
    kinds = set(v["kind"] for v in verdicts)
    odd = []
    for comm in comms:
        strays = nccl_ras.odd_ranks(comm["ranks"])
        others = [rank for rank in comm["ranks"] if rank not in strays]
        for rank in strays:
            odd.append({"comm": comm["hash"], "rank": rank["rank"], "host": rank["host"],
                        "node": (params["names"] or {}).get(rank["host"], rank["host"]), "counts": rank["counts"],
                        "behind": nccl_ras.behind(rank, others)})
    return ({"state": "hang" if "hang" in kinds else ("faulty" if kinds else "ok"), "reads": reads,
             "nccl_version": version, "communicators": nccl_ras.summary(comms), "odd_ranks": odd,
             "watched_s": round(clock() - started, 1)}, comms, verdicts)


def collect(params, run, bundle, ask, clock, sleep, root="/", wall=time.time):
    """Everything one node holds of the job, into bundle; the module's result (no archive)."""
    node, job = params["node"], params["job"] or None
    ras, comms, verdicts = read_ras(params, ask, clock, sleep, bundle)
    ras_pids = _ras_rank_pids(comms, node, params["names"])
    if job is None:
        job = nccl_ras.slurm_job_of(sorted(ras_pids), root=root)
    findings = [v["finding"] for v in verdicts]
    slurm = {}
    if job and params["scontrol"]:
        rc, out, err = run([params["scontrol"], "show", "job", "-o", str(job)])
        if rc == 0:
            slurm = scontrol_job(out)
            bundle.put("slurm", "slurm/job.txt", safe_text.mask_text(out))
        else:
            bundle.lack("slurm", "scontrol show job %s: %s" % (job, safe_text.one_line(err or out, 200)))
    procs = job_processes(job=job, pids=sorted(ras_pids), root=root) if (job or ras_pids) else []
    if not procs and ras["state"] == "none":
        # nothing of the job here: the node's own state is not the job's evidence
        return {"node": node, "job": job, "slurm": {}, "since": None, "ras": ras, "verdicts": [], "ranks": [],
                "processes": 0, "xids": [], "diag": [], "findings": [], "inspector": None, "masked": 0,
                "parts": bundle.parts}
    rank_procs = ranks(procs, ras_pids)
    since = params["since"] or (min(p["started"] for p in procs) - 60 if procs else int(wall()) - 3600)
    bundle.put("processes", "processes.json", json.dumps(
        [dict((k, p[k]) for k in ("pid", "ppid", "comm", "cmdline", "started")) for p in procs],
        indent=1) + "\n")
    out_ranks = []
    for proc in rank_procs:
        label = "rank-%s" % ("unknown-%d" % proc["pid"] if proc["rank"] is None else proc["rank"])
        env, masked = masked_env(proc["env"])
        bundle.masked += masked
        bundle.put("nccl_env", "env/%s.env" % label,
                   "".join("%s=%s\n" % (key, safe_text.one_line(env[key])) for key in sorted(env)))
        frame = None
        if params["py_spy"]:
            argv = ([params["timeout_cmd"], str(int(params["py_spy_timeout_s"]))] if params["timeout_cmd"] else [])
            rc, out, err = run(argv + [params["py_spy"], "dump", "--json", "--pid", str(proc["pid"])])
            stacks = None
            if rc == 0:
                try:
                    stacks = py_spy_stacks(json.loads(out))
                except ValueError:
                    stacks = None
            if stacks is not None:
                frame = main_frame(stacks)
                bundle.put("stacks", "stacks/%s.txt" % label, stacks_text(proc["rank"], proc["pid"], stacks))
            else:
                bundle.lack("stacks", "py-spy could not dump pid %d: %s" % (
                    proc["pid"], safe_text.one_line(err or out or "rc %d" % rc, 200)))
        kernel_stack = _read("%s/proc/%d/stack" % (root.rstrip("/"), proc["pid"]), 64 * 1024)
        if kernel_stack:
            bundle.put("stacks", "stacks/%s.kernel.txt" % label, kernel_stack.decode("utf-8", "replace"))
        files = flight_recorder_files(proc["env"], proc["rank"])
        for path in files:
            bundle.copy("flight_recorder", "flight_recorder/%s" % os.path.basename(path), path)
        out_ranks.append({"rank": proc["rank"], "local_rank": proc["local_rank"], "pid": proc["pid"],
                          "frame": frame, "flight_recorder": len(files)})
    if not params["py_spy"]:
        bundle.lack("stacks", "py-spy not found on the node: only kernel stacks kept (pip install py-spy, "
                              "or name it with py_spy)")
    if rank_procs and not any(r["flight_recorder"] for r in out_ranks):
        bundle.lack("flight_recorder", "no rank wrote a flight-recorder file (PyTorch writes one on a collective "
                                       "timeout with TORCH_NCCL_DUMP_ON_TIMEOUT=1)")
    _command_part(bundle, run, "gpus", "nvidia-smi-q.xml", params["nvidia_smi"] and [params["nvidia_smi"], "-q", "-x"],
                  "nvidia-smi not found on the node")
    xids, diag = [], []
    if params["journalctl"]:
        rc, out, err = run([params["journalctl"], "-k", "--since", "@%d" % since, "--no-pager", "-o", "short-iso"])
        if rc == 0:
            lines = kernel_lines(out)
            bundle.put("kernel", "kernel.log", "\n".join(lines) + "\n")
            xids = xid.events("\n".join(lines))
        else:
            bundle.lack("kernel", "journalctl -k: %s" % safe_text.one_line(err or out, 200))
        for unit in params["units"]:
            rc, out, err = run([params["journalctl"], "-u", unit, "--since", "@%d" % since, "--no-pager",
                                "-o", "short-iso", "-n", "5000"])
            if rc == 0:
                bundle.put("logs", "logs/%s.log" % unit, safe_text.mask_text(out))
                lines = diag_lines(out)
                diag.extend(dict(item, source=unit) for item in lines)
                findings.extend(diag_findings(lines, unit))
            else:
                bundle.lack("logs", "journalctl -u %s: %s" % (unit, safe_text.one_line(err or out, 200)))
    else:
        bundle.lack("kernel", "journalctl not found on the node")
    outputs = list(params["output_files"]) + [slurm[key] for key in ("StdOut", "StdErr")
                                              if slurm.get(key) and slurm.get(key) not in params["output_files"]]
    for path in outputs:
        if not os.path.exists(path):
            continue  # a job's output is on the node that wrote it, not on every node
        text = _tail(path, bundle.max_bytes)
        if text is None:
            bundle.lack("job_output", "cannot read %s" % path)
            continue
        bundle.put("job_output", "job_output/%s" % os.path.basename(path), safe_text.mask_text(text))
        lines = diag_lines(text)
        diag.extend(dict(item, source=path) for item in lines)
        findings.extend(diag_findings(lines, path))
    bandwidth = None
    if params["inspector_dir"]:
        read = nccl_inspector.read_dir(params["inspector_dir"], params["inspector_stale_s"])
        bandwidth = read["bandwidth"]
        bundle.put("inspector", "inspector/bandwidth.json", json.dumps(read, indent=1, sort_keys=True) + "\n")
    result = {"node": node, "job": job, "slurm": dict((k, v) for k, v in slurm.items() if k != "StdErr"),
              "since": since, "ras": ras,
              "verdicts": [dict((k, v[k]) for k in ("kind", "comm", "ranks", "hosts")) for v in verdicts],
              "ranks": out_ranks, "processes": len(procs), "xids": xids, "diag": diag, "findings": findings,
              "inspector": bandwidth, "masked": bundle.masked, "parts": bundle.parts}
    bundle.put("manifest", "manifest.json", json.dumps(result, indent=1, sort_keys=True) + "\n")
    return result


def _tail(path, limit):
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            return handle.read().decode("utf-8", "replace")
    except (IOError, OSError):
        return None


def _command_part(bundle, run, part, name, argv, missing):
    if not argv:
        bundle.lack(part, missing)
        return
    rc, out, err = run(argv)
    if rc == 0:
        bundle.put(part, name, out)
    else:
        bundle.lack(part, "%s: %s" % (" ".join(argv), safe_text.one_line(err or out or "rc %d" % rc, 200)))
