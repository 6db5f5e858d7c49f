# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A slow GPU inside an otherwise healthy node: the node's median hides it from the cross-node
judgment, so each node's GPUs are judged against each other too, without alarms from ordinary spread."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import random

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_inspector as ni
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.job.test_nccl_inspector import inspector_file


def gpu_file(node, values):
    text = ""
    for gpu, value in enumerate(values):
        one = inspector_file(node, bandwidth=value, gpus=1).replace('gpu="GPU0"', 'gpu="GPU%d"' % gpu)
        text += one
    return text


def test_one_gpu_at_0_6_of_its_node_is_named_while_the_node_median_stays_healthy(tmp_path):
    samples, skipped = ni.parse(gpu_file("a3u-3", [180.0] * 7 + [108.0]))
    assert skipped == 0
    assert ni.node_bandwidths(samples)[("4242", "DP Group 0", "AllReduce", "4-5GB")] == 180.0
    assert ni.slow_gpus(samples) == [{"job": "4242", "comm": "DP Group 0", "collective": "AllReduce",
                                      "message_size": "4-5GB", "gpu": "GPU7", "gbs": 108.0, "ratio": 0.6}]
    (tmp_path / "nccl_inspector_metrics_a.prom").write_text(gpu_file("a3u-3", [180.0] * 7 + [108.0]))
    read = ni.read_dir(str(tmp_path), stale_s=120)
    assert [(g["gpu"], g["ratio"]) for g in read["slow_gpus"]] == [("GPU7", 0.6)]


def test_ordinary_per_gpu_spread_raises_no_alarm_over_500_intervals():
    # the GPUs of one collective finish together: a few percent apart
    rng = random.Random(9)
    alarms = []
    for _interval in range(500):
        values = [180.0 * rng.uniform(0.95, 1.05) for _gpu in range(8)]
        alarms += ni.slow_gpus(ni.parse(gpu_file("n", values))[0])
    assert alarms == []


def test_too_few_gpus_are_not_judged():
    assert ni.slow_gpus(ni.parse(gpu_file("n", [180.0, 180.0, 60.0]))[0]) == []


def test_a_gpu_whose_own_rail_group_is_slow_is_named_against_the_other_gpus_groups():
    text = ""
    for gpu in range(8):
        one = inspector_file("a3u-3", bandwidth=100.0 if gpu == 5 else 180.0, gpus=1, comm="DP Group %d" % gpu)
        text += one.replace('gpu="GPU0"', 'gpu="GPU%d"' % gpu)
    found = ni.slow_gpus(ni.parse(text)[0])
    assert [(g["gpu"], g["comm"], g["ratio"]) for g in found] == [("GPU5", "DP Group 5", 0.556)]
