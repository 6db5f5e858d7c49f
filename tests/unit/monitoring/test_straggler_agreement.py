# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One straggler verdict: for the same bandwidths, the Prometheus rule (evaluated by promtool) and the
Python judgment that the node agent's data and the controller's summary go through name the same
nodes, per collective and message size."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import random

import yaml

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_inspector as ni
from ansible_collections.gpudirect.gcp.tests.unit.monitoring.test_monitoring import RULES, promtool

SIZES = ("1-2MB", "4-5GB", "64-128MB")


def random_interval(rng, case):
    """{node: {key: bandwidth}}: 4 to 9 nodes, three sizes, noise, and now and then a node slow on one or
    two sizes only (the shape on which a per-node judgment and a per-series rule disagree)."""
    nodes = ["n%d" % n for n in range(rng.randint(4, 9))]
    out = {}
    for node in nodes:
        out[node] = {}
        for size in SIZES:
            base = 180.0 * rng.uniform(0.93, 1.07)
            if rng.random() < 0.12:
                base *= rng.uniform(0.4, 0.9)
            out[node][(str(case), "DP", "AllReduce", size)] = round(base, 3)
    return out


def rule_expr():
    with open(RULES) as fh:
        rules = yaml.safe_load(fh)
    for group in rules["groups"]:
        for rule in group["rules"]:
            if rule.get("alert") == "GPUDirectJobStraggler":
                return rule["expr"]
    raise AssertionError("no GPUDirectJobStraggler rule")


def test_the_rule_and_the_python_judgment_name_the_same_slow_series(tmp_path):
    rng = random.Random(20261202)
    series, expected = [], []
    for case in range(40):
        interval = random_interval(rng, case)
        for node, values in interval.items():
            for (job, comm, collective, size), gbs in values.items():
                series.append({"series": 'gpudirect_job_bus_bandwidth_gbs{instance="%s",slurm_job="%s",comm="%s",'
                                         'collective="%s",message_size="%s"}' % (node, job, comm, collective, size),
                               "values": "%s %s %s %s" % (gbs, gbs, gbs, gbs)})
        for node, key in sorted(ni.slow_series(interval)):
            expected.append({"labels": '{instance="%s",slurm_job="%s",message_size="%s"}' % (node, key[0], key[3]),
                             "value": 1})
    assert 10 < len(expected) < 200  # the random data holds slow series, and not only slow ones
    test = {"rule_files": [RULES], "evaluation_interval": "30s", "tests": [{
        "interval": "30s", "input_series": series,
        "promql_expr_test": [{"expr": "count by (instance, slurm_job, message_size) (%s)" % rule_expr(),
                              "eval_time": "1m", "exp_samples": expected}]}]}
    path = tmp_path / "agreement.test.yml"
    path.write_text(yaml.safe_dump(test))
    rc, out = promtool("test", "rules", str(path))
    assert rc == 0, out


def test_a_node_slow_on_one_size_of_three_is_named_for_that_size():
    interval = {}
    for n in range(6):
        interval["n%d" % n] = dict((("1", "DP", "AllReduce", size), 180.0) for size in SIZES)
    interval["n3"][("1", "DP", "AllReduce", "1-2MB")] = 90.0
    assert ni.slow_series(interval) == {("n3", ("1", "DP", "AllReduce", "1-2MB")): 0.5}
    assert ni.slow_nodes(interval) == {"n3": (0.5, ("1", "DP", "AllReduce", "1-2MB"))}
