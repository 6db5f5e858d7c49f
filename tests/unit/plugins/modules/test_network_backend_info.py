# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""network_backend_info: both units in one systemctl call, netplan's files and command, wait-online."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.module_utils import basic

from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import network_backend as logic
from ansible_collections.gpudirect.gcp.plugins.modules import network_backend_info
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run as run_module

# systemctl show -p LoadState -p ActiveState -p SubState -- NetworkManager.service systemd-networkd.service
SHOW = ("LoadState=not-found\nActiveState=inactive\nSubState=dead\n\n"
        "LoadState=loaded\nActiveState=active\nSubState=running\n")


def test_one_show_for_both_units_in_a_fixed_order():
    assert logic.show_argv("/usr/bin/systemctl") == [
        "/usr/bin/systemctl", "show", "-p", "LoadState", "-p", "ActiveState", "-p", "SubState", "--",
        "systemd-networkd.service", "NetworkManager.service"]


def test_show_blocks_are_read_in_that_order():
    states = logic.parse_show("LoadState=loaded\nActiveState=active\nSubState=running\n\n"
                              "LoadState=loaded\nActiveState=active\nSubState=exited\n")
    assert states["networkd"]["SubState"] == "running" and states["networkmanager"]["SubState"] == "exited"
    assert logic.running(states) == {"networkd": True, "networkmanager": False}
    # a missing block (or no systemctl at all) is a unit that does not run
    assert logic.running(logic.parse_show("LoadState=loaded\nActiveState=active\nSubState=running\n")) == {
        "networkd": True, "networkmanager": False}
    assert logic.running(logic.parse_show("")) == {"networkd": False, "networkmanager": False}


@pytest.fixture
def node(tmp_path):
    netplan = tmp_path / "netplan"
    netplan.mkdir()
    for name in ("50-cloud-init.yaml", "60-extra.yml", "90-gpudirect-gpu-mtu.yaml", "README"):
        (netplan / name).write_text("network: {}\n")
    (netplan / "old.yaml").mkdir()
    (tmp_path / "netplan-cmd").write_text("")
    (tmp_path / "wait-online").write_text("")
    return tmp_path


def args(node, **kw):
    out = {"netplan_dir": str(node / "netplan"), "exclude": ["90-gpudirect-gpu-mtu.yaml"],
           "netplan_command": str(node / "netplan-cmd"),
           "wait_online_paths": [str(node / "missing"), str(node / "wait-online")]}
    out.update(kw)
    return out


def test_reads_the_units_netplan_and_wait_online_in_one_run(node, monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **kw: "/usr/bin/" + name)
    monkeypatch.setattr(basic.AnsibleModule, "run_command",
                        lambda self, argv, **kw: calls.append(argv) or (0, SHOW, ""))
    out = run_module(network_backend_info, args(node), capsys, check_mode=True)
    assert out["changed"] is False and len(calls) == 1
    assert out["running"] == {"networkmanager": True, "networkd": False}
    assert out["units"]["networkd"] == {"LoadState": "not-found", "ActiveState": "inactive", "SubState": "dead"}
    assert out["netplan_files"] == [str(node / "netplan" / "50-cloud-init.yaml"), str(node / "netplan" / "60-extra.yml")]
    assert out["netplan_command"] == str(node / "netplan-cmd")
    assert out["wait_online"] == str(node / "wait-online")


def test_nothing_there_is_empty_not_an_error(node, monkeypatch, capsys):
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **kw: None)
    out = run_module(network_backend_info, args(node, netplan_dir=str(node / "none"), netplan_command="/nope",
                                                wait_online_paths=["/nope"]), capsys)
    assert out["running"] == {"networkmanager": False, "networkd": False}
    assert out["netplan_files"] == [] and out["netplan_command"] == "" and out["wait_online"] == ""


def test_a_failing_systemctl_is_one_line(node, monkeypatch, capsys):
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **kw: "/usr/bin/" + name)
    monkeypatch.setattr(basic.AnsibleModule, "run_command",
                        lambda self, argv, **kw: (1, "", "Failed to connect to bus: No such file or directory\n"))
    out = run_module(network_backend_info, args(node), capsys)
    assert out["failed"] and out["msg"] == (
        "network_backend_info: systemctl show failed: Failed to connect to bus: No such file or directory")
