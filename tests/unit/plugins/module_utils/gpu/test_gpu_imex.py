# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""IMEX's node list, channel devices and the judge of its state."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import imex

CONF = families.FAMILIES["a4x"]["imex"]
PROC_DEVICES = "Character devices:\n  1 mem\n195 nvidia\n237 nvidia-caps-imex-channels\n\nBlock devices:\n237 nope\n"


def test_nodes_config_is_sorted_numerically_one_a_line():
    assert imex.nodes_config_text(["10.0.0.10", "10.0.0.9", "10.0.0.9"]) == "10.0.0.9\n10.0.0.10\n"
    assert imex.parse_nodes_config("# domain\n10.0.0.9\n\n10.0.0.10  # me\n") == ["10.0.0.9", "10.0.0.10"]


@pytest.mark.parametrize("nodes,why", [([], "no addresses"), (["node-a"], "not an IPv4 address"),
                                       (["10.0.0.256"], "not an IPv4 address")])
def test_what_imex_cannot_read_is_refused(nodes, why):
    with pytest.raises(imex.ImexError) as err:
        imex.nodes_config_text(nodes)
    assert why in str(err.value)


def test_channel_major_is_the_character_one():
    assert imex.channel_major(PROC_DEVICES) == 237
    assert imex.channel_major("Character devices:\n195 nvidia\n") is None


def test_channel_state(tmp_path):
    assert imex.channel_state(str(tmp_path), 1, 237) == [
        {"path": str(tmp_path / "channel0"), "ok": False, "problem": "missing"}]
    (tmp_path / "channel0").write_text("")
    assert imex.channel_state(str(tmp_path), 1, 237)[0]["problem"] == "not a character device"
    os.unlink(str(tmp_path / "channel0"))
    os.mknod(str(tmp_path / "channel0"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
    assert imex.channel_state(str(tmp_path), 1, 237)[0]["problem"] == "device 1:3, the driver's is 237:0"
    assert imex.channel_state(str(tmp_path), 1, None)[0]["ok"]


def state(**kw):
    ev = {"unit_state": "active", "nodes": ["10.0.0.2", "10.0.0.3"], "ctl": "READY",
          "channels": [{"path": "/dev/nvidia-caps-imex-channels/channel0", "ok": True, "problem": None}]}
    ev.update(kw)
    return ev


def subjects(found):
    return [(f["subject"], f["severity"]) for f in found]


def test_a_ready_domain_has_no_finding():
    assert imex.judge(CONF, ["10.0.0.3", "10.0.0.2"], state()) == []


def test_each_fault_is_named_with_the_host_phase_as_repair():
    found = imex.judge(CONF, ["10.0.0.2", "10.0.0.4"], state(
        unit_state="inactive", channels=[{"path": "/dev/x/channel0", "ok": False, "problem": "missing"}]))
    assert subjects(found) == [("nvidia-imex", "fail"), (CONF["nodes_config"], "fail"), ("/dev/x/channel0", "fail")]
    assert "lacks 10.0.0.4; lists 10.0.0.3, not in this VM's NVLink domain" in found[1]["cause"]
    assert all(f["component"] == "imex" and f["phase"] == "host" for f in found)


def test_a_degraded_domain_names_the_port():
    found = imex.judge(CONF, None, state(ctl="DEGRADED"))
    assert subjects(found) == [("IMEX domain", "fail")]
    assert str(CONF["server_port"]) in found[0]["cause"]


def test_a_missing_control_tool_could_not_run():
    found = imex.judge(CONF, None, state(ctl=None, ctl_error="nvidia-imex-ctl is not on PATH"))
    assert subjects(found) == [("nvidia-imex-ctl", "warn")] and found[0]["cause"].startswith("could not run")


def test_gather_runs_argument_lists_and_reads_the_node_list(tmp_path):
    conf = dict(CONF, nodes_config=str(tmp_path / "nodes"), channel_dir=str(tmp_path / "ch"))
    (tmp_path / "nodes").write_text("10.0.0.2\n")
    calls = []

    def run(argv):
        calls.append(argv)
        return (0, "active\n", "") if "is-active" in argv else (0, "READY\n", "")

    ev = imex.gather(run, lambda name: "/usr/bin/" + name, conf)
    assert ev["unit_state"] == "active" and ev["nodes"] == ["10.0.0.2"] and ev["ctl"] == "READY"
    assert calls == [["/usr/bin/systemctl", "is-active", "nvidia-imex"], ["/usr/bin/nvidia-imex-ctl", "-q"]]
    assert ev["channels"][0]["problem"] == "missing"
