# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The job evidence summary: the odd rank and its node from every node's result."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import random

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import job_summary

NODES = ["a3m-%d" % n for n in range(4)]
HANG = {"component": "job", "subject": "a3m-2 (10.0.0.4)", "severity": "fail",
        "cause": "communicator 0x5eed (8 ranks) of job 4242 hangs: no rank issued a collective for 10 s, and rank 5 "
                 "on a3m-2 (10.0.0.4) issued AllReduce 41 where the others reached 42"}


def node_result(index, odd_rank=5, frame_of=None, inspector=None, diag=None):
    ranks = [{"rank": 2 * index + local, "local_rank": local, "pid": 100 + local, "flight_recorder": 1,
              "frame": (frame_of or {}).get(2 * index + local, "ncclAllReduce")} for local in range(2)]
    return {"node": NODES[index], "job": "4242", "archive": "/var/tmp/x.tar.gz", "processes": 3, "ranks": ranks,
            "ras": {"state": "hang", "odd_ranks": [{"comm": "0x5eed", "rank": odd_rank, "host": "10.0.0.4",
                                                    "node": "a3m-2", "counts": {"AllReduce": 41},
                                                    "behind": "AllReduce 41 where the others reached 42"}]},
            "verdicts": [{"kind": "hang", "comm": "0x5eed", "ranks": [odd_rank], "hosts": ["10.0.0.4"]}],
            "findings": [dict(HANG)] + (diag or []), "xids": [], "masked": 2, "inspector": inspector,
            "parts": {"stacks": {"ok": True, "files": ["stacks/rank-0.txt"], "reasons": []},
                      "gpus": {"ok": False, "files": [], "reasons": ["nvidia-smi not found on the node"]}}}


DIAG = {"component": "fabric", "subject": "a3m-2 (pid 4405)", "severity": "fail",
        "cause": "NCCL DIAG on a3m-2 (pid 4405): network check FAILED (in /home/u/job.out)"}


def test_the_odd_rank_is_named_once_with_its_node_from_ras_and_from_its_stack():
    frames = {5: "forward_step"}
    # the job's output is on a shared file system: every node read the same NCCL DIAG line
    results = dict((host, node_result(i, frame_of=frames, diag=[DIAG])) for i, host in enumerate(NODES))
    summary = job_summary.summarize(results, NODES)
    assert summary["job"] == "4242" and summary["hung"] is True
    assert [(o["rank"], o["node"]) for o in summary["odd_ranks"]] == [(5, "a3m-2")]
    assert summary["odd_stacks"] == [{"rank": 5, "node": "a3m-2", "frame": "forward_step", "others_in": "ncclAllReduce"}]
    assert summary["headline"].startswith("rank 5 on a3m-2 is the odd one in communicator 0x5eed, which hangs: "
                                          "it issued AllReduce 41 where the others reached 42")
    assert "rank 5 on a3m-2 stands in forward_step while the others are in ncclAllReduce" in summary["headline"]
    # every node returned RAS's verdict: it is one finding, about the job
    assert [(f["component"], f["host"]) for f in summary["findings"]] == [("job", None), ("fabric", "a3m-0")]
    assert summary["nodes"][0]["lacking"] == {"gpus": ["nvidia-smi not found on the node"]}


def test_a_node_without_a_result_is_listed_with_why_and_costs_no_other():
    results = {NODES[0]: node_result(0), NODES[1]: {"failed": True, "msg": "Gather: dest is a file"}}
    summary = job_summary.summarize(results, NODES[:3])
    assert [(n["host"], n["gathered"]) for n in summary["nodes"]] == [
        ("a3m-0", True), ("a3m-1", False), ("a3m-2", False)]
    assert summary["nodes"][1]["reason"] == "Gather: dest is a file"
    assert summary["nodes"][2]["reason"] == "no result (the node did not answer)"
    assert [o["rank"] for o in summary["odd_ranks"]] == [5]


def test_a_straggler_among_the_jobs_nodes_is_named_from_inspector_bandwidth():
    rng = random.Random(7)
    hosts = ["a3m-%d" % n for n in range(16)]
    results = {}
    for index, host in enumerate(hosts):
        gbs = 180.0 * (0.7 if host == "a3m-11" else rng.uniform(0.9, 1.1))
        row = {"job": "4242", "comm": "DP 0", "collective": "AllReduce", "message_size": "4-5GB", "gbs": gbs}
        results[host] = dict(node_result(0), node=host, inspector=[row])
    summary = job_summary.summarize(results, hosts)
    assert [(s["node"], s["collective"]) for s in summary["stragglers"]] == [("a3m-11", "AllReduce")]
    assert 0.6 < summary["stragglers"][0]["ratio"] < 0.8
    assert [f["subject"] for f in summary["findings"] if "straggler" in f["cause"]] == ["a3m-11"]


def test_nothing_odd_says_so_and_the_page_says_where_stand_ins_gave_the_evidence():
    result = node_result(0)
    result["ras"] = {"state": "ok", "odd_ranks": []}
    result["verdicts"], result["findings"] = [], []
    summary = job_summary.summarize({NODES[0]: result}, NODES[:1])
    assert summary["headline"].startswith("no rank stands out") and summary["hung"] is False
    summary["standins"] = True
    page = job_summary.text(summary)
    assert "STAND-IN" in page and "| a3m-0 | 0 1 | ok | yes | gpus: nvidia-smi not found on the node |" in page
