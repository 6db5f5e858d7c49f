# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The scaling benchmark: its check that its re-run was converged, its slopes, and its profile of a
run task by task."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import json
import os
import sys

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


def test_each_tasks_slope_is_its_mean_cost_grown_a_node_the_largest_first():
    # two runs of the small size are averaged; a task only the large size ran grows from nothing
    small = [{"linear": 0.2, "square": 0.04, "fixed": 1.0}, {"linear": 0.2, "square": 0.06, "fixed": 1.0}]
    large = [{"linear": 0.6, "square": 0.37, "fixed": 1.0, "large only": 0.8}]
    slopes = bench.task_slopes(small, large, 2, 6)
    expected = [(0.2, "large only"), (0.1, "linear"), (0.08, "square"), (0.0, "fixed")]
    assert [(round(s, 3), t) for s, t in slopes] == expected


def test_each_tasks_cpu_is_read_from_a_real_run_and_a_task_run_twice_is_summed(tmp_path):
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(u"all: {hosts: {n0: {ansible_connection: local, ansible_python_interpreter: %s}}}\n"
                         % sys.executable)
    play = tmp_path / "play.yml"
    play.write_text(u"""
- name: Two tasks, one twice
  hosts: all
  gather_facts: false
  tasks:
    - name: First
      ansible.builtin.debug: {msg: the first task also pays for the first fork}
    - name: Cheap
      ansible.builtin.debug: {msg: hi}
    - name: Costly
      ansible.builtin.set_fact: {n: "{{ range(1000000) | list | length }}"}
      loop: [1, 2]
    - name: Included twice
      ansible.builtin.include_tasks: {file: "%s"}
      loop: [1, 2]
""" % (tmp_path / "inner.yml"))
    (tmp_path / "inner.yml").write_text(u"- name: Inner\n  ansible.builtin.debug: {msg: inner}\n")
    log = str(tmp_path / "run.log")
    profiles = []
    bench.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory), str(play)],
              log, profile=profiles)
    (profile,) = profiles
    assert set(profile) == {"First", "Cheap", "Costly", "Included twice", "Inner"}, open(log).read()
    # the costly task's work is its own, not the next task's (a worker still exiting is waited for)
    assert profile["Costly"] > 3 * profile["Cheap"] > 0 and profile["Costly"] > 3 * profile["Included twice"]
    with open(log + ".tasks.jsonl") as fh:
        assert [json.loads(line)["task"] for line in fh].count("Inner") == 2
