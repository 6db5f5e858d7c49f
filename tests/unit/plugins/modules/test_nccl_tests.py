# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl_tests and nccl_tests_report run as modules."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.gpudirect.gcp.plugins.modules import nccl_tests, nccl_tests_report
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.nccl_tests.test_nccl_runner import (
    STANDIN_BIN, nodes, replay)
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules._module_args import patch_module_args


def run(module, args, capsys, check_mode=False, **kw):
    if check_mode:
        args = dict(args, _ansible_check_mode=True)
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            (module.run_module(**kw) if hasattr(module, "run_module") else module.main())
    return json.loads(capsys.readouterr().out)


def test_pairwise_module_uses_table_defaults_and_env_file(tmp_path, capsys):
    envf = tmp_path / "nccl.env"
    envf.write_text("NCCL_FASTRAK_IFNAME=eth1,eth2\n")
    out = run(nccl_tests, {"family": "a3-mega", "hosts": nodes(4), "mode": "pairwise", "binary_dir": STANDIN_BIN,
                           "env_file": str(envf), "mpirun": "/usr/bin/true"}, capsys,
              executor=replay(["node1"]), euid=0)
    assert out["changed"] is False and out["bad_nodes"] == ["node1"] and out["verdict"] == "fail"
    cmd = out["commands"][0]
    assert "--allow-run-as-root" in cmd and "NCCL_FASTRAK_IFNAME=eth1,eth2" in cmd
    # a3-mega defaults from the family table: 8 slots, -b 8M -e 8G, -w 5 -n 200
    assert cmd[cmd.index("-b") + 1] == "8M" and cmd[cmd.index("-w") + 1] == "5"
    assert cmd[cmd.index("-n", cmd.index("-b")) + 1] == "200"
    assert "ppr:8:node" in cmd
    # the role runs the module as an async task: none of the keys of Ansible's async status (before 2.19 the
    # poller reads the module's own "finished" and fails on a time stamp)
    assert {"started", "finished", "ansible_job_id", "results_file"} & set(out) == set()
    assert out["started_at"] <= out["finished_at"]


def test_check_mode_returns_commands(capsys):
    out = run(nccl_tests, {"family": "a3-mega", "hosts": nodes(2), "binary_dir": "/nowhere"}, capsys,
              check_mode=True, euid=1000)
    assert out["verdict"] is None and "--allow-run-as-root" not in out["commands"][0]


@pytest.mark.parametrize("args,msg", [
    ({"family": "h100"}, "family: unknown GPU family 'h100'"),
    ({"hosts": [{"address": "1.2.3.4"}]}, "hosts[0] needs a name"),
    ({"threshold": 90}, "threshold must be a fraction"),
    ({"binary_dir": "/nowhere", "mpirun": "/usr/bin/true"}, "nccl-tests binary not found"),
    ({"mode": "pairwise", "hosts": nodes(1), "mpirun": "/usr/bin/true"}, "needs at least 2 nodes"),
    ({"mpirun": "no-such-mpirun-here"}, "mpirun: 'no-such-mpirun-here' not found"),
    ({"gpus_per_rank": 3}, "gpus_per_rank must divide the node's 8 GPUs (slots), got 3"),
    ({"gpus_per_rank": 0}, "gpus_per_rank must divide the node's 8 GPUs (slots), got 0"),
])
def test_bad_input_is_one_line(args, msg, capsys):
    base = {"family": "a3-mega", "hosts": nodes(2), "binary_dir": STANDIN_BIN}
    out = run(nccl_tests, dict(base, **args), capsys, executor=replay([]))
    assert out["failed"] is True and msg in out["msg"] and "\n" not in out["msg"]


def test_report_module_writes_three_files(tmp_path, capsys):
    res = run(nccl_tests, {"family": "a3-mega", "hosts": nodes(4), "mode": "pairwise", "binary_dir": STANDIN_BIN,
                           "mpirun": "/usr/bin/true"}, capsys, executor=replay(["node3"]), euid=0)
    args = {"result": res, "dest": str(tmp_path), "run_id": "20260101T000000Z"}
    out = run(nccl_tests_report, args, capsys, check_mode=True)
    assert out["changed"] is True and not os.path.exists(out["run_dir"])
    out = run(nccl_tests_report, args, capsys)
    assert out["changed"] is True and out["summary"]["bad_nodes"] == ["node3"]
    for path in out["files"].values():
        assert os.path.getsize(path) > 200
    assert json.load(open(out["files"]["json"]))["verdict"] == "fail"
    out = run(nccl_tests_report, args, capsys)
    assert out["changed"] is False
    out = run(nccl_tests_report, dict(args, run_id="../x"), capsys)
    assert out["failed"] and "run_id" in out["msg"]


def test_mpirun_runs_as_the_mpi_user_with_a_hostfile_it_can_read(capsys):
    seen = []
    inner = replay([])

    def executor(job_lists, timeout):
        for jobs in job_lists:
            for job in jobs:
                seen.append(oct(os.stat(job.hostfile).st_mode & 0o777))
        return inner(job_lists, timeout)

    out = run(nccl_tests, {"family": "a3-mega", "hosts": nodes(2), "binary_dir": STANDIN_BIN,
                           "mpirun": "/usr/bin/true", "run_as": "gpudirect-mpi"}, capsys, executor=executor, euid=0)
    cmd = out["commands"][0]
    assert cmd[1:4] == ["-u", "gpudirect-mpi", "--"] and os.path.basename(cmd[0]) == "runuser"
    assert cmd[4] == "/usr/bin/true" and "--allow-run-as-root" not in cmd
    assert seen and set(seen) == {"0o644"}


def test_mpirun_as_root_is_the_option_that_says_so(capsys):
    out = run(nccl_tests, {"family": "a3-mega", "hosts": nodes(2), "binary_dir": "/nowhere", "run_as": "root"},
              capsys, check_mode=True, euid=0)
    assert out["commands"][0][:2] == ["mpirun", "--allow-run-as-root"]


def test_run_as_another_user_needs_root(capsys):
    out = run(nccl_tests, {"family": "a3-mega", "hosts": nodes(2), "binary_dir": "/nowhere", "run_as": "gpudirect-mpi"},
              capsys, check_mode=True, euid=1000)
    assert out["failed"] and out["msg"] == ("run_as: mpirun can run as gpudirect-mpi only when the module runs as root "
                                            "(become: true)")


def test_the_module_result_keeps_no_credential(capsys):
    """The environment, every command line, each run's output and the environment NCCL echoed, masked."""
    inner = replay([])
    seen = []

    def executor(job_lists, timeout):
        inner(job_lists, timeout)
        for jobs in job_lists:
            for job in jobs:
                seen.append(list(job.argv))
                job.output = ("h:1:1 [0] NCCL INFO NCCL_STORE set by environment to https://u:pw-echoed@h/x.\n"
                              "Error: upload to https://u:pw-output@h/x failed, HF_TOKEN=hf-output\n" + job.output)

    out = run(nccl_tests, {"family": "a3-mega", "hosts": nodes(2), "binary_dir": STANDIN_BIN, "mpirun": "/usr/bin/true",
                           "env": {"HF_TOKEN": "hf-env", "NCCL_STORE": "https://u:pw-env@h/x"}}, capsys,
              executor=executor, euid=0)
    # mpirun got the real values; the result shows none of them
    assert any("HF_TOKEN=hf-env" in argv for argv in seen)
    flat = json.dumps(out)
    for secret in ("hf-env", "pw-env", "pw-echoed", "pw-output", "hf-output"):
        assert secret not in flat, flat[max(flat.find(secret) - 200, 0):flat.find(secret) + 20]
    assert out["env"] == {"HF_TOKEN": "********", "NCCL_STORE": "https://u:********@h/x"}
    assert "HF_TOKEN=********" in out["commands"][0] and "HF_TOKEN=********" in out["runs"][0]["command"]
    assert out["nccl_env"]["effective"]["NCCL_STORE"]["value"] == "https://u:********@h/x"
