# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL Inspector's files read as Inspector writes them, and the straggler judged across 16 nodes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import random

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_inspector as ni

NODES = ["a3m-node-%02d" % n for n in range(16)]


def inspector_file(node, job="4242", bandwidth=180.0, gpus=8, comm="DP Group 0", noise=None):
    """One interval of a node's GPUs as Inspector writes it (labels in its order, no HELP, no escaping)."""
    lines = []
    for gpu in range(gpus):
        bw = bandwidth * (1 + noise()) if noise else bandwidth
        labels = ('version="v5.1",slurm_job_id="%s",node="%s",gpu="GPU%d",comm_name="%s",n_nodes="16",'
                  'nranks="128",collective="AllReduce",message_size="4-5GB",algo_proto="RING_SIMPLE"'
                  % (job, node, gpu, comm))
        lines.append("nccl_bus_bandwidth_gbs{%s} %.6g" % (labels, bw))
        lines.append("nccl_collective_exec_time_microseconds{%s} %.6g" % (labels, 4.5e9 / bw / 1e3))
    return "\n".join(lines) + "\n"


def interval(rng, slow=None, factor=0.7, spread=0.10):
    values = {}
    for node in NODES:
        base = 180.0 * (factor if node == slow else 1.0)
        samples, skipped = ni.parse(inspector_file(node, bandwidth=base, noise=lambda: rng.uniform(-spread, spread)))
        assert skipped == 0
        values[node] = ni.node_bandwidths(samples)
    return values


def test_a_file_is_read_label_by_label_and_a_line_cut_short_is_skipped():
    text = inspector_file("n1", comm='odd "name", with comma', gpus=2)
    samples, skipped = ni.parse(text + 'nccl_bus_bandwidth_gbs{version="v5.1",node="n1",gpu="GP')
    assert skipped == 1 and len(samples) == 4
    assert samples[0]["labels"]["comm_name"] == 'odd "name", with comma'
    assert samples[0]["labels"]["message_size"] == "4-5GB" and samples[0]["value"] == 180.0
    assert tuple(samples[0]["labels"]) == ni.LABELS


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "1e400", "fast"])
def test_a_value_that_is_not_a_bandwidth_is_skipped(value):
    line = 'nccl_bus_bandwidth_gbs{slurm_job_id="1",node="n",collective="AllReduce",message_size="1-2MB"} %s' % value
    assert ni.parse(line) == ([], 1)


def test_metrics_inspector_does_not_write_are_skipped_not_trusted():
    assert ni.parse('node_load1{collective="AllReduce"} 3\nnccl_bus_bandwidth_gbs 5\n') == ([], 2)


def test_a_node_0_7_of_its_peers_is_named_in_the_second_interval_with_its_ratio():
    rng, watch = random.Random(7), ni.StragglerWatch()
    assert watch.observe(interval(rng, slow="a3m-node-05")) == []
    verdicts = watch.observe(interval(rng, slow="a3m-node-05"))
    assert [(v["node"], v["job"], v["collective"], v["intervals"]) for v in verdicts] == [
        ("a3m-node-05", "4242", "AllReduce", 2)]
    assert 0.6 < verdicts[0]["ratio"] < 0.8
    assert "a3m-node-05's AllReduce bus bandwidth (4-5GB, communicator DP Group 0, job 4242) is 0." in \
        verdicts[0]["finding"]["cause"]


def test_no_false_alarm_over_200_healthy_intervals_of_16_noisy_nodes():
    rng, watch = random.Random(11), ni.StragglerWatch()
    alarms = [v for _interval in range(200) for v in watch.observe(interval(rng))]
    assert alarms == []


def test_one_slow_interval_is_noise_and_the_streak_ends_when_the_node_recovers():
    rng, watch = random.Random(3), ni.StragglerWatch()
    assert watch.observe(interval(rng, slow="a3m-node-01")) == []
    assert watch.observe(interval(rng)) == []
    assert watch.observe(interval(rng, slow="a3m-node-01")) == []
    assert len(watch.observe(interval(rng, slow="a3m-node-01"))) == 1


def test_a_slow_node_cannot_hide_in_the_spread_it_makes():
    """With a mean and a standard deviation, two slow nodes of 16 would widen the spread and pull the
    mean towards themselves; the median and MAD do not move."""
    rng = random.Random(5)
    values = interval(rng)
    for node in NODES[:2]:
        values[node] = dict((key, bw * 0.7) for key, bw in values[node].items())
    assert sorted(ni.slow_nodes(values)) == NODES[:2]


def test_too_few_nodes_are_not_judged_and_a_zero_median_is_not_divided_by():
    key = ("1", "c", "AllReduce", "1-2MB")
    assert ni.slow_nodes({"a": {key: 100.0}, "b": {key: 10.0}, "c": {key: 100.0}}) == {}
    assert ni.slow_nodes(dict((n, {key: 0.0}) for n in "abcde")) == {}
