# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl_job_evidence on a sick node: no command, /proc file or file of the job holds the collector past its
deadline, and the job's processes come from Slurm before any look at every process of the node."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import threading
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_job_evidence as ev
from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_ras
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.job.test_nccl_job_evidence import (
    _params, fake_proc, torchrun_job)
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.job.test_nccl_job_evidence_confinement import (
    _reasons)

LISTPIDS = ("PID      JOBID    STEPID   LOCALID GLOBALID\n"
            "4000     4242     0        0       0\n"
            "4001     4242     0        1       1\n")


class Commands(object):
    """A run function as GpuModule.run is: a command that outlasts its timeout is given up on (rc 124) once
    that time has passed; hung names the commands that never answer, answers what the others print."""

    def __init__(self, hung=(), answers=None):
        self.hung, self.answers, self.calls = set(hung), answers or {}, []

    def __call__(self, argv, timeout=None):
        name = os.path.basename(argv[0])
        self.calls.append((name, argv[1] if len(argv) > 1 else None, timeout))
        if name in self.hung:
            time.sleep(min(timeout if timeout is not None else 30, 30))
            return 124, "", "%s did not finish within %gs: killed" % (name, timeout)
        for key, answer in self.answers.items():
            if " ".join(argv).startswith(key):
                return answer
        return 1, "", "%s: not here" % name


def _collect(root, run=None, **params):
    """collect for job 4242 on a node without NCCL RAS, no tool but those params name."""
    def no_ras(**_kw):
        raise nccl_ras.RasError("no NCCL RAS service here")

    settings = dict({"job": "4242", "journalctl": None, "units": []}, **params)
    result = ev.collect(_params(1, **settings), run or Commands(), ev.Bundle(str(root / "ev"), 1 << 20), no_ras,
                        time.monotonic, time.sleep, root=str(root))
    return result, None


def test_every_command_has_a_deadline_and_a_hung_one_costs_no_other_part(tmp_path):
    torchrun_job(tmp_path, pids=[4000])
    xid = "2026-11-29T10:01:00 node-b kernel: NVRM: Xid (PCI:0000:9b:00): 79, pid=4000, name=python3, GPU has fallen\n"
    run = Commands(hung=["nvidia-smi"], answers={"journalctl -k": (0, xid, "")})
    started = time.monotonic()
    result = _collect(tmp_path, run=run, nvidia_smi="nvidia-smi", journalctl="journalctl", scontrol="scontrol",
                      command_timeout_s=0.5, py_spy="py-spy", py_spy_timeout_s=0.5)[0]
    assert time.monotonic() - started < 5
    assert run.calls and all(timeout is not None and 0 < timeout <= 0.5 for _name, _arg, timeout in run.calls), \
        run.calls
    assert "nvidia-smi did not finish within 0.5s" in _reasons(result, "gpus")
    assert result["parts"]["kernel"]["ok"] and [x["xid"] for x in result["xids"]] == [79]


def test_the_collection_stops_at_its_deadline_and_says_what_it_left_out(tmp_path):
    torchrun_job(tmp_path, pids=[4000, 4001])
    run = Commands(hung=["py-spy"])
    started = time.monotonic()
    result = _collect(tmp_path, run=run, py_spy="py-spy", py_spy_timeout_s=5, nvidia_smi="nvidia-smi",
                      journalctl="journalctl", units=["receive-datapath-manager.service"], deadline_s=1.0)[0]
    took = time.monotonic() - started
    assert took < 3, took
    # py-spy of the first rank took what was left; no command ran after it
    assert [name for name, _arg, _timeout in run.calls] == ["py-spy"]
    assert "rank 1 left out: the collection reached its deadline of 1s" in _reasons(result, "stacks")
    assert "left out: the collection reached its deadline of 1s" in _reasons(result, "gpus")
    assert "left out: the collection reached its deadline of 1s" in _reasons(result, "kernel")


def test_the_jobs_processes_come_from_scontrol_listpids_before_any_scan_of_proc(tmp_path, monkeypatch):
    """A sick node: an unrelated process whose /proc never answers. The job's pids come from Slurm, so it is
    never read."""
    torchrun_job(tmp_path, pids=[4000, 4001])
    fake_proc(tmp_path, 7777, {"PATH": "/usr/bin"})
    read, stuck, release = ev._read, [], threading.Event()

    def blocking(path, *args, **kwargs):
        if "/7777/" in path:
            stuck.append(path)
            release.wait(10)
        return read(path, *args, **kwargs)

    monkeypatch.setattr(ev, "_read", blocking)
    run = Commands(answers={"scontrol listpids 4242": (0, LISTPIDS, ""),
                            "scontrol show job": (0, "JobId=4242 JobState=RUNNING\n", "")})
    started = time.monotonic()
    try:
        result = _collect(tmp_path, run=run, scontrol="scontrol", proc_timeout_s=2)[0]
    finally:
        release.set()
    assert time.monotonic() - started < 1.5
    assert stuck == [] and "7777" not in _reasons(result, "processes")
    # the launcher (3990) is not among the pids Slurm gives: it was not looked for
    assert [r["pid"] for r in result["ranks"]] == [4000, 4001] and result["processes"] == 2


def test_without_scontrol_the_jobs_cgroup_names_its_processes(tmp_path):
    torchrun_job(tmp_path, pids=[4000, 4001])
    fake_proc(tmp_path, 5000, {"SLURM_JOB_ID": "4242", "RANK": "7"})  # not in the job's cgroup: not looked at
    task = tmp_path / "sys" / "fs" / "cgroup" / "system.slice" / "slurmstepd.scope" / "job_4242" / "step_0"
    task.mkdir(parents=True)
    (task / "cgroup.procs").write_text(u"4000\n4001\n")
    result = _collect(tmp_path)[0]
    assert [r["pid"] for r in result["ranks"]] == [4000, 4001]


def test_a_fifo_in_place_of_a_proc_file_is_skipped_within_the_deadline(tmp_path):
    torchrun_job(tmp_path, pids=[4000, 4001])
    fifos = [tmp_path / "proc" / "4001" / "environ", tmp_path / "proc" / "4001" / "stack",
             tmp_path / "proc" / "4000" / "stack"]
    for path in fifos:
        if path.exists():
            path.unlink()
        os.mkfifo(str(path))
    done = {}
    worker = threading.Thread(target=lambda: done.update(result=_collect(tmp_path, proc_timeout_s=1)[0]))
    worker.daemon = True
    started = time.monotonic()
    worker.start()
    worker.join(10)
    try:
        assert "result" in done, "the collector blocked on a FIFO in /proc"
        assert time.monotonic() - started < 3
        assert [r["pid"] for r in done["result"]["ranks"]] == [4000]
    finally:
        for path in fifos:  # let a blocked reader go
            try:
                os.close(os.open(str(path), os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass


def test_a_job_file_whose_read_never_returns_is_skipped_within_the_deadline(tmp_path, monkeypatch):
    """The job's output on a shared file system that stopped answering: open or read blocks in the kernel."""
    torchrun_job(tmp_path, pids=[4000])
    (tmp_path / "hung.out").write_text(u"never read\n")
    (tmp_path / "good.out").write_text(u"step 1\n")
    read_file, release = ev.read_file, threading.Event()

    def blocking(path, *args, **kwargs):
        if path.endswith("hung.out"):
            release.wait(10)
        return read_file(path, *args, **kwargs)

    monkeypatch.setattr(ev, "read_file", blocking)
    started = time.monotonic()
    try:
        result = _collect(tmp_path, command_timeout_s=0.5,
                          output_files=[str(tmp_path / "hung.out"), str(tmp_path / "good.out")])[0]
    finally:
        release.set()
    assert time.monotonic() - started < 3
    assert "hung.out: reading it took over 0.5s: skipped" in _reasons(result, "job_output")
    assert "job_output/good.out" in result["parts"]["job_output"]["files"]
