# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""link_mtu: only what differs is changed, check and diff mode, bad input as one line."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.module_utils import basic

from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import link_mtu as logic
from ansible_collections.gpudirect.gcp.plugins.modules import link_mtu
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run as run_module


class FakeIp(object):
    """ip link set on a fake sysfs: records each command and applies it to the files."""

    def __init__(self, sysfs, fail=False):
        self.sysfs, self.fail, self.calls = sysfs, fail, []

    def __call__(self, argv):
        self.calls.append(argv)
        if self.fail:
            return 2, "", "RTNETLINK answers: Operation not permitted\n"
        link = self.sysfs / argv[4]
        if argv[5] == "mtu":
            (link / "mtu").write_text(argv[6] + "\n")
        else:
            flags = int((link / "flags").read_text(), 16)
            flags = flags | logic.IFF_UP if argv[5] == "up" else flags & ~logic.IFF_UP
            (link / "flags").write_text("0x%x\n" % flags)
        return 0, "", ""


@pytest.fixture
def sysfs(tmp_path, monkeypatch):
    root = tmp_path / "net"
    link = root / "eth1"
    link.mkdir(parents=True)
    (link / "mtu").write_text("1460\n")
    (link / "flags").write_text("0x1002\n")  # broadcast, multicast; not up
    monkeypatch.setattr(logic, "SYSFS_NET", str(root))
    monkeypatch.setattr(logic.read_link, "__defaults__", (str(root),))
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **kw: "/usr/sbin/" + name)
    return root


def fake_ip(monkeypatch, sysfs, fail=False):
    fake = FakeIp(sysfs, fail)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kw: fake(argv))
    return fake


def run(args, capsys, check_mode=False):
    return run_module(link_mtu, args, capsys, check_mode=check_mode, diff=True)


def test_sets_the_mtu_and_brings_the_link_up_once(sysfs, monkeypatch, capsys):
    ip = fake_ip(monkeypatch, sysfs)
    out = run({"name": "eth1", "mtu": 8244, "state": "up"}, capsys)
    assert out["changed"] and out["before"] == {"mtu": 1460, "admin_up": False}
    assert out["after"] == {"mtu": 8244, "admin_up": True}
    assert ip.calls == [["/usr/sbin/ip", "link", "set", "dev", "eth1", "mtu", "8244"],
                        ["/usr/sbin/ip", "link", "set", "dev", "eth1", "up"]]
    assert out["diff"]["before"] == "eth1: mtu 1460, down\n" and out["diff"]["after"] == "eth1: mtu 8244, up\n"
    again = run({"name": "eth1", "mtu": 8244, "state": "up"}, capsys)
    assert again["changed"] is False and "diff" not in again and len(ip.calls) == 2


def test_check_mode_reports_and_changes_nothing(sysfs, monkeypatch, capsys):
    ip = fake_ip(monkeypatch, sysfs)
    out = run({"name": "eth1", "mtu": 8244}, capsys, check_mode=True)
    assert out["changed"] and out["after"] == {"mtu": 8244, "admin_up": False}
    assert out["commands"] == [["/usr/sbin/ip", "link", "set", "dev", "eth1", "mtu", "8244"]]
    assert ip.calls == [] and (sysfs / "eth1" / "mtu").read_text() == "1460\n"


def test_present_leaves_the_admin_state_alone(sysfs, monkeypatch, capsys):
    ip = fake_ip(monkeypatch, sysfs)
    out = run({"name": "eth1", "mtu": 1460}, capsys)
    assert out["changed"] is False and ip.calls == []


def test_a_failed_ip_command_is_one_line(sysfs, monkeypatch, capsys):
    fake_ip(monkeypatch, sysfs, fail=True)
    out = run({"name": "eth1", "mtu": 8244}, capsys)
    assert out["failed"] and out["msg"] == "link_mtu: link set dev eth1 mtu 8244 failed: RTNETLINK answers: Operation not permitted"


@pytest.mark.parametrize("args, msg", [
    ({"name": "eth9", "mtu": 8244}, "link_mtu: no interface eth9 ("),
    ({"name": "../eth1", "mtu": 8244}, "link_mtu: name must be an interface name"),
    ({"name": "eth1", "mtu": 10}, "link_mtu: mtu must be at least 68, got 10"),
])
def test_bad_input_names_what_is_at_fault(sysfs, monkeypatch, capsys, args, msg):
    fake_ip(monkeypatch, sysfs)
    out = run(args, capsys)
    assert out["failed"] and out["msg"].startswith(msg) and "\n" not in out["msg"]


def add_link(sysfs, name, mtu, flags):
    link = sysfs / name
    link.mkdir()
    (link / "mtu").write_text("%d\n" % mtu)
    (link / "flags").write_text(flags + "\n")


def test_several_links_in_one_call_change_only_what_differs(sysfs, monkeypatch, capsys):
    add_link(sysfs, "eth2", 8244, "0x1003")  # already at its MTU and up
    ip = fake_ip(monkeypatch, sysfs)
    links = [{"name": "eth1", "mtu": 8244, "state": "up"}, {"name": "eth2", "mtu": 8244, "state": "up"}]
    out = run({"links": links}, capsys)
    assert out["changed"] and "before" not in out
    assert [entry["name"] for entry in out["links"]] == ["eth1", "eth2"]
    assert out["links"][0]["after"] == {"mtu": 8244, "admin_up": True} and out["links"][1]["commands"] == []
    assert ip.calls == out["commands"] == [["/usr/sbin/ip", "link", "set", "dev", "eth1", "mtu", "8244"],
                                           ["/usr/sbin/ip", "link", "set", "dev", "eth1", "up"]]
    assert out["diff"]["before"] == "eth1: mtu 1460, down\n" and out["diff"]["before_header"] == "eth1"
    again = run({"links": links}, capsys)
    assert again["changed"] is False and "diff" not in again and len(ip.calls) == 2


def test_check_mode_with_several_links_runs_nothing(sysfs, monkeypatch, capsys):
    add_link(sysfs, "eth2", 1460, "0x1003")
    ip = fake_ip(monkeypatch, sysfs)
    out = run({"links": [{"name": "eth1", "mtu": 8244}, {"name": "eth2", "mtu": 8244}]}, capsys, check_mode=True)
    assert out["changed"] and len(out["commands"]) == 2 and ip.calls == []
    assert out["diff"]["after"] == "eth1: mtu 8244, down\neth2: mtu 8244, up\n"
    assert (sysfs / "eth2" / "mtu").read_text() == "1460\n"


def test_a_link_that_cannot_be_read_or_changed_does_not_stop_the_others(sysfs, monkeypatch, capsys):
    add_link(sysfs, "eth2", 1460, "0x1003")
    ip = fake_ip(monkeypatch, sysfs)
    out = run({"links": [{"name": "eth9", "mtu": 8244}, {"name": "../x", "mtu": 8244},
                         {"name": "eth2", "mtu": 8244}]}, capsys)
    assert out["failed"] and "\n" not in out["msg"]
    assert out["msg"].startswith("link_mtu: no interface eth9 (")
    assert "; name must be an interface name, got '../x'" in out["msg"]
    assert ip.calls == [["/usr/sbin/ip", "link", "set", "dev", "eth2", "mtu", "8244"]]
    assert out["links"][2]["after"] == {"mtu": 8244, "admin_up": True}
    # a failed command on one link: the next link is still set
    ip.fail = True
    out = run({"links": [{"name": "eth1", "mtu": 9000}, {"name": "eth2", "mtu": 9000}]}, capsys)
    assert out["msg"] == ("link_mtu: link set dev eth1 mtu 9000 failed: RTNETLINK answers: Operation not permitted; "
                          "link set dev eth2 mtu 9000 failed: RTNETLINK answers: Operation not permitted")


def test_name_and_links_are_one_or_the_other(sysfs, monkeypatch, capsys):
    fake_ip(monkeypatch, sysfs)
    out = run({"name": "eth1", "links": [{"name": "eth1"}]}, capsys)
    assert out["failed"] and "mutually exclusive: name|links" in out["msg"]
    out = run({"mtu": 8244}, capsys)
    assert out["failed"] and "one of the following is required: name, links" in out["msg"]
