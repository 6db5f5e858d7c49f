# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hang where every rank waits in the same collective: the counts agree and stop, and the job's GPUs
spin (NCCL's kernels poll for data that never comes). Told from the idle phases that also stop the
counts (checkpointing and data loading leave the GPUs idle; evaluation keeps them computing at full
power), over the real RAS stand-in and over scripted polls."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_ras
from ansible_collections.gpudirect.gcp.tests.unit.standins.ras_standin import (  # noqa: F401 pylint: disable=unused-import
    ras)

SPIN = {"state": "spin", "gpus": [0, 1], "detail": "GPUs 0, 1 at 100% utilization and 18% of the power limit"}
COMPUTE = {"state": "compute", "gpus": [0, 1], "detail": "GPUs 0, 1 at 100% utilization and 91% of the power limit"}
IDLE = {"state": "idle", "gpus": [0, 1], "detail": "GPU 0 at 0% utilization"}


def _comm(counts, comm="0xa", secondary=None, first_pid=0, missing=()):
    out = {"hash": comm, "size": len(counts) + len(missing), "missing": list(missing),
           "ranks": [{"rank": n, "host": "10.0.0.%d" % n, "pid": first_pid + n, "cuda_dev": 0,
                      "counts": {"AllReduce": c, "AllGather": 3}, "error": 0, "init": 0, "aborted": False}
                     for n, c in enumerate(counts)]}
    if secondary is not None:
        out["secondary"] = secondary
    out["key"] = nccl_ras.comm_key(out)
    return out


def test_every_rank_waiting_in_one_collective_while_the_gpus_spin_is_named(ras):
    port = ras(hang_at=0.0)  # every rank issued the same collectives, and none issues another
    watch = nccl_ras.HangWatch(threshold_s=0.5)
    first = time.monotonic()
    assert watch.observe(first, nccl_ras.snapshot(nccl_ras.status(port=port)), job="77", activity=SPIN) == []
    verdicts = watch.observe(first + 0.6, nccl_ras.snapshot(nccl_ras.status(port=port)), job="77", activity=SPIN)
    assert [(v["kind"], v["comm"], v["job"]) for v in verdicts] == [("stuck", "0x7f3a", "77")]
    cause = verdicts[0]["finding"]["cause"]
    assert "every rank issued AllReduce 1 and none issued another" in cause and "AllGather" not in cause
    assert "spin" in cause and "GPUs 0, 1" in cause
    assert verdicts[0]["finding"]["severity"] == "fail"


def test_long_idle_and_evaluation_phases_raise_no_alarm():
    """Ten hours of a job that pauses its collectives for an hour at a time (checkpoints with idle GPUs,
    evaluation with computing GPUs, a GPU sample lost now and then, one odd busy sample amid idle) with a
    10-minute threshold: not one verdict."""
    watch = nccl_ras.HangWatch(threshold_s=600)
    verdicts, count, now = [], 0, 0.0
    phases = [IDLE, COMPUTE, None, IDLE, SPIN, IDLE, COMPUTE]
    for hour in range(10):
        count += 100  # an hour's training moves the counts
        for poll in range(360):
            now += 10
            activity = phases[(hour + poll // 40) % len(phases)]
            if activity is SPIN and poll % 40 > 2:
                activity = IDLE  # a spin-looking sample or three, never for the threshold
            verdicts += watch.observe(now, [_comm([count] * 4)], activity=activity)
    assert verdicts == []


def test_a_spin_that_lasts_is_a_hang_but_one_computing_sample_restarts_its_clock():
    watch = nccl_ras.HangWatch(threshold_s=600)
    assert watch.observe(0, [_comm([9] * 4)], activity=SPIN) == []
    assert watch.observe(590, [_comm([9] * 4)], activity=COMPUTE) == []
    assert watch.observe(1000, [_comm([9] * 4)], activity=SPIN) == []
    assert [v["kind"] for v in watch.observe(1600, [_comm([9] * 4)], activity=SPIN)] == ["stuck"]


def test_a_lost_gpu_sample_neither_starts_nor_stops_the_spin_clock():
    watch = nccl_ras.HangWatch(threshold_s=600)
    watch.observe(0, [_comm([9] * 4)], activity=SPIN)
    assert watch.observe(300, [_comm([9] * 4)], activity=None) == []
    assert [v["kind"] for v in watch.observe(600, [_comm([9] * 4)], activity=SPIN)] == ["stuck"]


def test_without_gpu_evidence_agreeing_counts_are_never_a_hang():
    watch = nccl_ras.HangWatch(threshold_s=10)
    assert watch.observe(0, [_comm([5] * 4)]) == [] and watch.observe(1000, [_comm([5] * 4)]) == []


def test_the_stuck_collective_names_the_rank_it_waits_on_where_ras_cannot_reach_it():
    gone = {"rank": 4, "host": "10.0.0.9", "pid": 99, "dead": False, "unresponsive": True}
    watch = nccl_ras.HangWatch(threshold_s=10, names={"10.0.0.9": "a3u-node-9"})
    watch.observe(0, [_comm([5] * 4, missing=[gone])], activity=SPIN)
    stuck = [v for v in watch.observe(20, [_comm([5] * 4, missing=[gone])], activity=SPIN) if v["kind"] == "stuck"]
    assert "it waits on rank 4 on a3u-node-9 (10.0.0.9)" in stuck[0]["finding"]["cause"]


def test_communicators_sharing_a_hash_are_told_apart():
    """Two communicators with one hash (NCCL's hash is of the unique id, which a job may reuse) keep a
    clock each: one at work does not hide the other's hang, nor restart it."""
    watch = nccl_ras.HangWatch(threshold_s=10)
    for now in range(0, 30, 5):
        moving = _comm([now, now, now], secondary="0x1:0x2", first_pid=100)
        stalled = _comm([7, 7, 6], secondary="0x3:0x4", first_pid=200)
        verdicts = watch.observe(now, [moving, stalled])
    assert [(v["kind"], v["ranks"]) for v in verdicts] == [("hang", [2])]
    assert nccl_ras.comm_key(moving) != nccl_ras.comm_key(stalled)


def test_a_split_with_no_majority_names_the_side_that_is_behind():
    for counts, behind in (([8, 8, 7, 7], [2, 3]), ([7, 7, 8, 8], [0, 1]), ([5, 6, 7], [0, 1])):
        watch = nccl_ras.HangWatch(threshold_s=10)
        watch.observe(0, [_comm(counts)])
        verdicts = watch.observe(10, [_comm(counts)])
        assert verdicts[0]["ranks"] == behind, counts


def test_the_status_gives_each_communicator_a_key_from_all_nccl_gives():
    doc = {"communicators": [
        {"hash": "0xa", "secondary_hash": "0x1:0x2", "size": 1,
         "ranks": [{"rank": 0, "host": "10.0.0.1", "pid": 10}], "missing_ranks": []},
        {"hash": "0xa", "secondary_hash": "0x3:0x4", "size": 1,
         "ranks": [{"rank": 0, "host": "10.0.0.1", "pid": 10}], "missing_ranks": []}]}
    keys = [comm["key"] for comm in nccl_ras.snapshot(doc)]
    assert len(set(keys)) == 2
