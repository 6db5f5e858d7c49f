# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The job evidence summary of the hang where every rank waits in one collective: RAS's counts agree,
so no rank is odd, but every rank's stack stands in the same collective."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import job_summary
from ansible_collections.gpudirect.gcp.tests.unit.plugins.plugin_utils.diagnose.test_job_summary import NODES


def agreeing(index, frame="all_reduce", unmoved_s=10.0):
    ranks = [{"rank": 2 * index + local, "local_rank": local, "pid": 100 + local, "flight_recorder": 1,
              "frame": frame} for local in range(2)]
    return {"node": NODES[index], "job": "4242", "archive": "/var/tmp/x.tar.gz", "processes": 3, "ranks": ranks,
            "ras": {"state": "ok", "odd_ranks": [], "unmoved_s": unmoved_s}, "verdicts": [], "findings": [], "xids": [], "masked": 0,
            "inspector": None, "parts": {}}


def test_every_rank_standing_in_one_collective_is_named_as_stuck():
    results = dict((host, agreeing(i)) for i, host in enumerate(NODES))
    summary = job_summary.summarize(results, NODES)
    assert summary["stuck"] == {"frame": "all_reduce", "ranks": 8, "unmoved_s": 10.0} and summary["hung"] is True
    assert summary["headline"].startswith("every rank whose stack was read (8) stands in all_reduce")
    assert [f["severity"] for f in summary["findings"] if f["subject"] == "job 4242"] == ["fail"]


def test_ranks_that_agree_outside_a_collective_are_not_stuck():
    # between steps, in the data loader: the same frame everywhere, and no collective in it
    results = dict((host, agreeing(i, frame="__next__")) for i, host in enumerate(NODES))
    summary = job_summary.summarize(results, NODES)
    assert summary["stuck"] is None and summary["headline"].startswith("no rank stands out")


def test_a_healthy_job_caught_mid_collective_is_not_stuck():
    # every rank in all_reduce at the moment of the dump, but the counts moved while RAS was watched
    results = dict((host, agreeing(i, unmoved_s=0)) for i, host in enumerate(NODES))
    summary = job_summary.summarize(results, NODES)
    assert summary["stuck"] is None and summary["hung"] is False


def test_a_slow_gpu_a_node_reported_is_named_and_a_wrong_shape_costs_only_that_node():
    results = dict((host, agreeing(i, unmoved_s=0)) for i, host in enumerate(NODES))
    results[NODES[2]]["slow_gpus"] = [{"job": "4242", "comm": "DP Group 5", "collective": "AllReduce",
                                       "message_size": "4-5GB", "gpu": "GPU5\nforged", "gbs": 100.0, "ratio": 0.556}]
    results[NODES[3]]["slow_gpus"] = "GPU1"
    summary = job_summary.summarize(results, NODES)
    assert [(g["node"], g["ratio"]) for g in summary["slow_gpus"]] == [(NODES[2], 0.556)]
    assert "\n" not in summary["slow_gpus"][0]["gpu"] and summary["slow_gpus"][0]["gpu"].startswith("GPU5")
    assert "is slow (0.56 of its node's other GPUs)" in summary["headline"] and "\n" not in summary["headline"]
    assert [n["gathered"] for n in summary["nodes"]] == [True, True, True, False]
    assert "evidence field slow_gpus" in summary["nodes"][3]["reason"]
