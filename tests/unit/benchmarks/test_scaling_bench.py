# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scaling benchmark's check that its re-run was converged."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SPEC = importlib.util.spec_from_file_location("scaling_bench", os.path.join(ROOT, "benchmarks", "scaling", "bench.py"))
bench = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(bench)

ROLES = "/c/ansible_collections/gpudirect/gcp/roles"
COLD = """
TASK [gpudirect.gcp.gpu_host : Configure what differs] ****
included: %(r)s/gpu_host/tasks/configure.yml for n-node0, n-node1
TASK [gpudirect.gcp.rxdm : Set up RxDM] ****
included: %(r)s/rxdm/tasks/rxdm.yml for n-node1
TASK [gpudirect.gcp.nccl_tests : Build] ****
included: %(r)s/nccl_tests/tasks/binaries_named.yml for n-node0, n-node1
""" % {"r": ROLES}
CONVERGED = """
TASK [gpudirect.gcp.gpu_host : Configure what differs] ****
skipping: [n-node0]
included: %(r)s/nccl_tests/tasks/binaries_named.yml for n-node0, n-node1
""" % {"r": ROLES}


def _log(tmp_path, *runs):
    path = tmp_path / "bench.log"
    path.write_text(u"".join(u"\n$ ansible-playbook run%d\n%s" % (n, text) for n, text in enumerate(runs)))
    return str(path)


def test_only_the_last_run_counts_and_a_converged_one_has_no_full_path(tmp_path):
    assert bench.full_paths(_log(tmp_path, COLD, CONVERGED)) == []


def test_each_phase_and_node_that_took_its_full_path_is_named(tmp_path):
    assert bench.full_paths(_log(tmp_path, CONVERGED, COLD)) == [
        ("gpu_host", "n-node0"), ("gpu_host", "n-node1"), ("rxdm", "n-node1")]


def test_the_cold_slope_is_the_medians_with_the_spread_of_the_extremes():
    small = [(60.0, 20.0), (61.0, 22.0), (59.0, 21.0)]
    large = [(150.0, 54.0), (155.0, 60.0), (149.0, 57.0)]
    mid, low, high = bench.slope(small, large, 2, 6)
    assert mid == (57.0 - 21.0) / 4 and low == (54.0 - 22.0) / 4 and high == (60.0 - 20.0) / 4


def test_one_sample_a_size_has_no_spread():
    assert bench.slope([(1.0, 4.0)], [(2.0, 16.0)], 2, 6) == (3.0, 3.0, 3.0)


def test_a_slope_on_its_target_meets_it_whatever_the_float_arithmetic_leaves():
    # medians of 10.6 and 22.6 CPU-s on 2 and 6 nodes: 3.0 a node, as (22.6 - 10.6) / 4 is 3.0000000000000004
    mid = bench.slope([(0, 10.6)], [(0, 22.6)], 2, 6)[0]
    assert bench.target_verdict(mid, 3.0) == "met"
    assert bench.target_verdict(3.01, 3.0) == "NOT met"
