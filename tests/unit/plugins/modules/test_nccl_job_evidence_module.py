# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl_job_evidence as a module, on real rank processes (the job stand-in) with real py-spy."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import random
import signal
import subprocess
import sys
import tarfile
import time

import pytest

from ansible_collections.gpudirect.gcp.plugins.modules import nccl_job_evidence
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
JOB = os.path.join(ROOT, "tests", "sandbox", "standins", "nccl_ras", "gpudirect_standin_job.py")
PY_SPY = os.path.join(os.path.dirname(sys.executable), "py-spy")
SECRET = "hf_Zq8kR2mW7xT4vN9pL3sY6bC1dF5gH0jK"


@pytest.fixture
def job(tmp_path):
    """A job stand-in of 3 ranks on this machine, rank 1 the odd one, as a Slurm job of an id of its own
    (tests running side by side, on this machine, must not find each other's ranks)."""
    job_id = str(os.getpid() * 100 + random.randint(0, 99))
    env = dict(os.environ, SLURM_JOB_ID=job_id, SLURMD_NODENAME="node-a", HF_TOKEN=SECRET,
               GPUDIRECT_REGISTRY_PASSWORD=SECRET, TORCH_NCCL_DEBUG_INFO_TEMP_FILE=str(tmp_path / "fr_"))
    env.pop("SLURM_JOB_NODELIST", None)
    out = open(str(tmp_path / "job.out"), "w")
    proc = subprocess.Popen([sys.executable, JOB, "--ranks-per-node", "3", "--odd-rank", "1",
                             "--diag-fail-rank", "2", "--ras-port", "0"], env=env, stdout=subprocess.PIPE,
                            stderr=out, universal_newlines=True, start_new_session=True)
    # the launcher's line, and each worker's NCCL DIAG line (printed before it blocks), in any order
    started, lines = None, []
    while started is None or len(lines) < 3:
        line = proc.stdout.readline()
        if line.startswith("{"):
            started = json.loads(line)
        else:
            lines.append(line)
    with open(str(tmp_path / "job.out"), "a") as handle:
        handle.writelines(lines)
    yield dict(started, out=str(tmp_path / "job.out"), dir=tmp_path, id=job_id)
    os.killpg(proc.pid, signal.SIGTERM)  # the launcher and its workers
    proc.wait(timeout=10)
    out.close()


@pytest.mark.skipif(not os.path.exists(PY_SPY), reason="py-spy is in requirements-dev.txt")
def test_one_pass_names_the_odd_rank_dumps_every_rank_and_writes_no_secret(job, capsys):
    dest = job["dir"] / "ev"
    result = run(nccl_job_evidence, {"job": job["id"], "node": "node-a", "port": job["ras_port"], "watch_s": 1,
                                     "interval_s": 0.25, "py_spy": PY_SPY, "dest": str(dest),
                                     "output_files": [job["out"]]}, capsys)
    assert result["changed"] and result["ras"]["state"] == "hang", result["msg"]
    assert [(o["rank"], o["node"]) for o in result["ras"]["odd_ranks"]] == [(1, "node-a")]
    assert [(r["rank"], r["frame"]) for r in result["ranks"]] == [
        (0, "stand_in_nccl_all_reduce"), (1, "stand_in_forward_step"), (2, "stand_in_nccl_all_reduce")]
    assert result["parts"]["stacks"]["ok"] and result["parts"]["flight_recorder"]["ok"]
    assert [f["severity"] for f in result["findings"] if f["component"] == "fabric"] == ["fail"]
    with tarfile.open(result["archive"]) as tar:
        names = tar.getnames()
        written = b"".join(tar.extractfile(m).read() for m in tar.getmembers() if m.isfile())
    assert any(n.endswith("stacks/rank-1.txt") for n in names) and any(n.endswith("manifest.json") for n in names)
    assert SECRET.encode() not in written and b"GPUDIRECT_REGISTRY_PASSWORD=********" in written
    assert oct(os.stat(result["archive"]).st_mode & 0o777) == "0o600" and os.listdir(str(dest)) == [
        os.path.basename(result["archive"])]


def test_check_mode_reads_the_job_and_writes_nothing(job, capsys):
    dest = job["dir"] / "ev"
    result = run(nccl_job_evidence, {"job": job["id"], "node": "node-a", "port": job["ras_port"], "watch_s": 0,
                                     "py_spy": "/nonexistent/py-spy", "dest": str(dest)}, capsys, check_mode=True)
    assert not result["changed"] and result["archive"] is None and not dest.exists()
    assert [r["rank"] for r in result["ranks"]] == [0, 1, 2]
    assert "py-spy not found" in result["parts"]["stacks"]["reasons"][0]


@pytest.mark.parametrize("args,message", [
    ({"job": "42; rm -rf /"}, "job '42; rm -rf /' is not a Slurm job id"),
    ({"interval_s": 0}, "interval_s must be above 0, not 0.0"),
    ({"inspector_dir": "/nonexistent"}, "inspector_dir /nonexistent is not a directory"),
])
def test_bad_options_are_one_line(args, message, capsys):
    result = run(nccl_job_evidence, dict({"node": "n"}, **args), capsys)
    assert result["failed"] and result["msg"] == "nccl_job_evidence: " + message


def _stamped(monkeypatch, stamp="20260101T000000"):
    real = nccl_job_evidence.time.strftime
    monkeypatch.setattr(nccl_job_evidence.time, "strftime",
                        lambda fmt, *a: stamp if fmt == "%Y%m%dT%H%M%S" else real(fmt, *a))
    return stamp


def test_a_symlink_at_the_archives_name_is_never_written_through(job, capsys, monkeypatch):
    dest, victim = job["dir"] / "ev", job["dir"] / "victim"
    dest.mkdir(mode=0o700)
    victim.write_text(u"kept\n")
    stamp = _stamped(monkeypatch)
    os.symlink(str(victim), str(dest / ("job-%s-node-a-%s.tar.gz" % (job["id"], stamp))))
    result = run(nccl_job_evidence, {"job": job["id"], "node": "node-a", "port": job["ras_port"], "watch_s": 0,
                                     "py_spy": "/nonexistent/py-spy", "dest": str(dest)}, capsys)
    assert victim.read_text() == u"kept\n"
    assert "\n" not in result["msg"] and (result.get("failed") or not os.path.islink(result["archive"]))


@pytest.mark.parametrize("shape", ["symlink", "writable"])
def test_a_destination_others_can_redirect_is_refused_in_one_line(shape, job, capsys):
    dest, elsewhere = job["dir"] / "ev", job["dir"] / "elsewhere"
    elsewhere.mkdir()
    if shape == "symlink":
        os.symlink(str(elsewhere), str(dest))
        try:
            os.lchown(str(dest), 65534, 65534)  # someone else's (as root, root's own would be trusted)
        except OSError:
            pass
    else:
        dest.mkdir()
        os.chmod(str(dest), 0o777)  # writable by all, without the sticky bit
    result = run(nccl_job_evidence, {"job": job["id"], "node": "node-a", "port": job["ras_port"], "watch_s": 0,
                                     "py_spy": "/nonexistent/py-spy", "dest": str(dest)}, capsys)
    assert result.get("failed") and "\n" not in result["msg"] and str(dest) in result["msg"], result["msg"]
    assert os.listdir(str(elsewhere)) == [] and (shape == "symlink" or os.listdir(str(dest)) == [])


def test_a_shared_sticky_directory_gets_a_private_archive(job, capsys):
    dest = job["dir"] / "shared"
    dest.mkdir()
    os.chmod(str(dest), 0o1777)
    result = run(nccl_job_evidence, {"job": job["id"], "node": "node-a", "port": job["ras_port"], "watch_s": 0,
                                     "py_spy": "/nonexistent/py-spy", "dest": str(dest)}, capsys)
    assert result["changed"] and os.path.dirname(result["archive"]) == str(dest)
    assert oct(os.stat(result["archive"]).st_mode & 0o777) == "0o600" and os.listdir(str(dest)) == [
        os.path.basename(result["archive"])]


def test_a_hung_scontrol_is_given_up_on_within_the_command_deadline(tmp_path, capsys, monkeypatch):
    """slurmd that no longer answers: scontrol waits on it for ever. Each call has command_timeout_s."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "scontrol").write_text(u"#!/bin/sh\nexec sleep 60\n")
    (bindir / "scontrol").chmod(0o755)
    monkeypatch.setenv("PATH", "%s:%s" % (bindir, os.environ["PATH"]))
    started = time.monotonic()
    result = run(nccl_job_evidence, {"job": "4242", "node": "node-a", "port": 1, "watch_s": 0, "command_timeout_s": 1,
                                     "py_spy": "/nonexistent/py-spy", "dest": str(tmp_path / "ev")}, capsys)
    assert time.monotonic() - started < 10, result
    assert not result.get("failed"), result["msg"]
    assert "scontrol show job 4242: scontrol did not finish within 1s: killed" in result["parts"]["slurm"]["reasons"]
