# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl_job_evidence where the job's user is hostile: what the job names (files, pids, RAS answers)
never takes the collector beyond the job, never blocks it, and never costs the other parts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import threading
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_job_evidence as ev
from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_ras
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.job.test_nccl_job_evidence import (
    _params, fake_proc, torchrun_job)
from ansible_collections.gpudirect.gcp.tests.unit.standins.ras_standin import (  # noqa: F401 pylint: disable=unused-import
    ras)

OUTSIDE = "outside-the-job-0123"


def _files(directory):
    return dict((str(p.relative_to(directory)), p.read_bytes()) for p in directory.rglob("*") if p.is_file())


def _foreign_symlink(target, link):
    """A symlink of another user's (as root, the tests make it someone else's: root's own are trusted)."""
    os.symlink(target, link)
    try:
        os.lchown(link, 65534, 65534)
    except OSError:
        pass


def _one_rank(root, env=None, pid=4000, job="4242"):
    fake_proc(root, pid, dict({"SLURM_JOB_ID": job, "RANK": "0", "LOCAL_RANK": "0"}, **(env or {})))


def _collect(root, bundle=None, run=None, ask=None, **params):
    bundle = bundle or ev.Bundle(str(root / "ev"), 1 << 20)

    def no_ras(**kw):
        raise nccl_ras.RasError("no NCCL RAS service here")

    result = ev.collect(_params(1, job="4242", journalctl=None, units=[], **params),
                        run or (lambda argv, timeout=None: (1, "", "not here")), bundle, ask or no_ras, time.monotonic,
                        time.sleep, root=str(root))
    return result, bundle


def _reasons(result, part):
    return " | ".join(result["parts"].get(part, {}).get("reasons", []))


def test_a_flight_recorder_file_that_links_outside_the_job_is_not_followed(tmp_path):
    (tmp_path / "secret").write_text(u"%s\n" % OUTSIDE)
    (tmp_path / "fr").mkdir()
    _foreign_symlink(str(tmp_path / "secret"), str(tmp_path / "fr" / "trace_0"))
    (tmp_path / "fr" / "trace_0.pkl").write_bytes(b"dump")
    _one_rank(tmp_path, {"TORCH_NCCL_DEBUG_INFO_TEMP_FILE": str(tmp_path / "fr" / "trace_")})
    result = _collect(tmp_path)[0]
    written = _files(tmp_path / "ev")
    assert OUTSIDE.encode() not in b"".join(written.values())
    assert written.get("flight_recorder/trace_0.pkl") == b"dump"
    assert "trace_0" in _reasons(result, "flight_recorder") and "symlink" in _reasons(result, "flight_recorder")


def test_a_flight_recorder_directory_that_is_a_symlink_or_climbs_out_is_refused(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "trace_0").write_text(u"%s\n" % OUTSIDE)
    _foreign_symlink(str(tmp_path / "elsewhere"), str(tmp_path / "link"))
    (tmp_path / "fr").mkdir()
    for prefix in (str(tmp_path / "link" / "trace_"), str(tmp_path / "fr" / ".." / "elsewhere" / "trace_")):
        _one_rank(tmp_path, {"TORCH_NCCL_DEBUG_INFO_TEMP_FILE": prefix}, pid=4000 + len(prefix))
    result = _collect(tmp_path)[0]
    assert OUTSIDE.encode() not in b"".join(_files(tmp_path / "ev").values())
    assert _reasons(result, "flight_recorder").count("TORCH_NCCL_DEBUG_INFO_TEMP_FILE") == 2


def test_a_fifo_as_job_output_or_flight_recorder_never_blocks_and_costs_nothing_else(tmp_path):
    (tmp_path / "fr").mkdir()
    os.mkfifo(str(tmp_path / "fr" / "trace_0"))
    os.mkfifo(str(tmp_path / "job.out"))
    (tmp_path / "good.out").write_text(u"step 1\n")
    _one_rank(tmp_path, {"TORCH_NCCL_DEBUG_INFO_TEMP_FILE": str(tmp_path / "fr" / "trace_")})
    done = {}
    worker = threading.Thread(target=lambda: done.update(result=_collect(
        tmp_path, output_files=[str(tmp_path / "job.out"), str(tmp_path / "good.out")])[0]))
    worker.daemon = True
    worker.start()
    worker.join(10)
    try:
        assert "result" in done, "the collector blocked on a FIFO"
        assert "job.out" in _reasons(done["result"], "job_output")
        assert "not a regular file" in _reasons(done["result"], "job_output")
        assert _files(tmp_path / "ev")["job_output/good.out"] == b"step 1\n"
    finally:
        for fifo in ("job.out", "fr/trace_0"):  # let a blocked reader go
            try:
                os.close(os.open(str(tmp_path / fifo), os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass


def test_the_bundle_keeps_at_most_its_total_bytes_across_files(tmp_path):
    bundle = ev.Bundle(str(tmp_path / "b"), 100, max_total_bytes=250)
    for n in range(4):
        bundle.put("job_output", "out%d.txt" % n, u"x" * 100)
    kept = sum(len(data) for data in _files(tmp_path / "b").values())
    assert 200 <= kept <= 250 and bundle.parts["job_output"]["ok"] is False
    assert "250" in " ".join(bundle.parts["job_output"]["reasons"])


def test_a_pid_ras_names_that_is_not_of_the_job_is_ignored_and_noted(ras, tmp_path):
    # node-b's ranks 8..15 are pids 4008..4015 by the stand-in; 4009 runs another job, 4010 is another
    # job's process pretending to be this one (its cgroup is job 9999's)
    torchrun_job(tmp_path, pids=[4008, 4011], ranks_from=8)
    fake_proc(tmp_path, 4009, {"SLURM_JOB_ID": "9999", "RANK": "1", "NCCL_IB_HCA": "victim"})
    fake_proc(tmp_path, 4010, {"SLURM_JOB_ID": "4242", "RANK": "2"})
    with open(str(tmp_path / "proc" / "4010" / "cgroup"), "w") as handle:
        handle.write("0::/system.slice/slurmstepd.scope/job_9999/step_0/user/task_0\n")
    bundle = ev.Bundle(str(tmp_path / "ev"), 1 << 20)
    result = ev.collect(_params(ras(hang_at=0.0, odd_rank=13), job="4242", journalctl=None, units=[]),
                        lambda argv, timeout=None: (1, "", ""), bundle, nccl_ras.status, time.monotonic, time.sleep,
                        root=str(tmp_path))
    pids = [p["pid"] for p in json.loads(_files(tmp_path / "ev")["processes.json"])]
    assert 4009 not in pids and 4010 not in pids and 4008 in pids
    assert b"victim" not in b"".join(_files(tmp_path / "ev").values())
    assert "4009" in _reasons(result, "processes") and "4010" in _reasons(result, "processes")


def test_processes_not_owned_by_the_jobs_user_are_not_the_jobs(tmp_path):
    _one_rank(tmp_path)
    other = os.getuid() + 1

    def run(argv, timeout=None):
        if argv[0] == "scontrol":
            return 0, "JobId=4242 UserId=someone(%d) JobState=RUNNING\n" % other, ""
        return 1, "", "not here"

    result = _collect(tmp_path, run=run, scontrol="scontrol")[0]
    assert result["processes"] == 0 and result["ranks"] == []


def test_a_process_whose_reads_hang_is_skipped_and_named_and_the_others_kept(tmp_path, monkeypatch):
    torchrun_job(tmp_path, pids=[4000, 4001])
    read = ev._read
    release = threading.Event()

    def stuck(path, *args, **kwargs):
        if "/4001/" in path and path.endswith(("stack", "cmdline")):
            release.wait(4)
        return read(path, *args, **kwargs)

    monkeypatch.setattr(ev, "_read", stuck)
    started = time.monotonic()
    try:
        result = _collect(tmp_path, proc_timeout_s=0.5)[0]
    finally:
        release.set()
    assert time.monotonic() - started < 3
    assert "4001" in _reasons(result, "processes") + _reasons(result, "stacks")
    assert 4000 in [r["pid"] for r in result["ranks"]]


def test_a_ras_answer_of_the_wrong_shape_is_one_line_and_the_rest_is_gathered(tmp_path):
    _one_rank(tmp_path)
    answer = {"communicators": [{"hash": "x", "ranks": [{"rank": 0, "pid": 4000, "status": [1]}]}]}
    result = _collect(tmp_path, ask=lambda **kw: answer)[0]
    assert result["ras"]["state"] == "unknown" and "\n" not in result["ras"]["reason"]
    assert result["parts"]["ras"]["ok"] is False and [r["pid"] for r in result["ranks"]] == [4000]


def test_a_fifo_in_the_inspector_directory_never_blocks(tmp_path):
    (tmp_path / "insp").mkdir()
    os.mkfifo(str(tmp_path / "insp" / "nccl_inspector_metrics_1.prom"))
    _one_rank(tmp_path)
    done = {}
    worker = threading.Thread(target=lambda: done.update(
        result=_collect(tmp_path, inspector_dir=str(tmp_path / "insp"))[0]))
    worker.daemon = True
    worker.start()
    worker.join(10)
    try:
        assert "result" in done, "the collector blocked on a FIFO"
        assert done["result"]["parts"]["inspector"]["reasons"][0].startswith("1 entry left out of ")
    finally:
        try:
            os.close(os.open(str(tmp_path / "insp" / "nccl_inspector_metrics_1.prom"), os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass


def test_a_variable_name_or_value_with_a_newline_is_one_line_of_the_ranks_env_file(tmp_path):
    """The job chooses its variables' names too: a newline in one never forges a second variable."""
    env = {"NCCL_DEBUG": "INFO\nNCCL_NET=forged", "NCCL_X\nNCCL_IB_HCA=forged": "1", "SLURM_JOB_ID": "4242",
           "NCCL_TOKEN_URL": "https://u:hunter2@h/x"}
    bundle = ev.Bundle(str(tmp_path / "ev"), 1 << 20)
    proc = {"pid": 4000, "rank": 0, "local_rank": 0, "env": env, "uid": None}
    ev._rank_part({"py_spy": None}, lambda argv, timeout=None: (1, "", ""), bundle, proc, str(tmp_path),
                  ev.Deadline(2.0))
    lines = (tmp_path / "ev" / "env" / "rank-0.env").read_text().splitlines()
    assert len(lines) == len(env), lines
    assert not any(line.startswith(("NCCL_NET=", "NCCL_IB_HCA=")) for line in lines)
    assert "hunter2" not in "\n".join(lines)
