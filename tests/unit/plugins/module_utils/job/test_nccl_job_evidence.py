# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl_job_evidence's pure parts, over a /proc of files and the RAS stand-in on a real socket."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import time

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_job_evidence as ev
from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_ras
from ansible_collections.gpudirect.gcp.tests.unit.standins.ras_standin import (  # noqa: F401 pylint: disable=unused-import
    ras)

SECRET = "hf_Zq8kR2mW7xT4vN9pL3sY6bC1dF5gH0jK"


def fake_proc(root, pid, env, ppid=1, comm="python3", argv=("python3", "train.py"), start_ticks=5000):
    path = os.path.join(str(root), "proc", str(pid))
    os.makedirs(path)
    with open(os.path.join(path, "environ"), "wb") as handle:
        handle.write(b"\0".join(("%s=%s" % item).encode() for item in sorted(env.items())) + b"\0")
    with open(os.path.join(path, "stat"), "w") as handle:
        fields = ["S", str(ppid)] + ["0"] * 17 + [str(start_ticks)] + ["0"] * 10
        handle.write("%d (%s) %s\n" % (pid, comm, " ".join(fields)))
    with open(os.path.join(path, "cmdline"), "wb") as handle:
        handle.write(b"\0".join(a.encode() for a in argv) + b"\0")
    stat = os.path.join(str(root), "proc", "stat")
    if not os.path.exists(stat):
        with open(stat, "w") as handle:
            handle.write("cpu 1 2 3\nbtime 1790000000\n")


def torchrun_job(root, job="4242", pids=(4000, 4001), launcher=3990, ranks_from=0):
    fake_proc(root, launcher, {"SLURM_JOB_ID": job, "SLURM_PROCID": "0", "HOME": "/root"},
              argv=("torchrun", "--nproc-per-node", "2", "train.py", "--hf-token", SECRET))
    for local, pid in enumerate(pids):
        fake_proc(root, pid, {"SLURM_JOB_ID": job, "SLURM_PROCID": "0", "RANK": str(ranks_from + local),
                              "LOCAL_RANK": str(local), "NCCL_IB_HCA": "mlx5_0", "HF_TOKEN": SECRET,
                              "GPUDIRECT_REGISTRY_PASSWORD": SECRET, "PATH": "/usr/bin"}, ppid=launcher)


def test_a_jobs_processes_are_found_by_their_slurm_job_and_their_secrets_never_kept(tmp_path):
    torchrun_job(tmp_path)
    fake_proc(tmp_path, 5000, {"SLURM_JOB_ID": "9999", "RANK": "0"})  # another job
    procs = ev.job_processes(job="4242", root=str(tmp_path))
    assert [p["pid"] for p in procs] == [3990, 4000, 4001]
    assert procs[0]["cmdline"][-2:] == ["--hf-token", "********"] and procs[0]["started"] == 1790000050
    assert "HF_TOKEN" not in procs[1]["env"] and "PATH" not in procs[1]["env"]
    env, masked = ev.masked_env(procs[1]["env"])
    assert masked == 1 and env["GPUDIRECT_REGISTRY_PASSWORD"] == "********" and env["NCCL_IB_HCA"] == "mlx5_0"
    assert SECRET not in json.dumps([env, procs[0]["cmdline"]])


def test_ranks_are_the_processes_a_launcher_or_ras_names_not_the_launcher(tmp_path):
    torchrun_job(tmp_path, ranks_from=8)
    found = ev.ranks(ev.job_processes(job="4242", root=str(tmp_path)))
    assert [(r["pid"], r["rank"], r["local_rank"]) for r in found] == [(4000, 8, 0), (4001, 9, 1)]
    # srun starting the ranks itself: no RANK, one process per task, none the parent of another
    srun = [{"pid": 7, "ppid": 1, "env": {"SLURM_PROCID": "3", "SLURM_LOCALID": "1"}},
            {"pid": 6, "ppid": 1, "env": {"SLURM_PROCID": "2", "SLURM_LOCALID": "0"}}]
    assert [(r["pid"], r["rank"], r["local_rank"]) for r in ev.ranks(srun)] == [(6, 2, 0), (7, 3, 1)]
    # RAS's pid list wins over the environment
    assert [r["rank"] for r in ev.ranks(srun, ras_pids={7: 30})] == [30]


def test_the_flight_recorder_files_of_rank_1_are_not_those_of_rank_10(tmp_path):
    for name in ("trace_1", "trace_1.pkl", "trace_10", "trace_11", "other_1"):
        (tmp_path / name).write_text(u"x")
    env = {"TORCH_NCCL_DEBUG_INFO_TEMP_FILE": str(tmp_path / "trace_")}
    files, refused = ev.flight_recorder_files(env, 1)
    assert [os.path.basename(p) for p in files] == ["trace_1", "trace_1.pkl"] and refused == []
    assert ev.flight_recorder_files(env, None) == ([], []) and ev.flight_recorder_files({}, 123456) == ([], [])


@pytest.mark.parametrize("line,severity,subject", [
    ("node3:1234:1250 NCCL DIAG Network bandwidth test FAILED between rank 5 and rank 12", "fail", "node3 (pid 1234)"),
    ("NCCL DIAG: GPU pair 0<->3 bandwidth 12.1 GB/s below the expected 150", "warn", "/home/u/job-4242.out"),
    ("[rank3]: a3m-1:77:80 NCCL DIAG NVLink check passed for 8 GPUs", None, None),
])
def test_nccl_diag_lines_become_findings_by_what_they_report(line, severity, subject):
    text = "NCCL INFO Bootstrap\n%s\nplain output\n" % line
    lines = ev.diag_lines(text)
    assert len(lines) == 1 and not lines[0]["line"].startswith(("NCCL DIAG", ":"))
    found = ev.diag_findings(lines, "/home/u/job-4242.out")
    assert [(f["severity"], f["subject"]) for f in found] == ([(severity, subject)] if severity else [])
    if found:
        assert found[0]["component"] == "fabric" and lines[0]["line"] in found[0]["cause"]
    assert ev.diag_lines("[rank3]: a3m-1:77:80 NCCL DIAG x")[0]["host"] == "a3m-1"


def test_stacks_name_the_rank_in_a_function_most_ranks_are_not_in():
    dump = [{"thread_name": "MainThread", "active": False, "frames": [
        {"name": "wait", "short_filename": "distributed_c10d.py", "line": 4100},
        {"name": "train_step", "short_filename": "train.py", "line": 88}]},
        {"thread_name": "pt_nccl_watchdog", "frames": [{"name": "run", "filename": "/x/threading.py", "line": 1}]}]
    stacks = ev.py_spy_stacks(dump)
    assert ev.main_frame(stacks) == "wait" and stacks[1]["frames"] == ["run (/x/threading.py:1)"]
    assert "    wait (distributed_c10d.py:4100)" in ev.stacks_text(5, 77, stacks)
    frames = dict((rank, "wait") for rank in range(8))
    frames[5] = "forward"
    assert ev.odd_frames(frames) == {5: "forward"}
    assert ev.odd_frames({0: "a", 1: "b"}) == {} and ev.odd_frames({0: "a", 1: "a", 2: None}) == {}
    assert ev.py_spy_stacks("not a dump") == [] and ev.main_frame([]) is None


def test_scontrol_fields_are_read_from_one_line():
    out = ("JobId=4242 JobName=train UserId=u(1000) JobState=RUNNING StartTime=2026-11-29T10:00:00 "
           "NodeList=a3m-[0-3] BatchHost=a3m-0 StdErr=/home/u/4242.err StdOut=/home/u/4242.out\n")
    assert ev.scontrol_job(out) == {"JobId": "4242", "JobState": "RUNNING", "StartTime": "2026-11-29T10:00:00",
                                    "NodeList": "a3m-[0-3]", "BatchHost": "a3m-0", "StdErr": "/home/u/4242.err",
                                    "StdOut": "/home/u/4242.out", "UserId": "u(1000)"}
    assert ev.job_uid(ev.scontrol_job(out)) == 1000 and ev.job_uid({}) is None


def _params(port, **over):
    params = {"node": "node-b", "job": "", "names": {"10.0.0.3": "node-b"}, "host": "127.0.0.1", "port": port,
              "timeout_s": 5.0, "watch_s": 1.0, "interval_s": 0.25, "py_spy": None,
              "py_spy_timeout_s": 5, "scontrol": None, "nvidia_smi": None, "journalctl": "journalctl",
              "units": ["receive-datapath-manager.service"], "output_files": [], "inspector_dir": "",
              "inspector_stale_s": 120.0, "since": 0}
    params.update(over)
    return params


def test_collect_judges_the_hang_finds_the_nodes_ranks_and_says_what_it_lacks(ras, tmp_path):
    # ranks 8..15 are node-b's (10.0.0.3); the stand-in gives rank r the pid 4000 + r
    torchrun_job(tmp_path, pids=range(4008, 4016), ranks_from=8)
    out = tmp_path / "job.out"
    out.write_text(u"node-b:1:1 NCCL DIAG network check FAILED to 10.0.0.5\nHF_TOKEN=%s\n" % SECRET)
    calls = []

    def run(argv, timeout=None):
        calls.append(argv)
        if argv[:2] == ["journalctl", "-k"]:
            return 0, ("2026-11-29T10:01:00 node-b kernel: NVRM: Xid (PCI:0000:9b:00): 79, pid=4009, name=python3, "
                       "GPU has fallen off the bus.\n2026-11-29T10:01:01 node-b kernel: usb 1-1: new device\n"), ""
        return 0, "-- No entries --\n", ""

    bundle = ev.Bundle(str(tmp_path / "ev"), 1 << 20)
    result = ev.collect(_params(ras(hang_at=0.0, odd_rank=13)), run, bundle, nccl_ras.status, time.monotonic,
                        time.sleep, root=str(tmp_path))
    assert result["job"] == "4242" and result["ras"]["state"] == "hang"
    assert [(o["rank"], o["node"]) for o in result["ras"]["odd_ranks"]] == [(13, "node-b")]
    assert [r["rank"] for r in result["ranks"]] == list(range(8, 16)) and result["processes"] == 9
    assert [x["xid"] for x in result["xids"]] == [79]
    assert result["since"] == 1790000050 - 60
    assert ["journalctl", "-k", "--since", "@1789999990", "--no-pager", "-o", "short-iso"] in calls
    assert result["parts"]["stacks"]["ok"] is False and "py-spy not found" in result["parts"]["stacks"]["reasons"][0]
    assert result["parts"]["gpus"]["reasons"] == ["nvidia-smi not found on the node"]
    kernel = (tmp_path / "ev" / "kernel.log").read_text()
    assert "Xid" in kernel and "usb" not in kernel
    assert [f["component"] for f in result["findings"]] == ["job"]
    result = ev.collect(_params(ras(hang_at=0.0, odd_rank=13), output_files=[str(out)]), run,
                        ev.Bundle(str(tmp_path / "ev2"), 1 << 20), nccl_ras.status, time.monotonic, time.sleep,
                        root=str(tmp_path))
    assert [f["severity"] for f in result["findings"] if f["component"] == "fabric"] == ["fail"]
    written = "".join(p.read_text() for p in (tmp_path / "ev2").rglob("*") if p.is_file())
    assert SECRET not in written and "GPUDIRECT_REGISTRY_PASSWORD=********" in written


def test_a_node_running_nothing_of_the_job_gathers_nothing(tmp_path):
    fake_proc(tmp_path, 5000, {"SLURM_JOB_ID": "9999", "RANK": "0"})
    bundle = ev.Bundle(str(tmp_path / "ev"), 1 << 20)
    result = ev.collect(_params(1, job="4242"), lambda argv, timeout=None: (0, "", ""), bundle, nccl_ras.status,
                        time.monotonic, time.sleep, root=str(tmp_path))
    assert result["processes"] == 0 and result["ras"]["state"] == "none" and result["ranks"] == []
    assert not (tmp_path / "ev").exists()


def test_a_file_above_the_limit_is_cut_to_its_end_and_a_binary_one_left_out(tmp_path):
    bundle = ev.Bundle(str(tmp_path / "b"), 10)
    bundle.put("job_output", "out.txt", u"0123456789ABCDEF")
    assert (tmp_path / "b" / "out.txt").read_text().endswith("6789ABCDEF")
    big = tmp_path / "big"
    big.write_bytes(b"x" * 11)
    bundle.copy("flight_recorder", "fr/big", str(big))
    assert bundle.parts["flight_recorder"]["ok"] is False and not (tmp_path / "b" / "fr").exists()
