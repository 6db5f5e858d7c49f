# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""slurm_node: a node is drained with the collection's mark, a person's drain is never overwritten nor
resumed, check mode runs no scontrol update, bad sinfo output is one line."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
from ansible.module_utils import basic

from ansible_collections.gpudirect.gcp.plugins.module_utils.health import slurm_node as sn
from ansible_collections.gpudirect.gcp.plugins.modules import slurm_node
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run


class Slurm(object):
    """sinfo answers with the node's line; scontrol update changes it as slurmctld would."""

    def __init__(self, line):
        self.line, self.calls = line, []

    def run(self, argv, **kwargs):
        self.calls.append(list(argv))
        name = os.path.basename(argv[0])
        if name == "sinfo":
            return 0, self.line + "\n", ""
        if name == "scontrol" and argv[1:3] == ["update", "nodename=node1"]:
            state = self.line.split(" ", 1)[0]
            if argv[3] == "state=drain":
                self.line = "%s root %s" % ("draining" if state in ("mixed", "allocated") else "drained",
                                            argv[4][len("reason="):])
            else:
                self.line = "idle root none"
            return 0, "", ""
        raise AssertionError("unexpected command %s" % argv)


@pytest.fixture
def slurm(monkeypatch):
    monkeypatch.setattr(sn, "configured", lambda paths, environ, exists: True)

    def make(line):
        fake = Slurm(line)
        monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kw: fake.run(argv))
        monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **kw: "/usr/bin/" + name)
        return fake
    return make


def updates(fake):
    return [c for c in fake.calls if os.path.basename(c[0]) == "scontrol"]


def test_a_node_running_a_job_is_drained_with_the_mark_and_keeps_its_job(slurm, capsys):
    fake = slurm("mixed (null) none")
    out = run(slurm_node, {"node": "node1", "state": "drained", "reason": "remediate: gpu GPU 3: row remap"},
              capsys, diff=True)
    assert out["changed"] and out["ours"] and not out["person"]
    assert updates(fake) == [["/usr/bin/scontrol", "update", "nodename=node1", "state=drain",
                              "reason=gpudirect remediate: gpu GPU 3: row remap"]]
    assert out["node"]["states"] == ["draining"] and out["diff"]["after"]["reason"].startswith("gpudirect ")
    again = run(slurm_node, {"node": "node1", "state": "drained", "reason": "remediate: other"}, capsys)
    assert not again["changed"] and len(updates(fake)) == 1


def test_a_persons_drain_keeps_its_reason_and_is_never_resumed(slurm, capsys):
    fake = slurm("drained alice RMA 4711: GPU 5 swapped")
    out = run(slurm_node, {"node": "node1", "state": "drained", "reason": "remediate: gpu"}, capsys)
    assert not out["changed"] and out["person"] and not out["ours"]
    assert "alice" in out["msg"] and "RMA 4711" in out["msg"]
    out = run(slurm_node, {"node": "node1", "state": "resumed"}, capsys)
    assert not out["changed"] and out["person"] and out["msg"].endswith("a person returns it")
    assert updates(fake) == []


def test_the_collections_own_drain_is_resumed_and_check_mode_only_says_so(slurm, capsys):
    fake = slurm("drained root gpudirect remediate: gpu GPU 3")
    out = run(slurm_node, {"node": "node1", "state": "resumed"}, capsys, check_mode=True)
    assert out["changed"] and updates(fake) == []
    out = run(slurm_node, {"node": "node1", "state": "resumed"}, capsys)
    assert out["changed"] and out["node"]["states"] == ["idle"] and not out["node"]["out"]
    assert updates(fake)[0][3] == "state=resume"
    assert not run(slurm_node, {"node": "node1", "state": "resumed"}, capsys)["changed"]


def test_a_node_slurm_does_not_list_or_an_odd_line_is_one_line(slurm, capsys):
    slurm("")
    out = run(slurm_node, {"node": "node1"}, capsys)
    assert out["failed"] and out["msg"] == "slurm_node: Slurm does not list a node node1 (sinfo -n node1 printed nothing)"
    slurm("garbage")
    out = run(slurm_node, {"node": "node1"}, capsys)
    assert out["failed"] and "not 'STATE USER REASON'" in out["msg"]


def test_a_reason_is_one_masked_line_with_the_mark_once():
    text = sn.reason_text("remediate: token=ghp_" + "a" * 36 + "\nsecond line")
    assert text.startswith("gpudirect remediate: ") and "\n" not in text and "ghp_" + "a" * 36 not in text
    assert sn.reason_text("gpudirect remediate: x") == "gpudirect remediate: x"
    assert len(sn.reason_text("x" * 1000)) <= sn.MAX_REASON


@pytest.mark.parametrize("line, out, ours", [
    ("idle (null) none", False, False),
    ("down* slurm Not responding", True, False),
    ("drained root gpudirect nccl-tests hold", True, True),
    ("draining root gpudirect-other: x", True, False),
    ("drained root gpudirect: fail gpu", True, True),
    ("mixed+drain bob maintenance", True, False),
])
def test_states_and_owners_read_from_sinfo(line, out, ours):
    record = sn.parse(line, "node1")
    assert (record["out"], sn.ours(record)) == (out, ours)


def test_a_node_slurm_does_not_know_is_nothing_to_do_when_asked(slurm, capsys):
    fake = slurm("")
    out = run(slurm_node, {"node": "node1", "state": "drained", "reason": "x", "missing": "ignore"}, capsys)
    assert not out["changed"] and out["listed"] is False and out["node"] is None and updates(fake) == []


def test_the_hooks_drain_is_the_collections_and_another_owner_is_not():
    assert sn.ours(sn.parse("drained root gpudirect: fail gpu GPU 1: row remap", "n"))
    assert sn.ours(sn.parse("drained root gpudirect SANDBOX: fail gpu", "n"))
    upgrade = sn.parse("drained root gpudirect-upgrade v1 to v2", "n")
    assert not sn.ours(upgrade) and sn.ours(upgrade, "gpudirect-upgrade")


def test_a_host_without_a_slurm_configuration_is_not_a_node_when_asked(slurm, capsys, monkeypatch, tmp_path):
    fake = slurm("idle (null) none")
    monkeypatch.setattr(sn, "configured", lambda paths, environ, exists: False)
    out = run(slurm_node, {"node": "node1", "state": "drained", "reason": "x", "missing": "ignore"}, capsys)
    assert out["listed"] is False and not out["changed"] and fake.calls == []
    out = run(slurm_node, {"node": "node1"}, capsys)
    assert out["failed"] and out["msg"] == "slurm_node: no Slurm configuration on this host (SLURM_CONF, slurm_conf_paths)"
    assert sn.configured([str(tmp_path / "slurm.conf")], {"SLURM_CONF": ""}, os.path.exists) is False
