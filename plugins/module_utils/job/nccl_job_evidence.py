# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What one node holds of a hung or slow NCCL job, read in one pass (the nccl_job_evidence module).

The job's processes are those whose own record says so: SLURM_JOB_ID in their environment, no other
job's cgroup, and the job's user (from scontrol) as owner. A pid NCCL RAS names is only a rank where
it passes the same check: RAS's answers come from a socket the job itself can answer on. The pids
looked at are those Slurm gives (scontrol listpids, else the job's cgroup) and RAS's; every process of
the node only where Slurm names none.

Everything the job names (a flight-recorder prefix, its output files) is read without following a
symlink the job could have made, only as a regular file of the job's user, opened so that a FIFO or a
device never blocks, and at most a bounded number of bytes a file and a bundle. A read of /proc that
can block (a process stuck in the kernel), of a file the job names (a shared file system that stopped
answering) and every command have a deadline, and the whole collection one more. Of an environment only
the variables that shape NCCL's behaviour are kept, and the values of secret-looking ones are masked; of a
command line, secret arguments are masked. Plain Python: it reads /proc under a root that tests point
elsewhere.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import json
import os
import re
import stat
import tarfile
import threading
import time
from io import BytesIO

try:
    import queue
except ImportError:  # Python 2
    import Queue as queue  # pylint: disable=import-error

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.common.files import read_at_most
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import xid
from ansible_collections.gpudirect.gcp.plugins.module_utils.job import job_watch, nccl_inspector, nccl_ras

# the variables kept of a rank's environment: NCCL's own, its plugins', PyTorch's NCCL and
# distributed settings, the rank's place in the job and where its libraries come from
KEPT_PREFIXES = ("NCCL_", "TORCH_NCCL_", "TORCH_DISTRIBUTED_", "CUDA_", "NVIDIA_", "FI_", "UCX_", "GPUDIRECT_")
KEPT_NAMES = ("SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID",
              "SLURM_JOB_NODELIST", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
              "MASTER_PORT", "LD_LIBRARY_PATH", "LD_PRELOAD")
# PyTorch's flight recorder writes <prefix><rank> when a collective times out (TORCH_NCCL_DUMP_ON_TIMEOUT);
# the prefix is the first of these variables set (the newer name first)
FLIGHT_RECORDER_PREFIX = "/tmp/nccl_trace_rank_"
FLIGHT_RECORDER_VARIABLES = ("TORCH_FR_DUMP_TEMP_FILE", "TORCH_NCCL_DEBUG_INFO_TEMP_FILE")
# the kernel's lines worth keeping for a GPU job: the NVIDIA driver (Xid, SXid, NVLink), the NICs' drivers
KERNEL_PATTERN = re.compile(r"NVRM|Xid|SXid|NVLink|nvlink|nvidia|nvswitch|mlx5|gve|ib_core|PCIe Bus Error|AER",
                            re.IGNORECASE)
# NCCL 2.31+ prints its init-time diagnostics with this prefix, whatever NCCL_DEBUG says
# (NCCL's own prefix before it, host:pid:tid, names where the line came from)
DIAG_PATTERN = re.compile(r"(?:(?P<host>[\w.\-]+):(?P<pid>\d+):\d+\s+)?NCCL DIAG\b[:\s]*(?P<text>.*)")
DIAG_FAIL = re.compile(r"\b(FAIL(ED|URE)?|ERROR|UNREACHABLE|TIMEOUT)\b", re.IGNORECASE)
DIAG_WARN = re.compile(r"\b(WARN(ING)?|SLOW|LOW|BELOW|DEGRADED)\b", re.IGNORECASE)
MAX_ENVIRON = 1024 * 1024
MAX_TOTAL_BYTES = 256 * 1024 * 1024
PROC_TIMEOUT_S = 5.0
# a command (scontrol, nvidia-smi, journalctl) or a read of a file the job names
COMMAND_TIMEOUT_S = 60.0
# Slurm's cgroup of a job's process, v1 (/slurm/uid_N/job_N/...) or v2 (.../job_N/step_N/...)
CGROUP_JOB = re.compile(r"/job_(\d+)(?:/|$)", re.MULTILINE)
# where Slurm's cgroup plugins put a job (v2; v1 under each controller, then slurm/uid_<uid>)
CGROUP_V2_JOBS = "sys/fs/cgroup/system.slice/slurmstepd.scope"
CGROUP_ROOT = "sys/fs/cgroup"
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# a FIFO opened for reading with O_NONBLOCK never waits for a writer; a symlink as the last component fails
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_NOCTTY", 0) | _CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
MAX_LINKS = 40


class Refused(Exception):
    """A path or a destination the collector will not use, with the reason in one line."""


class Missing(Refused):
    """A path that is not there (a job's output lives on the node that wrote it)."""


def _read(path, limit=MAX_ENVIRON):
    """Up to limit bytes of a file of /proc, or None (gone, not ours, not a regular file)."""
    try:
        descriptor = os.open(path, _READ_FLAGS)
    except (IOError, OSError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        return read_at_most(descriptor, limit)
    except (IOError, OSError):
        return None
    finally:
        os.close(descriptor)


def _direct(function, *args):
    """function(*args), where a caller may give a Deadline's call instead."""
    return function(*args)


class Deadline(object):
    """Calls run on a worker thread, and a call that outlasts its seconds is given up on with Expired
    (reading /proc of a process stuck in the kernel can block for good): the stuck worker is left
    behind to stop should it ever come back, and a new one takes the next call."""

    class Expired(Exception):
        pass

    def __init__(self, seconds):
        self.seconds, self._tasks = seconds, None

    @staticmethod
    def _work(tasks):
        while True:
            task = tasks.get()
            if task is None:
                return
            function, args, box, done = task
            try:
                box["value"] = function(*args)
            except Exception as exc:  # pylint: disable=broad-except
                box["error"] = exc
            done.set()

    def call(self, function, *args):
        if self._tasks is None:
            self._tasks = queue.Queue()
            worker = threading.Thread(target=self._work, args=(self._tasks,))
            worker.daemon = True
            worker.start()
        box, done = {}, threading.Event()
        self._tasks.put((function, args, box, done))
        if not done.wait(self.seconds):
            self.close()
            raise Deadline.Expired("took over %gs" % self.seconds)
        if "error" in box:
            raise box["error"]
        return box.get("value")

    def close(self):
        if self._tasks is not None:
            self._tasks.put(None)
            self._tasks = None


def open_dir(path):
    """A descriptor of directory path, reached one component at a time without following any symlink
    but the system's own (root's, in a directory only root may change: /home to /mnt/home); Refused
    says why not (a symlink of anyone else, '..', a relative path)."""
    if not path or not os.path.isabs(path) or "\0" in path:
        raise Refused("%s is not an absolute path" % safe_text.one_line(path, 200))
    if ".." in path.split("/"):
        raise Refused("%s climbs out with '..'" % safe_text.one_line(path, 200))
    parts = [part for part in path.split("/") if part not in ("", ".")]
    descriptor, links = os.open("/", _DIR_FLAGS), 0
    try:
        while parts:
            name = parts.pop(0)
            try:
                following = os.open(name, _DIR_FLAGS, dir_fd=descriptor)
            except OSError as exc:
                if exc.errno == errno.ENOENT:
                    raise Missing("%s does not exist" % safe_text.one_line(path, 200))
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise Refused("%s: %s" % (safe_text.one_line(path, 200), exc.strerror))
                info = os.stat(name, dir_fd=descriptor, follow_symlinks=False)
                if not stat.S_ISLNK(info.st_mode):
                    raise Refused("%s: %s is not a directory" % (safe_text.one_line(path, 200),
                                                                 safe_text.one_line(name, 100)))
                parent = os.fstat(descriptor)
                links += 1
                if info.st_uid != 0 or parent.st_uid != 0 or parent.st_mode & 0o022 or links > MAX_LINKS:
                    raise Refused("%s: %s is a symlink (not the system's own): not followed"
                                  % (safe_text.one_line(path, 200), safe_text.one_line(name, 100)))
                target = os.readlink(name, dir_fd=descriptor)
                if target.startswith("/"):
                    os.close(descriptor)
                    descriptor = os.open("/", _DIR_FLAGS)
                parts = [part for part in target.split("/") if part not in ("", ".")] + parts
                continue
            os.close(descriptor)
            descriptor = following
        return descriptor
    except BaseException:
        os.close(descriptor)
        raise


def _regular(info, where, owner):
    if stat.S_ISLNK(info.st_mode):
        raise Refused("%s is a symlink: not followed" % where)
    if not stat.S_ISREG(info.st_mode):
        raise Refused("%s is not a regular file: left out" % where)
    if owner is not None and info.st_uid != owner:
        raise Refused("%s belongs to uid %d, not to the job's user (uid %d): left out" % (where, info.st_uid, owner))


def open_in(directory, name, where, owner=None):
    """(descriptor, stat) of the regular file name in the directory descriptor, opened without following a
    symlink or blocking on a FIFO, and only where owner (a uid, None for any) owns it; Refused says why not."""
    try:
        before = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise Missing("%s does not exist" % where)
        raise Refused("cannot read %s: %s" % (where, exc.strerror))
    # judged before it is opened: opening a device can do something of its own
    _regular(before, where, owner)
    try:
        descriptor = os.open(name, _READ_FLAGS, dir_fd=directory)
    except OSError as exc:
        raise Refused("cannot read %s: %s" % (where, exc.strerror))
    info = os.fstat(descriptor)
    if (info.st_dev, info.st_ino) != (before.st_dev, before.st_ino):
        os.close(descriptor)
        raise Refused("%s changed while it was opened: left out" % where)
    try:
        _regular(info, where, owner)
    except Refused:
        os.close(descriptor)
        raise
    return descriptor, info


def read_file(path, limit, owner=None, tail=False):
    """(the first or, with tail, the last limit bytes of path, its size), read as open_dir and open_in
    allow; Refused (Missing where it is not there) says why not."""
    where = safe_text.one_line(path, 300)
    directory, name = os.path.split(path or "")
    if not name or name in (".", ".."):
        raise Refused("%s names no file" % where)
    parent = open_dir(directory)
    try:
        descriptor, info = open_in(parent, name, where, owner)
    finally:
        os.close(parent)
    try:
        if tail and info.st_size > limit:
            os.lseek(descriptor, info.st_size - limit, os.SEEK_SET)
        return read_at_most(descriptor, limit), info.st_size
    except OSError as exc:
        raise Refused("cannot read %s: %s" % (where, exc.strerror))
    finally:
        os.close(descriptor)


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


def owner_of(pid, root="/"):
    """The uid a process runs as (the owner of its /proc directory), or None where it is gone."""
    try:
        return os.stat("%s/proc/%d" % (root.rstrip("/"), pid)).st_uid
    except (IOError, OSError):
        return None


def cgroup_job(pid, root="/"):
    """The Slurm job id in a process's cgroup (Slurm's cgroup plugins), or None where it names none."""
    raw = _read("%s/proc/%d/cgroup" % (root.rstrip("/"), pid), 64 * 1024) or b""
    found = CGROUP_JOB.search(raw.decode("utf-8", "replace"))
    return found.group(1) if found else None


def cgroup_pids(job, root="/"):
    """The pids in the job's cgroups (Slurm's cgroup plugins, v2 or v1), [] where there are none."""
    base = os.path.join(root, CGROUP_ROOT)
    tops = [os.path.join(root, CGROUP_V2_JOBS, "job_%s" % job)]
    try:
        for controller in os.listdir(base):
            slurm = os.path.join(base, controller, "slurm")
            if os.path.isdir(slurm):
                tops += [os.path.join(slurm, user, "job_%s" % job) for user in os.listdir(slurm)
                         if user.startswith("uid_")]
    except OSError:
        pass
    pids = set()
    for top in tops:
        for directory, _dirs, files in os.walk(top):
            if "cgroup.procs" in files:
                raw = _read(os.path.join(directory, "cgroup.procs"), 1 << 20) or b""
                pids.update(int(item) for item in raw.split() if item.isdigit())
    return sorted(pids)


def slurm_pids(job, run, scontrol, root="/", notes=None):
    """The pids Slurm places in job on this node: `scontrol listpids` (slurmd asks the job's steps), else the
    job's cgroups; None where neither names one (no Slurm here: every process is to be looked at)."""
    notes = notes if notes is not None else []
    if scontrol:
        rc, out, err = run([scontrol, "listpids", str(job)])
        if rc == 0:
            pids = set()
            for line in safe_text.to_text(out).splitlines():
                fields = line.split()
                if fields and fields[0].isdigit():
                    pids.add(int(fields[0]))
            if pids:
                return sorted(pids)
        else:
            notes.append("scontrol listpids %s: %s" % (job, safe_text.one_line(err or out or "rc %d" % rc, 200)))
    return cgroup_pids(job, root) or None


def not_of_job(env, job, cgroup):
    """Why a process of this environment and cgroup job is not of job, or None where it is."""
    if env.get("SLURM_JOB_ID") != str(job):
        given = safe_text.one_line(env["SLURM_JOB_ID"], 40) if "SLURM_JOB_ID" in env else "not set"
        return "its SLURM_JOB_ID is %s" % given
    if cgroup is not None and str(job).isdigit() and cgroup != str(job):
        return "its cgroup is job %s's" % cgroup
    return None


def _process(pid, job, root, booted, ticks):
    """(the process as job_processes gives it, or None with why it is not of the job)."""
    env = environ_of(pid, root)
    if env is None:
        return None, "gone or unreadable"
    why = not_of_job(env, job, cgroup_job(pid, root))
    if why:
        return None, why
    info = _stat(pid, root)
    if info is None:
        return None, "gone or unreadable"
    raw = _read("%s/proc/%d/cmdline" % (root.rstrip("/"), pid), 64 * 1024) or b""
    argv = [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]
    return {"pid": pid, "ppid": info[0], "comm": safe_text.one_line(info[1]),
            "cmdline": [safe_text.one_line(arg, 512) for arg in safe_text.mask_argv(argv)],
            "env": kept_env(env), "started": booted + info[2] // max(ticks, 1)}, None


def job_processes(job=None, pids=(), root="/", ticks=100, uid=None, timeout_s=PROC_TIMEOUT_S, notes=None,
                  among=None, expired=None):
    """The processes of Slurm job `job` that run here, each {pid, ppid, comm, cmdline (masked), env (the
    kept variables, unmasked: mask before writing), started (epoch seconds), uid}, by pid.

    A process is the job's where its environment holds SLURM_JOB_ID=job, its cgroup (where Slurm made
    one) is the job's, and, with uid (the job's user, from scontrol), it runs as that user. pids (those
    NCCL RAS names) are never taken on their word: one that fails the check is left out and noted.
    A process whose reads outlast timeout_s (stuck in the kernel) is skipped and noted. notes (a list)
    gets a line for each. among (the pids Slurm gives) and pids are those looked at; None looks at every
    process of the node. expired() true stops the look (the collection's deadline)."""
    notes = notes if notes is not None else []
    wanted = set(p for p in pids if isinstance(p, int) and not isinstance(p, bool) and p > 0)
    if not job:
        if wanted:
            notes.append("no job is known: the %d pid(s) NCCL RAS names were not gathered" % len(wanted))
        return []
    proc = "%s/proc" % root.rstrip("/")
    try:
        candidates = sorted(set(among) | wanted if among is not None
                            else set(int(name) for name in os.listdir(proc) if name.isdigit()))
    except (IOError, OSError) as exc:
        notes.append("cannot list %s: %s" % (proc, exc.strerror))
        return []
    booted = boot_time(root)
    deadline = Deadline(timeout_s)
    out = []
    try:
        for index, pid in enumerate(candidates):
            if expired is not None and expired():
                notes.append("the look for the job's processes stopped at the collection's deadline: %d pid(s) "
                             "not read" % (len(candidates) - index))
                break
            if pid == os.getpid():
                continue
            owner = owner_of(pid, root)
            if owner is None:
                continue
            if uid is not None and owner != uid:
                # another user's process: not read at all
                if pid in wanted:
                    notes.append("pid %d that NCCL RAS names runs as uid %d, not as the job's user (uid %d): "
                                 "ignored" % (pid, owner, uid))
                continue
            try:
                found, why = deadline.call(_process, pid, job, root, booted, ticks)
            except Deadline.Expired as exc:
                notes.append("pid %d: reading its /proc %s (stuck in the kernel?): skipped" % (pid, exc))
                continue
            except Exception as exc:  # pylint: disable=broad-except
                notes.append("pid %d: %s" % (pid, safe_text.one_line(exc, 200)))
                continue
            if found is None:
                if pid in wanted:
                    notes.append("pid %d that NCCL RAS names is not of job %s (%s): ignored" % (pid, job, why))
                continue
            found["uid"] = owner
            out.append(found)
    finally:
        deadline.close()
    return out


def job_of_pids(pids, root="/", timeout_s=PROC_TIMEOUT_S, notes=None):
    """The Slurm job of the pids NCCL RAS names here (SLURM_JOB_ID in their environment), or None where
    they name none, or several (RAS's answer is not to be trusted for one)."""
    notes = notes if notes is not None else []
    deadline, jobs = Deadline(timeout_s), set()
    try:
        for pid in pids:
            if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
                continue
            try:
                env = deadline.call(environ_of, pid, root) or {}
            except Deadline.Expired as exc:
                notes.append("pid %d: reading its environment %s: skipped" % (pid, exc))
                continue
            value = env.get("SLURM_JOB_ID", "")
            if value.replace("_", "").isdigit():
                jobs.add(value)
    finally:
        deadline.close()
    if len(jobs) > 1:
        notes.append("the pids NCCL RAS names here are of several jobs (%s): name the job" % ", ".join(sorted(jobs)))
        return None
    return jobs.pop() if jobs else None


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


def flight_recorder_files(env, rank, limit=8, owner=None):
    """(the files PyTorch's flight recorder wrote for a rank, the reasons some were not taken).

    The prefix (TORCH_FR_DUMP_TEMP_FILE or TORCH_NCCL_DEBUG_INFO_TEMP_FILE) is the job's to choose, so it
    names no more than it says: <prefix><rank> itself or with a suffix, in the prefix's own directory
    (absolute, no '..', reached through no symlink of anyone but the system), regular files owned by
    owner (the rank's uid), never <prefix><rank><digit> (another rank)."""
    if rank is None:
        return [], []
    variable = next((name for name in FLIGHT_RECORDER_VARIABLES if env.get(name)), None)
    prefix = env[variable] if variable else FLIGHT_RECORDER_PREFIX
    directory, stem = os.path.split(prefix + str(rank))
    try:
        descriptor = open_dir(directory)
    except Missing:
        return [], []
    except Refused as exc:
        return [], ["%s=%s: %s" % (variable or "the default prefix", safe_text.one_line(prefix, 200), exc)]
    found, reasons = [], []
    try:
        for name in sorted(os.listdir(descriptor)):
            if not (name == stem or (name.startswith(stem) and not name[len(stem)].isdigit())):
                continue
            where = safe_text.one_line(os.path.join(directory, name), 300)
            try:
                _regular(os.stat(name, dir_fd=descriptor, follow_symlinks=False), where, owner)
            except Refused as exc:
                reasons.append(str(exc))
                continue
            except OSError:
                continue
            found.append(os.path.join(directory, name))
    except OSError as exc:
        reasons.append("cannot list %s: %s" % (safe_text.one_line(directory, 200), exc.strerror))
    finally:
        os.close(descriptor)
    return found[:limit], reasons


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


# what a rank's main thread stands in while it waits for a collective: torch.distributed's calls and the
# work handle's wait, NCCL's entry points (a data loader's __next__ or a checkpoint's write is no collective)
COLLECTIVE_FRAME = re.compile(r"all_?reduce|all_?gather|reduce_?scatter|broadcast|barrier|all_?to_?all|"
                              r"^send$|^recv$|^wait$|^nccl\w+", re.IGNORECASE)


def stuck_frame(frames, min_ranks=2):
    """The collective every rank's main thread stands in (the hang where all wait in one collective, which
    RAS's agreeing counts do not show), or None: ranks in different frames, or in one that is no collective."""
    known = [frame for frame in frames.values() if frame]
    if len(known) < min_ranks or len(set(known)) != 1:
        return None
    return known[0] if COLLECTIVE_FRAME.search(known[0]) else None


def scontrol_job(text):
    """The fields of `scontrol show job -o` this reads: JobState, StartTime, NodeList, StdOut, StdErr,
    BatchHost, UserId."""
    out = {}
    for field in safe_text.to_text(text).split():
        key, sep, value = field.partition("=")
        if sep and key in ("JobId", "JobState", "StartTime", "NodeList", "StdOut", "StdErr", "BatchHost",
                           "UserId"):
            out[key] = value
    return out


def job_uid(slurm):
    """The uid of the job's user from scontrol's UserId=name(uid), or None."""
    found = re.search(r"\((\d+)\)$", slurm.get("UserId", ""))
    return int(found.group(1)) if found else None


class Bundle(object):
    """The node's evidence: every file stored through it, and every part's outcome.

    A part is ok, or not with the reason it could not be had (a tool missing, a file unreadable): the
    bundle says what it lacks rather than failing the node. No file keeps over max_bytes, and all of
    them together over max_total_bytes (the manifest aside). Files go to sink(name, bytes) (an
    Archive's add), or, without one, under directory; write=False stores nothing (check mode)."""

    def __init__(self, directory, max_bytes, write=True, max_total_bytes=None, sink=None):
        self.directory, self.max_bytes, self.write = directory, max_bytes, write
        self.max_total = MAX_TOTAL_BYTES if max_total_bytes is None else max_total_bytes
        self.left = self.max_total
        self.sink = sink if sink is not None else (_directory_sink(directory) if write and directory else None)
        self.parts, self.masked, self.names = {}, 0, set()

    def _entry(self, part):
        return self.parts.setdefault(part, {"ok": True, "files": [], "reasons": []})

    def _name(self, name):
        """name, or name-2, -3... where two sources share one (two output files of one name)."""
        base, ext = os.path.splitext(name)
        unique, n = name, 1
        while unique in self.names:
            n += 1
            unique = "%s-%d%s" % (base, n, ext)
        self.names.add(unique)
        return unique

    def room(self):
        """How many bytes the bundle may still take."""
        return max(self.left, 0)

    def _store(self, part, name, data, counted=True):
        name = self._name(name)
        if self.write and self.sink is not None:
            self.sink(name, data)
        if counted:
            self.left -= len(data)
        self._entry(part)["files"].append(name)

    def put(self, part, name, text, counted=True):
        data = safe_text.to_text(text)
        if len(data) > self.max_bytes:
            data = u"[first %d characters left out]\n" % (len(data) - self.max_bytes) + data[-self.max_bytes:]
        raw = data.encode("utf-8")
        if counted and len(raw) > self.room():
            cut = u"[cut to the bundle's total limit of %d bytes]\n" % self.max_total
            room = self.room() - len(cut.encode("utf-8"))
            if room <= 0:
                self.lack(part, "%s left out: the bundle reached its total limit of %d bytes" % (name, self.max_total))
                return
            self.lack(part, "%s cut: the bundle reached its total limit of %d bytes" % (name, self.max_total))
            raw = cut.encode("utf-8") + raw[-room:]
        try:
            self._store(part, name, raw, counted)
        except (IOError, OSError) as exc:
            self.lack(part, "cannot store %s: %s" % (name, exc.strerror or exc))

    def copy(self, part, name, source, owner=None, within=_direct):
        """A file as it is (binary: a flight-recorder dump), up to max_bytes, read as read_file allows
        (within(function, *args) bounds the read)."""
        limit = min(self.max_bytes, self.room())
        try:
            data, size = within(read_file, source, limit + 1, owner)
        except Refused as exc:
            self.lack(part, str(exc))
            return
        except Deadline.Expired as exc:
            self.lack(part, "%s: reading it %s: skipped" % (safe_text.one_line(source, 300), exc))
            return
        if size > self.max_bytes or len(data) > self.max_bytes:
            self.lack(part, "%s is %d bytes, above the limit of %d: left out" % (source, size, self.max_bytes))
            return
        if len(data) > limit:
            self.lack(part, "%s left out: the bundle reached its total limit of %d bytes" % (source, self.max_total))
            return
        try:
            self._store(part, name, data)
        except (IOError, OSError) as exc:
            self.lack(part, "cannot store %s: %s" % (name, exc.strerror or exc))

    def lack(self, part, reason):
        entry = self._entry(part)
        entry["ok"] = False
        entry["reasons"].append(safe_text.one_line(reason, 300))


def _directory_sink(directory):
    """Files under a directory this makes (mode 0700), each made new: nothing there is followed or reused."""
    def store(name, data):
        path = os.path.join(directory, name)
        parent = os.path.dirname(path)
        if not os.path.isdir(parent):
            os.makedirs(parent, 0o700)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
    return store


class Archive(object):
    """The evidence as <dest>/<name>.tar.gz, written so that nothing at dest can redirect or replace it.

    dest is reached without following a symlink but the system's own and must be this user's or root's,
    writable by no one else unless sticky (/tmp). The archive is written to a new file (O_EXCL, mode
    0600) of a name no one can guess, synced, and renamed over name only where no entry of that name is
    there, or one that is this user's own regular file. Refused says why not, in one line."""

    def __init__(self, dest, name, make=True):
        self.dest, self.name, self.final = dest, name, name + ".tar.gz"
        if make and not os.path.lexists(dest):
            try:
                os.makedirs(dest, 0o700)
            except OSError as exc:
                raise Refused("cannot make it: %s" % (exc.strerror or exc))
        self.dir = open_dir(dest)
        try:
            info = os.fstat(self.dir)
            if info.st_uid not in (os.geteuid(), 0):
                raise Refused("it belongs to uid %d, not to this user or root" % info.st_uid)
            if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
                raise Refused("others may write in it (mode %o) and it is not sticky" % (info.st_mode & 0o7777))
            self.temp, self.handle = self._create(), None
        except BaseException:
            os.close(self.dir)
            raise
        self.handle = os.fdopen(self.descriptor, "wb")
        self.tar = tarfile.open(fileobj=self.handle, mode="w:gz")

    def _create(self):
        for _attempt in range(20):
            temp = ".%s.%s.tmp" % (self.name, os.urandom(8).hex() if hasattr(bytes, "hex") else os.getpid())
            try:
                self.descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC,
                                          0o600, dir_fd=self.dir)
                return temp
            except OSError as exc:
                if exc.errno != errno.EEXIST:
                    raise Refused("cannot write in it: %s" % (exc.strerror or exc))
        raise Refused("cannot make a new file in it")

    def add(self, name, data):
        info = tarfile.TarInfo("%s/%s" % (self.name, name))
        info.size, info.mode, info.mtime = len(data), 0o600, int(time.time())
        self.tar.addfile(info, BytesIO(data))

    def commit(self):
        """The archive's path once it stands under its name; Refused (the new file removed) where not."""
        try:
            self.tar.close()
            self.handle.flush()
            os.fsync(self.handle.fileno())
            self.handle.close()
            try:
                there = os.stat(self.final, dir_fd=self.dir, follow_symlinks=False)
            except OSError as exc:
                if exc.errno != errno.ENOENT:
                    raise
                there = None
            if there is not None and (not stat.S_ISREG(there.st_mode) or there.st_uid != os.geteuid()):
                raise Refused("%s is already there (%s): not replaced" % (
                    self.final, "a symlink" if stat.S_ISLNK(there.st_mode) else "uid %d's" % there.st_uid))
            # a rename replaces the entry itself, never what a symlink put there meanwhile points to
            os.rename(self.temp, self.final, src_dir_fd=self.dir, dst_dir_fd=self.dir)
        except BaseException as exc:
            self.discard()
            if isinstance(exc, OSError):
                raise Refused("cannot write %s: %s" % (self.final, exc.strerror or exc))
            raise
        os.close(self.dir)
        self.dir = None
        return os.path.join(self.dest, self.final)

    def discard(self):
        """Removes the new file (nothing kept of the node)."""
        if self.dir is None:
            return
        for close in (self.tar.close, self.handle.close):
            try:
                close()
            except Exception:  # pylint: disable=broad-except
                pass
        try:
            os.unlink(self.temp, dir_fd=self.dir)
        except OSError:
            pass
        os.close(self.dir)
        self.dir = None


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
    # the window counts from the first status read: a hang is ranks unmoved for all of watch_s
    started = clock()
    watch = job_watch.WindowWatch(ask, params, max(params["watch_s"], 0.001), clock=clock)
    watch.run(params["interval_s"], params["watch_s"], sleep=sleep, window_after_first_read=True)
    reads, comms, verdicts, version = watch.reads, watch.comms, watch.verdicts, watch.version
    if reads == 0:
        exc = watch.error
        # the answer comes from a socket the job can answer on: any shape of it is one line here
        if not isinstance(exc, (nccl_ras.RasError, ValueError)):
            exc = "NCCL RAS's status is not of the shape NCCL writes (%s: %s)" % (
                type(exc).__name__, safe_text.one_line(exc, 100))
        bundle.lack("ras", str(exc))
        # nothing listens: no job here (collect() says otherwise where the job's processes run);
        # anything else that answered (TLS, a refusal, a malformed status) could not be checked
        state = "none" if isinstance(exc, nccl_ras.NoRas) else "unknown"
        return {"state": state, "reason": safe_text.one_line(exc, 300), "reads": 0}, [], []
    bundle.put("ras", "ras/status-first.json", json.dumps(watch.first_doc, indent=1, sort_keys=True) + "\n")
    if reads > 1:
        bundle.put("ras", "ras/status-last.json", json.dumps(watch.last_doc, indent=1, sort_keys=True) + "\n")
    odd = []
    for comm in comms:
        strays = nccl_ras.odd_ranks(comm["ranks"])
        # by identity, and the others' peaks read once: linear in the ranks whatever the job reports
        others = nccl_ras.others_of(comm["ranks"], strays)
        peak = nccl_ras.peaks(others)
        for rank in strays:
            odd.append({"comm": comm["hash"], "rank": rank["rank"], "host": rank["host"],
                        "node": (params["names"] or {}).get(rank["host"], rank["host"]), "counts": rank["counts"],
                        "behind": nccl_ras.behind(rank, others, peak)})
    # how long no rank of any communicator issued a collective over the watch (0 from one read): with every
    # rank's stack in one collective, the summary's evidence of the hang where all ranks wait
    seen = watch.hangs.seen
    unmoved = min(clock() - past["since"] for past in seen.values()) if reads > 1 and seen else 0
    return ({"state": watch.state(), "reads": reads,
             "unmoved_s": round(unmoved, 1),
             "nccl_version": version, "communicators": nccl_ras.summary(comms), "odd_ranks": odd,
             "watched_s": round(clock() - started, 1)}, comms, verdicts)


def _guard(bundle, part, function, *args):
    """function(*args), or None with the part lacking the error in one line: one part never costs another."""
    try:
        return function(*args)
    except Exception as exc:  # pylint: disable=broad-except
        bundle.lack(part, "%s: %s" % (type(exc).__name__, safe_text.one_line(exc, 200)))
        return None


def collect(params, run, bundle, ask, clock, sleep, root="/", wall=time.time):
    """Everything one node holds of the job, into bundle; the module's result (no archive).

    run(argv, timeout=seconds) -> (rc, out, err), as GpuModule.run: every command gets command_timeout_s (a
    stack dump py_spy_timeout_s), cut to what is left of deadline_s; a part that would start after it is
    left out and says so."""
    node, job = params["node"], params["job"] or None
    timeout_s = params.get("proc_timeout_s") or PROC_TIMEOUT_S
    command_s = params.get("command_timeout_s") or COMMAND_TIMEOUT_S
    end = clock() + params["deadline_s"] if params.get("deadline_s") else None

    def left():
        return float("inf") if end is None else end - clock()

    def late(part, what=""):
        """True, with the part saying so, once the collection's deadline has passed."""
        if left() > 0:
            return False
        bundle.lack(part, "%sleft out: the collection reached its deadline of %gs" % (
            what and what + " ", params["deadline_s"]))
        return True

    def timed(seconds):
        return lambda argv: run(argv, timeout=max(0.1, min(seconds, left())))

    def within(function, *args):
        """function(*args) on a worker, given up on past command_s (or the deadline): Deadline.Expired."""
        deadline = Deadline(max(0.1, min(command_s, left())))
        try:
            return deadline.call(function, *args)
        finally:
            deadline.close()

    commands = timed(command_s)
    ras, comms, verdicts = read_ras(params, ask, clock, sleep, bundle)
    ras_pids = _ras_rank_pids(comms, node, params["names"])
    notes = []
    if job is None:
        job = job_of_pids(sorted(ras_pids), root=root, timeout_s=timeout_s, notes=notes)
    findings = [v["finding"] for v in verdicts]
    slurm = {}
    if job and params["scontrol"] and not late("slurm"):
        rc, out, err = commands([params["scontrol"], "show", "job", "-o", str(job)])
        if rc == 0:
            slurm = scontrol_job(out)
            bundle.put("slurm", "slurm/job.txt", safe_text.mask_text(out))
        else:
            bundle.lack("slurm", "scontrol show job %s: %s" % (job, safe_text.one_line(err or out, 200)))
    uid = job_uid(slurm)
    # Slurm's pids first: a look at every process of a sick node meets its stuck ones
    among = slurm_pids(job, commands, params["scontrol"], root, notes) if job and not late("processes") else None
    procs = job_processes(job=job, pids=sorted(ras_pids), root=root, uid=uid, timeout_s=timeout_s,
                          notes=notes, among=among, expired=lambda: left() <= 0) if (job or ras_pids) else []
    for note in notes:
        bundle.lack("processes", note)
    if procs and ras["state"] == "none":
        # the job runs here, so a RAS that does not answer is one that could not be checked, never "no job"
        ras = dict(ras, state="unknown")
    if procs and ras["state"] == "unknown":
        findings.append(fd.make("job", node, "warn", "could not check the job through NCCL RAS while %d process%s of "
                                "the job run%s here: %s" % (len(procs), "" if len(procs) == 1 else "es",
                                                            "s" if len(procs) == 1 else "", ras["reason"])))
    if not procs and ras["state"] in ("none", "unknown"):
        # nothing of the job here: the node's own state is not the job's evidence
        return {"node": node, "job": job, "slurm": {}, "since": None, "ras": ras, "verdicts": [], "ranks": [],
                "processes": 0, "xids": [], "diag": [], "findings": [], "inspector": None, "masked": 0,
                "parts": bundle.parts}
    # a pid RAS names counts as a rank only once it passed the job check
    ras_pids = dict((p["pid"], ras_pids[p["pid"]]) for p in procs if p["pid"] in ras_pids)
    rank_procs = ranks(procs, ras_pids)
    since = params["since"] or (min(p["started"] for p in procs) - 60 if procs else int(wall()) - 3600)
    bundle.put("processes", "processes.json", json.dumps(
        [dict((k, p[k]) for k in ("pid", "ppid", "comm", "cmdline", "started")) for p in procs],
        indent=1) + "\n")
    out_ranks = []
    deadline = Deadline(timeout_s)
    try:
        for proc in rank_procs:
            entry = None
            if not late("stacks", "rank %s" % ("pid %d" % proc["pid"] if proc["rank"] is None else proc["rank"])):
                entry = _guard(bundle, "stacks", _rank_part, params, timed(params["py_spy_timeout_s"]), bundle, proc,
                               root, deadline, within)
            if entry is None:
                entry = {"rank": proc["rank"], "local_rank": proc["local_rank"], "pid": proc["pid"], "frame": None,
                         "flight_recorder": 0}
            out_ranks.append(entry)
    finally:
        deadline.close()
    if not params["py_spy"]:
        bundle.lack("stacks", "py-spy not found on the node: only kernel stacks kept (pip install py-spy, "
                              "or name it with py_spy)")
    if rank_procs and not any(r["flight_recorder"] for r in out_ranks):
        bundle.lack("flight_recorder", "no rank wrote a flight-recorder file (PyTorch writes one on a collective "
                                       "timeout with TORCH_NCCL_DUMP_ON_TIMEOUT=1)")
    if not late("gpus"):
        _guard(bundle, "gpus", _command_part, bundle, commands, "gpus", "nvidia-smi-q.xml",
               params["nvidia_smi"] and [params["nvidia_smi"], "-q", "-x"], "nvidia-smi not found on the node")
    xids, diag = [], []
    if params["journalctl"]:
        found = None if late("kernel") else _guard(bundle, "kernel", _kernel_part, params, commands, bundle, since)
        xids = found or []
        for unit in params["units"]:
            if late("logs", unit):
                continue
            lines = _guard(bundle, "logs", _unit_part, params, commands, bundle, unit, since) or []
            diag.extend(dict(item, source=unit) for item in lines)
            findings.extend(diag_findings(lines, unit))
    else:
        bundle.lack("kernel", "journalctl not found on the node")
    for path, owner in _outputs(params, slurm, uid):
        if late("job_output", safe_text.one_line(path, 300)):
            continue
        lines = _guard(bundle, "job_output", _output_part, bundle, path, owner, within) or []
        diag.extend(dict(item, source=path) for item in lines)
        findings.extend(diag_findings(lines, path))
    bandwidth, slow_gpus = None, []
    if params["inspector_dir"] and not late("inspector"):
        read = _guard(bundle, "inspector", within, inspector_read, params["inspector_dir"],
                      params["inspector_stale_s"], min(16 * 1024 * 1024, bundle.max_bytes, bundle.room()))
        if read is not None:
            bandwidth, slow_gpus = read["bandwidth"], read["slow_gpus"]
            if read["skipped_files"]:
                bundle.lack("inspector", "%d entr%s left out of %s: a link, FIFO, device or socket, or a file "
                            "changed while read" % (read["skipped_files"], "y" if read["skipped_files"] == 1
                                                    else "ies", safe_text.one_line(params["inspector_dir"], 300)))
            bundle.put("inspector", "inspector/bandwidth.json", json.dumps(read, indent=1, sort_keys=True) + "\n")
    result = {"node": node, "job": job,
              "slurm": dict((k, v) for k, v in slurm.items() if k not in ("StdErr", "UserId")),
              "since": since, "ras": ras,
              "verdicts": [dict((k, v[k]) for k in ("kind", "comm", "ranks", "hosts")) for v in verdicts],
              "ranks": out_ranks, "processes": len(procs), "xids": xids, "diag": diag, "findings": findings,
              "inspector": bandwidth, "slow_gpus": slow_gpus, "masked": bundle.masked, "parts": bundle.parts}
    bundle.put("manifest", "manifest.json", json.dumps(result, indent=1, sort_keys=True) + "\n", counted=False)
    return result


def _rank_part(params, run, bundle, proc, root, deadline, within=_direct):
    """One rank's environment, stacks and flight-recorder files into bundle; its entry in the result.

    run: py-spy's, with its timeout; deadline: for /proc; within(function, *args): for the files."""
    label = "rank-%s" % ("unknown-%d" % proc["pid"] if proc["rank"] is None else proc["rank"])
    env, masked = masked_env(proc["env"])
    bundle.masked += masked
    bundle.put("nccl_env", "env/%s.env" % label,
               "".join("%s=%s\n" % (safe_text.one_line(key), safe_text.one_line(env[key])) for key in sorted(env)))
    frame = None
    if params["py_spy"]:
        rc, out, err = run([params["py_spy"], "dump", "--json", "--pid", str(proc["pid"])])
        stacks = None
        if rc == 0:
            try:
                stacks = py_spy_stacks(json.loads(out))
            except (ValueError, TypeError, AttributeError):
                stacks = None
        if stacks is not None:
            frame = main_frame(stacks)
            bundle.put("stacks", "stacks/%s.txt" % label, stacks_text(proc["rank"], proc["pid"], stacks))
        else:
            bundle.lack("stacks", "py-spy could not dump pid %d: %s" % (
                proc["pid"], safe_text.one_line(err or out or "rc %d" % rc, 200)))
    try:
        kernel_stack = deadline.call(_read, "%s/proc/%d/stack" % (root.rstrip("/"), proc["pid"]), 64 * 1024)
    except Deadline.Expired as exc:
        kernel_stack = None
        bundle.lack("stacks", "pid %d: reading its kernel stack %s (stuck in the kernel?): skipped"
                    % (proc["pid"], exc))
    if kernel_stack:
        bundle.put("stacks", "stacks/%s.kernel.txt" % label, kernel_stack.decode("utf-8", "replace"))
    try:
        recorded, refused = within(flight_recorder_files, proc["env"], proc["rank"], 8, proc.get("uid"))
    except Deadline.Expired as exc:
        recorded, refused = [], ["rank %s: listing its flight-recorder files %s: skipped" % (proc["rank"], exc)]
    for reason in refused:
        bundle.lack("flight_recorder", reason)
    kept = 0
    for path in recorded:
        before = len(bundle.parts.get("flight_recorder", {}).get("files", []))
        bundle.copy("flight_recorder", "flight_recorder/%s" % os.path.basename(path), path, owner=proc.get("uid"),
                    within=within)
        kept += len(bundle.parts.get("flight_recorder", {}).get("files", [])) - before
    return {"rank": proc["rank"], "local_rank": proc["local_rank"], "pid": proc["pid"], "frame": frame,
            "flight_recorder": kept}


def _kernel_part(params, run, bundle, since):
    rc, out, err = run([params["journalctl"], "-k", "--since", "@%d" % since, "--no-pager", "-o", "short-iso"])
    if rc != 0:
        bundle.lack("kernel", "journalctl -k: %s" % safe_text.one_line(err or out, 200))
        return []
    lines = kernel_lines(out)
    bundle.put("kernel", "kernel.log", "\n".join(lines) + "\n")
    return xid.events("\n".join(lines))


def _unit_part(params, run, bundle, unit, since):
    rc, out, err = run([params["journalctl"], "-u", unit, "--since", "@%d" % since, "--no-pager",
                        "-o", "short-iso", "-n", "5000"])
    if rc != 0:
        bundle.lack("logs", "journalctl -u %s: %s" % (unit, safe_text.one_line(err or out, 200)))
        return []
    bundle.put("logs", "logs/%s.log" % unit, safe_text.mask_text(out))
    return diag_lines(out)


def _outputs(params, slurm, uid):
    """(path, owner) of the job's output files: those the task names (any owner), then scontrol's StdOut
    and StdErr, which the job's user chose (theirs only, where scontrol says who they are)."""
    out = [(path, None) for path in params["output_files"]]
    for key in ("StdOut", "StdErr"):
        path = slurm.get(key)
        if path and path not in params["output_files"] and path not in [p for p, _owner in out]:
            out.append((path, uid))
    return out


def _output_part(bundle, path, owner, within=_direct):
    """One output file's end into bundle; its NCCL DIAG lines."""
    try:
        raw, _size = within(read_file, path, min(bundle.max_bytes, bundle.room()), owner, True)
    except Missing:
        return []  # a job's output is on the node that wrote it, not on every node
    except Refused as exc:
        bundle.lack("job_output", str(exc))
        return []
    except Deadline.Expired as exc:
        bundle.lack("job_output", "%s: reading it %s: skipped" % (safe_text.one_line(path, 300), exc))
        return []
    text = raw.decode("utf-8", "replace")
    bundle.put("job_output", "job_output/%s" % os.path.basename(path), safe_text.mask_text(text))
    return diag_lines(text)


def inspector_read(directory, stale_s, limit):
    """nccl_inspector.read_dir over the directory reached as open_dir allows: no link on the way but the
    system's own; the files in it are read as read_dir reads them (regular files only, no link, bounded)."""
    descriptor = open_dir(directory)
    try:
        return nccl_inspector.read_dir(directory, stale_s, max_bytes=limit, dir_fd=descriptor)
    finally:
        os.close(descriptor)


def _command_part(bundle, run, part, name, argv, missing):
    if not argv:
        bundle.lack(part, missing)
        return
    rc, out, err = run(argv)
    if rc == 0:
        bundle.put(part, name, out)
    else:
        bundle.lack(part, "%s: %s" % (" ".join(argv), safe_text.one_line(err or out or "rc %d" % rc, 200)))
