# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Busy and unreadable nodes become one warn finding each and are left out of the NCCL tests."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import diagnose_busy
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import diagnose
from ansible_collections.gpudirect.gcp.plugins.filter.diagnose import diagnose_busy as busy_filter

IDLE = {"state": "idle", "busy": False, "reasons": [], "processes": [], "slurm": None, "msg": "idle"}
BUSY = {"state": "busy", "busy": True, "reasons": ["GPU 0: pid 4242 /usr/bin/python3 (1024 MiB)"],
        "processes": [{"gpu": 0, "pid": 4242}], "slurm": None}
SLURM = {"state": "busy", "busy": True, "reasons": ["Slurm node node2 is allocated: job 17 (train, alice)"]}
UNREAD = {"state": "unknown", "busy": False, "reasons": ["could not read the GPU processes: nvidia-smi not found"]}


def test_each_node_that_is_not_idle_is_one_warn_finding_naming_why():
    checks = {"node0": IDLE, "node1": BUSY, "node2": SLURM, "node3": UNREAD}
    found = diagnose_busy.findings(checks, ["node0", "node1", "node2", "node3"])
    assert [(f["host"], f["component"], f["subject"], f["severity"]) for f in found] == [
        ("node1", "gpu", "workload", "warn"), ("node2", "gpu", "workload", "warn"),
        ("node3", "gpu", "workload", "warn")]
    assert found[0]["cause"].startswith("runs a job, left out of the NCCL tests")
    assert found[0]["cause"].endswith(": GPU 0: pid 4242 /usr/bin/python3 (1024 MiB)")
    assert "job 17 (train, alice)" in found[1]["cause"]
    assert found[2]["cause"].startswith("is not known to be idle, left out")
    assert diagnose_busy.left_out(found) == ["node1", "node2", "node3"]


def test_a_node_whose_check_failed_or_did_not_run_is_left_out_not_tested_as_idle():
    checks = {"node0": {"failed": True, "msg": "MODULE FAILURE"}, "node1": {"skipped": True}}
    found = diagnose_busy.findings(checks, ["node0", "node1", "node2"])
    assert [f["host"] for f in found] == ["node0", "node1", "node2"]
    assert found[0]["cause"].endswith("the GPU busy check did not run (MODULE FAILURE)")


def test_the_option_tests_busy_nodes_anyway_and_still_names_them():
    found = diagnose_busy.findings({"node1": BUSY}, ["node1"], test_busy=True)
    assert found[0]["cause"].startswith("runs a job, tested anyway (nccl_tests_test_busy_nodes=true)")
    assert diagnose_busy.left_out(found, test_busy=True) == []


def test_busy_nodes_do_not_reach_the_fabric_group_but_other_warns_do():
    items = diagnose_busy.findings({"node0": IDLE, "node1": BUSY, "node2": IDLE}, ["node0", "node1", "node2"]) + [
        {"host": "node2", "component": "host", "subject": "kernel", "severity": "warn", "cause": "x", "repair": None}]
    assert diagnose.passing(items, ["node0", "node1", "node2"]) == ["node0", "node2"]
    assert diagnose.passing(items, ["node0", "node1", "node2"], test_busy=True) == ["node0", "node1", "node2"]


def test_the_filter_takes_the_registered_results_of_every_node():
    found = busy_filter({"node0": IDLE, "node1": BUSY}, ["node0", "node1"])
    assert [f["host"] for f in found] == ["node1"]
