# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Slurm prolog and epilog: RxDM started and stopped per job through its unit, the node checked,
and the job's node count read without scontrol."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health, slurm_hook
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.health.test_node_health import Node, config, node_root


class UnitNode(Node):
    """A node whose RxDM container runs only after `systemctl start` of its unit."""

    def __init__(self, start_fails=False, ready_after_polls=0, **kwargs):
        super(UnitNode, self).__init__(running=False, **kwargs)
        self.start_fails, self.ready_after_polls = start_fails, ready_after_polls
        self.calls = []

    def run(self, argv):
        if argv[0] == "/bin/systemctl" and argv[1] in ("start", "stop"):
            self.calls.append(argv[1:])
            if self.start_fails and argv[1] == "start":
                return 1, "", "Job for receive-datapath-manager.service failed.\n"
            self.running = argv[1] == "start"
            return 0, "", ""
        if argv[1:2] == ["logs"]:
            self.ready_after_polls -= 1
            self.ready = self.ready_after_polls < 0
        return super(UnitNode, self).run(argv)


def hook(tmp_path, phase, node, nodes=2, per_job=True, wait=4):
    plugin = node_root(tmp_path)
    return slurm_hook.run_hook(phase, config(plugin), node.run, node.which, nodes, per_job, wait, root=str(tmp_path))


def test_prolog_of_a_multi_node_job_starts_rxdm_and_waits_until_ready(tmp_path, monkeypatch):
    monkeypatch.setattr("time.sleep", lambda _s: None)
    node = UnitNode(ready_after_polls=1)
    result = hook(tmp_path, "prolog", node)
    assert node.calls == [["start", "receive-datapath-manager.service"]]
    assert result["findings"] == [] and result["rxdm"]["ready"]
    assert result["actions"] == ["started receive-datapath-manager.service for a 2-node job"]


def test_prolog_fails_naming_the_unit_when_it_does_not_start(tmp_path):
    result = hook(tmp_path, "prolog", UnitNode(start_fails=True))
    first = result["findings"][0]
    assert (first["component"], first["subject"], first["severity"]) == (
        "rxdm", "receive-datapath-manager.service", "fail")
    assert "systemctl start receive-datapath-manager.service failed (exit 1)" in first["cause"]
    assert node_health.verdict(result["findings"]) == "fail"
    assert node_health.one_line(result["findings"]).startswith("fail rxdm receive-datapath-manager.service: ")


def test_prolog_fails_when_rxdm_never_becomes_ready(tmp_path, monkeypatch):
    clock = iter(range(0, 100, 1))
    monkeypatch.setattr("time.time", lambda: next(clock))
    monkeypatch.setattr("time.sleep", lambda _s: None)
    node = UnitNode(ready_after_polls=1000)
    result = hook(tmp_path, "prolog", node, wait=5)
    (rxdm,) = result["findings"]
    assert rxdm["severity"] == "fail" and "has not signalled readiness" in rxdm["cause"]


def test_single_node_job_neither_starts_nor_checks_per_job_rxdm(tmp_path):
    node = UnitNode()
    result = hook(tmp_path, "prolog", node, nodes=1)
    assert node.calls == [] and result["findings"] == [] and result["rxdm"] is None


def test_epilog_stops_per_job_rxdm_and_rechecks_the_rest(tmp_path):
    node = UnitNode()
    node.running = True
    result = hook(tmp_path, "epilog", node)
    assert node.calls == [["stop", "receive-datapath-manager.service"]]
    assert result["actions"] == ["stopped receive-datapath-manager.service"]
    assert result["rxdm"] is None and result["plugin"]["intact"] and result["findings"] == []


def test_epilog_finds_a_fault_the_job_left(tmp_path):
    plugin = node_root(tmp_path, mtu=1460)
    node = UnitNode()
    result = slurm_hook.run_hook("epilog", config(plugin), node.run, node.which, 2, True, 4, root=str(tmp_path))
    assert [(f["component"], f["subject"]) for f in result["findings"]] == [("nic", "eth1")]


def test_rxdm_that_always_runs_is_checked_and_never_started(tmp_path):
    node = UnitNode()
    result = hook(tmp_path, "prolog", node, per_job=False)
    assert node.calls == []
    assert [(f["component"], f["severity"]) for f in result["findings"]] == [("rxdm", "fail")]


def test_gib_families_have_no_rxdm_to_start(tmp_path):
    plugin = node_root(tmp_path)
    node = UnitNode()
    result = slurm_hook.run_hook("prolog", dict(config(plugin), rxdm=None), node.run, node.which, 4, True, 4,
                                 root=str(tmp_path))
    assert node.calls == [] and result["findings"] == []


def test_an_unknown_phase_is_refused():
    with pytest.raises(ValueError, match="phase must be prolog or epilog"):
        slurm_hook.run_hook("healthcheck", {}, None, None, 1, True, 1)


@pytest.mark.parametrize("nodelist, count", [
    ("a3-node0", 1), ("a3-[0-3]", 4), ("a3-[0-3,7],b1", 6), ("x[1-2]y[1-3]", 6), ("a3-[00-15]", 16),
    ("", None), ("a3-[3-1]", None), ("a3-[x]", None),
])
def test_count_hosts(nodelist, count):
    assert slurm_hook.count_hosts(nodelist) == count


def test_job_nodes_prefers_the_count_then_the_list_then_one():
    assert slurm_hook.job_nodes({"SLURM_JOB_NUM_NODES": "3", "SLURM_JOB_NODELIST": "a[0-7]"}) == 3
    assert slurm_hook.job_nodes({"SLURM_JOB_NODELIST": "a[0-7]"}) == 8
    assert slurm_hook.job_nodes({}) == 1


def test_drain_sets_the_reason_on_this_node_and_caps_its_length():
    calls = []

    def run(argv):
        calls.append(argv)
        return 0, "", ""
    assert slurm_hook.drain(run, {"scontrol": "/usr/bin/scontrol"}.get, {"SLURMD_NODENAME": "n1"}, "x" * 300) is None
    assert calls == [["/usr/bin/scontrol", "update", "nodename=n1", "state=drain", "reason=" + "x" * 197 + "..."]]


@pytest.mark.parametrize("which, environ, rc, problem", [
    ({"scontrol": "/usr/bin/scontrol"}.get, {}, 0, "cannot set the drain reason: SLURMD_NODENAME unset"),
    ({}.get, {"SLURMD_NODENAME": "n1"}, 0, "scontrol not found"),
    ({"scontrol": "/usr/bin/scontrol"}.get, {"SLURMD_NODENAME": "n1"}, 1,
     "scontrol update failed (exit 1): slurm_update error: Invalid node name specified"),
])
def test_drain_says_why_it_could_not(which, environ, rc, problem):
    def run(_argv):
        return rc, "", "slurm_update error: Invalid node name specified\nmore\n"
    assert slurm_hook.drain(run, which, environ, "gpudirect: fail") == problem


class DomainNode(UnitNode):
    """A node of an NVLink domain whose squeue answers with the jobs on the domain's nodes."""

    def __init__(self, jobs="", **kwargs):
        super(DomainNode, self).__init__(**kwargs)
        self.jobs = jobs

    def which(self, name):
        return "/usr/bin/squeue" if name == "squeue" else super(DomainNode, self).which(name)

    def run(self, argv):
        if argv[0] == "/usr/bin/squeue":
            self.calls.append(["squeue"])
            return 0, self.jobs, ""
        return super(DomainNode, self).run(argv)


def domain_hook(tmp_path, phase, node, domain_file=True):
    plugin = node_root(tmp_path)
    environ = {"SLURM_JOB_ID": "7"}
    if domain_file:
        path = tmp_path / "nvlink-domain.json"
        path.write_text('{"domain": "b1/s2", "nodes": ["a4x-0", "a4x-1"], "channel_per_job": false, '
                        '"on_shared": "fail"}')
        environ["GPUDIRECT_NVLINK_DOMAIN_FILE"] = str(path)
    return slurm_hook.run_hook(phase, dict(config(plugin), rxdm=None), node.run, node.which, 1, False, 4,
                               root=str(tmp_path), environ=environ)


def test_prolog_refuses_a_second_job_on_the_nvlink_domains_imex_channels(tmp_path):
    result = domain_hook(tmp_path, "prolog", DomainNode("12|alice|a4x-0\n7|carol|a4x-1\n"))
    assert node_health.verdict(result["findings"]) == "fail"
    assert node_health.one_line(result["findings"]).startswith(
        "fail imex NVLink domain b1/s2: job 12 (alice on a4x-0) runs on the same IMEX channels")


def test_prolog_of_the_domains_only_job_passes(tmp_path):
    node = DomainNode("7|carol|a4x-[0-1]\n")
    result = domain_hook(tmp_path, "prolog", node)
    assert result["findings"] == [] and node.calls == [["squeue"]]


@pytest.mark.parametrize("phase, with_file", [("epilog", True), ("prolog", False)])
def test_epilog_and_nodes_without_a_domain_file_never_ask_squeue(tmp_path, phase, with_file):
    node = DomainNode("12|alice|a4x-0\n")
    result = domain_hook(tmp_path, phase, node, domain_file=with_file)
    assert result["findings"] == [] and node.calls == []
