# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/sandbox/awx_slices.py: AWX's host split and the checks of a sliced run."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tests", "sandbox"))

import awx_slices  # noqa: E402  pylint: disable=wrong-import-position

NODES = ["n%d" % i for i in range(5)]


def test_slices_take_every_nth_host_in_name_order_and_cover_each_once():
    names = ["c", "a", "e", "b", "d"]
    assert awx_slices.slice_hosts(names, 1, 3) == ["a", "d"]
    assert awx_slices.slice_hosts(names, 2, 3) == ["b", "e"]
    assert awx_slices.slice_hosts(names, 3, 3) == ["c"]
    for count in range(1, 6):
        got = [h for k in range(1, count + 1) for h in awx_slices.slice_hosts(names, k, count)]
        assert sorted(got) == sorted(names)
    with pytest.raises(ValueError):
        awx_slices.slice_hosts(names, 4, 3)


def test_a_slice_inventory_holds_only_its_hosts_and_keeps_the_groups():
    inventory = {"_meta": {"hostvars": {h: {"x": h} for h in NODES}},
                 "all": {"children": ["ungrouped", "gpu_nodes"]},
                 "gpu_nodes": {"hosts": NODES, "vars": {"v": 1}}}
    cut = awx_slices.slice_inventory(inventory, ["n1", "n4"])
    assert cut["gpu_nodes"] == {"hosts": ["n1", "n4"], "vars": {"v": 1}}
    assert sorted(cut["_meta"]["hostvars"]) == ["n1", "n4"]
    assert cut["all"] == {"children": ["ungrouped", "gpu_nodes"]}
    assert inventory["gpu_nodes"]["hosts"] == NODES


def _job(name, hosts, finished=None, **kw):
    job = {"job": name, "hosts": hosts, "status": "successful", "rc": 0, "processed": hosts,
           "failures": [], "dark": [], "finished": hosts if finished is None else finished, "proved": hosts}
    job.update(kw)
    return job


def test_a_clean_sliced_run_has_no_problem():
    # the report's summary play runs on the controller in every job
    slices = [_job("s1", ["n0", "n3"], processed=["localhost", "n0", "n3"]), _job("s2", ["n1", "n4"]),
              _job("s3", ["n2"])]
    assert awx_slices.problems(NODES, slices, _job("unsliced", NODES, processed=NODES + ["localhost"])) == []


def test_every_broken_promise_is_one_line_naming_the_node_or_job():
    slices = [_job("s1", ["n0", "n3"], finished=["n0", "n3", "n1"]),
              _job("s2", ["n1", "n4"], finished=["n1"], status="failed", rc=2, failures=["n4"]),
              _job("s3", ["n2"], processed=["n2", "n0"], finished=[])]
    found = awx_slices.problems(NODES, slices, _job("unsliced", NODES, processed=NODES[:4], dark=["n4"],
                                                    proved=["n0", "n1", "n3"]))
    assert "s2: status failed, rc 2" in found
    assert "s3: ran on n0, outside its slice" in found
    assert "n1: configured by 2 slice(s) (s1, s2), not exactly one" in found
    assert "n2: configured by 0 slice(s) (none), not exactly one" in found
    assert "n4: configured by 0 slice(s) (none), not exactly one" in found
    assert "unsliced: never saw n4" in found
    assert "s2: failed or unreachable: n4" in found
    assert "unsliced: failed or unreachable: n4" in found
    # n4 was never seen, which says it already
    assert "unsliced: never proved the GPU NICs of n2" in found
    assert len(found) == 9


def test_the_nodes_the_last_configuration_play_recorded_count_as_configured():
    last = awx_slices.LAST_TASK

    def record(play, phases):
        return {"event": "runner_on_ok", "event_data": {"play": play, "host": "n0", "task": last,
                                                        "res": {"ansible_facts": {"gpudirect_phases_done": phases}}}}
    events = [
        record("Phase rxdm - run", {"gpu_host": ["n0", "n1", "n2"], "rxdm": ["n0", "n1", "n2"]}),
        # n2 failed in the last phase: the record leaves it out
        record("Phase nccl_profile - write", {"rxdm": ["n0", "n1", "n2"], "nccl_profile": ["n0", "n1"]}),
        {"event": "runner_on_failed", "event_data": {"play": "Phase nccl_profile - write", "host": "n2", "task": "x"}},
        {"event": "playbook_on_stats", "event_data": {}},
    ]
    assert awx_slices.finished_last_phase(events) == ["n0", "n1"]
    assert awx_slices.finished_last_phase(events[:1]) == []


def test_only_the_readiness_phase_proofs_count():
    def proof(play, host, event="runner_on_ok", task=awx_slices.PROOF_TASK):
        return {"event": event, "event_data": {"play": play, "host": host, "task": task}}
    events = [
        proof("Phase readiness - prove every node is ready for NCCL", "n1"),
        proof("Phase readiness - prove every node is ready for NCCL", "n0"),
        # a proof of the gpu_network phase, a failed one, another task
        proof("Phase gpu_network - GPU NIC MTU", "n2"),
        proof("Phase readiness - prove every node is ready for NCCL", "n3", event="runner_on_failed"),
        proof("Phase readiness - prove every node is ready for NCCL", "n4", task="Check that RxDM is ready"),
    ]
    assert awx_slices.proved_nics(events) == ["n0", "n1"]
    assert awx_slices.proved_nics([]) == []
