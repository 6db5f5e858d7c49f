# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nccl_tests role's launch (entry run.yml, after what preflight left), run by ansible-playbook on two
local hosts: mpirun is a stand-in that logs each run and prints a real nccl-tests output, nvidia-smi prints a
real capture per node, scontrol logs what it is asked. Each collective's sweep is a run of its own with the
tested nodes read again before it; a node that became busy stops the sweeps, is named with its job and counts
as left out. A Slurm reservation, where asked, holds the nodes (no ignore_jobs) and is deleted after, also
when the run fails; without Slurm on the nodes the run says so and tests without one."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import os

from ansible_collections.gpudirect.gcp.tests.unit.roles import _job_stand_ins as stand_ins

OUTPUT = os.path.join(stand_ins.ROOT, "tests", "fixtures", "nccl", "a3-mega_all_gather_2node_dstack.txt")

PLAY = """
- name: NCCL tests launch
  hosts: gpu_nodes
  gather_facts: false
  environment:
    STANDIN_HOST: "{{ inventory_hostname }}"
  tasks:
    - name: What preflight and the set-up left
      ansible.builtin.set_fact:
        _nccl_tests_run_hosts: [{name: n0, address: 127.0.0.1}, {name: n1, address: 127.0.0.2}]
        _nccl_tests_needed: 2
        _nccl_tests_launcher: n0
        _nccl_tests_bin: "%(bin)s"
        _nccl_tests_control_net: 127.0.0.0/8
        _nccl_tests_left_out: []
        _nccl_tests_busy_findings: []
        _nccl_tests_busy: {state: idle, slurm: %(slurm)s}
        gpudirect_profile: {rxdm: {gpu_processes: [fastrak_gpumem_manager]}}

    - name: The launch, its failure kept
      block:
        - name: Launch
          ansible.builtin.include_role:
            name: gpudirect.gcp.nccl_tests
            tasks_from: run
      rescue:
        - name: Show the failure
          ansible.builtin.debug:
            msg: "failed: {{ ansible_failed_result.msg }}"
          run_once: true

    - name: Show what the run left
      ansible.builtin.debug:
        msg: "left {{ {'result': nccl_tests_result | default(none), 'left_out': _nccl_tests_left_out,
                       'findings': _nccl_tests_busy_findings} | to_json | b64encode }}"
      run_once: true
"""


def setup(tmp_path, busy_after_first=False, scontrol_rc=0):
    bins = stand_ins.bin_dir(tmp_path)
    stand_ins.gpus(tmp_path, stand_ins.IDLE)
    # after its first run, n1's GPUs run a job
    then = 'echo "%s" > "%s"\n' % (stand_ins.BUSY, tmp_path / "smi" / "n1") if busy_after_first else ""
    stand_ins.script(bins / "mpirun", '#!/bin/sh\necho "$@" >> "%s"\ncat "%s"\n%s'
                     % (tmp_path / "mpirun.log", OUTPUT, then))
    # remembers the one reservation it made, and answers for it as scontrol -o show does
    held = tmp_path / "reservation"
    stand_ins.script(bins / "scontrol", '#!/bin/sh\necho "$@" >> "%s"\n'
                     '[ "$1 $2" = "-o show" ] && { cat "%s" 2>/dev/null && exit 0; echo "Reservation $4 not found"; '
                     'exit 1; }\n[ "$2" = reservation ] && [ %d != 0 ] && '
                     '{ echo "Error creating the reservation: Requested nodes are busy" >&2; exit 1; }\n'
                     '[ "$1" = create ] && echo "$3 $4" > "%s"\n[ "$1" = delete ] && rm -f "%s"\nexit 0\n'
                     % (tmp_path / "scontrol.log", held, scontrol_rc, held, held))
    perf = tmp_path / "perf"
    perf.mkdir()
    for coll in ("all_gather", "all_reduce"):
        stand_ins.script(perf / ("%s_perf" % coll), "#!/bin/sh\n")
    return str(perf)


def run(tmp_path, slurm="null", **evars):
    perf = setup(tmp_path, **{k: evars.pop(k) for k in ("busy_after_first", "scontrol_rc") if k in evars})
    play = PLAY % {"bin": perf, "slurm": slurm}
    evars = dict({"gpu_family": "a3-mega", "nccl_tests_collectives": ["all_gather", "all_reduce"],
                  "nccl_tests_mpi_user": "root", "nccl_tests_env_file": str(tmp_path / "no-nccl.env")}, **evars)
    rc, out = stand_ins.run(tmp_path, play, hosts=("n0", "n1"), extra_vars=evars)
    (line,) = [ln for ln in out.splitlines() if '"msg": "left ' in ln]
    left = json.loads(base64.b64decode(line.split('"msg": "left ')[1].split('"')[0]))
    return rc, out, left


def runs(tmp_path):
    log = tmp_path / "mpirun.log"
    return [("all_reduce" if "all_reduce_perf" in ln else "all_gather") for ln in log.read_text().splitlines()] \
        if log.exists() else []


def scontrol(tmp_path):
    """What scontrol was asked to change (its reads left out)."""
    log = tmp_path / "scontrol.log"
    return [c for c in log.read_text().splitlines() if not c.startswith("-o show")] if log.exists() else []


def test_each_collective_is_a_sweep_of_its_own_joined_into_one_result(tmp_path):
    rc, out, left = run(tmp_path)
    assert rc == 0, out
    assert runs(tmp_path) == ["all_gather", "all_reduce"]
    assert sorted(stand_ins.task_results(out, "Read the tested nodes again before the sweep")) == [
        "ok: [n0]", "ok: [n0]", "ok: [n1]", "ok: [n1]"]
    result = left["result"]
    assert [c["collective"] for c in result["collectives"]] == ["all_gather", "all_reduce"]
    assert len(result["runs"]) == 2 and len(result["commands"]) == 2
    assert result["nodes"] == ["n0", "n1"] and result["mode"] == "cluster"
    assert result["verdict"] in ("pass", "fail", "not_judged")
    assert sorted(result["node_table"]) == ["n0", "n1"]
    assert left["left_out"] == [] and "stopped before" not in out


def test_a_node_that_became_busy_stops_the_sweeps_and_is_named(tmp_path):
    rc, out, left = run(tmp_path, busy_after_first=True)
    assert rc == 0, out
    assert runs(tmp_path) == ["all_gather"]
    (line,) = [ln for ln in out.splitlines() if "nccl_tests: stopped before sweep 2 of 2 (all_reduce)" in ln]
    assert "n1 runs a job" in line and stand_ins.JOB in line and "not run: all_reduce" in line
    assert left["left_out"] == ["n1"]
    assert [f["host"] for f in left["findings"]] == ["n1"]
    assert [c["collective"] for c in left["result"]["collectives"]] == ["all_gather"]


def test_pairwise_sweeps_join_rounds_and_nodes(tmp_path):
    rc, out, left = run(tmp_path, nccl_tests_mode="pairwise")
    assert rc == 0, out
    result = left["result"]
    # each sweep: one single-node run per node, then the pair
    assert sorted(runs(tmp_path)) == ["all_gather"] * 3 + ["all_reduce"] * 3
    assert [c["collective"] for c in result["collectives"]] == ["all_gather", "all_reduce"]
    (rnd,) = result["pairwise"]["rounds"]
    (pair,) = rnd
    assert pair["pair"] == ["n0", "n1"] and sorted(pair["busbw_gbps"]) == ["all_gather", "all_reduce"]
    assert sorted(result["pairwise"]["single_node"]["n0"]["busbw_gbps"]) == ["all_gather", "all_reduce"]
    assert result["node_table"]["n0"]["pairs"] == ["round 1: n0+n1 %s" % ("pass" if pair["ok"] else "fail")]


def test_a_slurm_reservation_holds_the_nodes_and_is_deleted_after(tmp_path):
    rc, out, left = run(tmp_path, slurm="{node: 'slurm-{{ inventory_hostname }}', states: [idle], jobs: []}",
                        nccl_tests_slurm_reservation=True, nccl_tests_async_timeout_s=3601)
    assert rc == 0, out
    create, delete = scontrol(tmp_path)
    name = create.split()[2]
    assert name.startswith("ReservationName=gpudirect-nccl-")
    assert create.split()[:2] == ["create", "reservation"]
    assert create.split()[3:] == ["Nodes=slurm-n0,slurm-n1", "StartTime=now", "Duration=61", "Users=root", "Flags=maint"]
    assert "ignore_jobs" not in create
    assert delete.split() == ["delete", name]
    assert runs(tmp_path) == ["all_gather", "all_reduce"]


def test_a_refused_reservation_tests_nothing_in_one_line(tmp_path):
    rc, out, left = run(tmp_path, slurm="{node: 'slurm-{{ inventory_hostname }}', states: [idle], jobs: []}",
                        nccl_tests_slurm_reservation=True, scontrol_rc=1)
    assert runs(tmp_path) == []
    assert [c.split()[0] for c in scontrol(tmp_path)] == ["create"]
    (line,) = [ln for ln in out.splitlines() if '"msg": "failed: ' in ln]
    assert "nccl_tests: not run - Slurm refused the reservation gpudirect-nccl-" in line
    assert "of slurm-n0,slurm-n1: Error creating the reservation: Requested nodes are busy" in line


def test_without_slurm_on_the_nodes_the_run_says_so_and_tests(tmp_path):
    rc, out, left = run(tmp_path, nccl_tests_slurm_reservation=True)
    assert rc == 0, out
    assert scontrol(tmp_path) == []
    assert "nccl_tests: no Slurm reservation: Slurm is not on n0, n1" in out
    assert runs(tmp_path) == ["all_gather", "all_reduce"]
