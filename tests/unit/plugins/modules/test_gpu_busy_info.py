# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_busy_info as a module: real captures through a fake nvidia-smi, Slurm only where configured,
a node that cannot be read is unknown, check mode reads the same."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
from ansible.module_utils import basic

from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import gpu_busy
from ansible_collections.gpudirect.gcp.plugins.modules import gpu_busy_info
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "gpu")
RTX = os.path.join(FIXTURES, "public", "rtx-a5000-x2-590.44.01-event-reasons-fabric-v13.xml")
H100 = os.path.join(FIXTURES, "h100-580.159.04", "nvidia-smi-q-x.xml")


class Node(object):
    """A node's commands: nvidia-smi answers with a capture, sinfo and squeue with given text."""

    def __init__(self, smi=H100, smi_rc=0, sinfo=None, sinfo_rc=0, squeue=""):
        self.smi, self.smi_rc, self.sinfo, self.sinfo_rc, self.squeue = smi, smi_rc, sinfo, sinfo_rc, squeue
        self.calls = []

    def run(self, argv, **kwargs):
        self.calls.append(list(argv))
        name = os.path.basename(argv[0])
        if argv[1:] == ["-q", "-x"]:
            if self.smi_rc:
                return self.smi_rc, "", "NVIDIA-SMI has failed because it couldn't communicate with the driver\n"
            with open(self.smi) as fh:
                return 0, fh.read(), ""
        if name == "sinfo":
            return (self.sinfo_rc, self.sinfo or "", "sinfo: error: Unable to contact slurm controller\n"
                    if self.sinfo_rc else "")
        if name == "squeue":
            return 0, self.squeue, ""
        raise AssertionError("unexpected command %s" % argv)

    def which(self, name, required=False, *args, **kwargs):
        if name == "nvidia-smi":
            return "/bin/true"
        if name in ("sinfo", "squeue") and self.sinfo is not None:
            return "/usr/bin/" + name
        return None


@pytest.fixture
def node(monkeypatch):
    def make(**kwargs):
        fake = Node(**kwargs)
        monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kw: fake.run(argv, **kw))
        monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **kw: fake.which(name))
        return fake
    return make


def test_processes_on_the_gpus_make_the_node_busy_in_any_mode(node, capsys):
    node(smi=RTX)
    out = run(gpu_busy_info, {"slurm": False}, capsys)
    assert out["changed"] is False and out["state"] == "busy" and out["busy"] is True
    assert [(p["gpu"], p["pid"]) for p in out["processes"]] == [(0, 100477), (1, 100477)]
    assert out["msg"].startswith("busy: GPU 0: pid 100477 /root/src/llama.cpp/build/bin/llama-server")
    assert run(gpu_busy_info, {"slurm": False}, capsys, check_mode=True)["state"] == "busy"


def test_an_idle_node_is_idle(node, capsys):
    node()
    out = run(gpu_busy_info, {}, capsys)
    assert (out["state"], out["reasons"], out["slurm"], out["msg"]) == ("idle", [], None, "idle")


def test_a_failing_nvidia_smi_is_unknown_with_its_line(node, capsys):
    node(smi_rc=9)
    out = run(gpu_busy_info, {}, capsys)
    assert out["state"] == "unknown" and not out.get("failed")
    assert out["reasons"] == ["could not read the GPU processes: nvidia-smi -q -x exited 9: NVIDIA-SMI has failed "
                              "because it couldn't communicate with the driver"]


def test_a_missing_nvidia_smi_is_unknown(node, capsys):
    node()
    out = run(gpu_busy_info, {"nvidia_smi": "/nonexistent/nvidia-smi"}, capsys)
    assert out["state"] == "unknown"
    assert out["reasons"] == ["could not read the GPU processes: /nonexistent/nvidia-smi not found"]


def test_slurm_is_read_only_where_it_is_configured(node, capsys, tmp_path):
    fake = node(sinfo="mixed\n", squeue="4711|alice|train|RUNNING\n")
    out = run(gpu_busy_info, {"slurm_node": "a3-node1", "slurm_conf_paths": [str(tmp_path / "none.conf")]}, capsys)
    assert out["state"] == "idle" and out["slurm"] is None
    assert [c for c in fake.calls if "sinfo" in c[0]] == []
    (tmp_path / "slurm.conf").write_text("ClusterName=c\n")
    out = run(gpu_busy_info, {"slurm_node": "a3-node1", "slurm_conf_paths": [str(tmp_path / "slurm.conf")]}, capsys)
    assert out["state"] == "busy"
    assert out["reasons"] == ["Slurm node a3-node1 is mixed: job 4711 (train, alice)"]
    assert ["/usr/bin/sinfo", "-h", "-n", "a3-node1", "-o", "%T"] in fake.calls


def test_a_configured_slurm_that_does_not_answer_is_unknown(node, capsys, tmp_path):
    node(sinfo="", sinfo_rc=1)
    (tmp_path / "slurm.conf").write_text("ClusterName=c\n")
    out = run(gpu_busy_info, {"slurm_node": "n1", "slurm_conf_paths": [str(tmp_path / "slurm.conf")]}, capsys)
    assert out["state"] == "unknown"
    assert out["reasons"] == ["could not read the Slurm state: sinfo -n n1 exited 1: sinfo: error: Unable to contact "
                              "slurm controller"]


def test_a_node_this_slurm_does_not_list_has_no_slurm_record(node, capsys, tmp_path):
    node(sinfo="")
    (tmp_path / "slurm.conf").write_text("ClusterName=c\n")
    out = run(gpu_busy_info, {"slurm_node": "stray", "slurm_conf_paths": [str(tmp_path / "slurm.conf")]}, capsys)
    # a record with no state would have upgrade_plugin drain a node Slurm does not know
    assert (out["state"], out["slurm"]) == ("idle", None)


def test_the_programs_to_ignore_are_listed_apart_and_leave_the_node_idle(node, capsys):
    node(smi=RTX)
    out = run(gpu_busy_info, {"slurm": False, "ignore_processes": ["llama-server"]}, capsys)
    assert (out["state"], out["processes"]) == ("idle", [])
    assert [(p["gpu"], p["pid"]) for p in out["ignored"]] == [(0, 100477), (1, 100477)]


def slurm_args(tmp_path, **more):
    (tmp_path / "slurm.conf").write_text("ClusterName=test\n")
    return dict({"slurm_node": "a3-node1", "slurm_conf_paths": [str(tmp_path / "slurm.conf")]}, **more)


def test_wait_s_looks_again_until_the_job_has_left_the_drained_node(node, capsys, monkeypatch, tmp_path):
    fake = node(sinfo="draining\n", squeue="4711|alice|train|RUNNING\n")
    monkeypatch.setattr(gpu_busy.time, "sleep", lambda s: setattr(fake, "sinfo", "drained\n"))
    out = run(gpu_busy_info, slurm_args(tmp_path, wait_s=60, interval_s=1), capsys)
    assert out["state"] == "idle" and out["waited_s"] >= 0
    assert len([c for c in fake.calls if os.path.basename(c[0]) == "sinfo"]) == 2


def test_without_wait_s_a_busy_node_is_looked_at_once(node, capsys, tmp_path):
    fake = node(sinfo="draining\n", squeue="4711|alice|train|RUNNING\n")
    out = run(gpu_busy_info, slurm_args(tmp_path), capsys)
    assert out["state"] == "busy" and out["waited_s"] == 0
    assert "job 4711 (train, alice)" in out["msg"]
    assert len([c for c in fake.calls if os.path.basename(c[0]) == "sinfo"]) == 1


def test_a_negative_wait_is_one_line(node, capsys):
    node()
    out = run(gpu_busy_info, {"wait_s": -1}, capsys)
    assert out["failed"] and out["msg"].startswith("gpu_busy_info: wait_s must be 0 or more")
