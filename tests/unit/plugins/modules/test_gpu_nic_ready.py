# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_nic_ready run as a module against fake sysfs trees."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
from ansible.module_utils import basic

from ansible_collections.gpudirect.gcp.plugins.modules import gpu_nic_ready
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.nic.test_nic_sysfs import FakeSys
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules._module_args import patch_module_args


@pytest.fixture
def node(tmp_path, monkeypatch):
    """Two GPU NICs at the VPC MTU, a fake `ip` and `ping` (ping answers from node.ping_rc)."""
    fake = FakeSys(tmp_path)
    fake.nic("eth1", "02:00:0a:00:01:02", mtu=8244, pci=None)
    fake.nic("eth2", "02:00:0a:00:02:02", mtu=8244, pci=None)
    fake.addrs = {"eth1": "10.0.1.2", "eth2": "10.0.2.2"}
    fake.ping_rc = {}
    fake.calls = []

    def run_command(self, args, **kwargs):
        assert isinstance(args, list)
        fake.calls.append(args)
        if args[0].endswith("/ip"):
            return 0, json.dumps([{"ifname": n, "addr_info": [{"family": "inet", "local": a, "prefixlen": 24}]}
                                  for n, a in fake.addrs.items()]), ""
        rc = fake.ping_rc.get(args[-1], 0)
        return rc, "", "" if rc == 0 else "ping: local error: message too long, mtu=1500"
    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/usr/bin/" + name)
    monkeypatch.setattr(gpu_nic_ready.socket, "gethostname", lambda: "node1")
    return fake


def set_mtu(fake, name, mtu):
    with open(os.path.join(fake.root, "sys/class/net", name, "mtu"), "w") as handle:
        handle.write("%d\n" % mtu)


NICS = [{"name": "eth1", "mtu": 8244, "ip": "10.0.1.2"}, {"name": "eth2", "mtu": 8244, "ip": "10.0.2.2"}]


def run(args, root, capsys, **kw):
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            gpu_nic_ready.run_module(root=root, **kw)
    return json.loads(capsys.readouterr().out)


def test_all_ready(node, capsys):
    out = run({"nics": NICS}, node.root, capsys)
    assert out.get("failed") is not True and out["ready"] is True and out["changed"] is False
    assert [n["ready"] for n in out["nics"]] == [True, True]
    assert out["msg"] == "2 GPU NICs ready"


def test_one_message_names_every_bad_nic(node, capsys):
    set_mtu(node, "eth2", 1460)
    node.addrs["eth1"] = "10.0.1.9"
    out = run({"nics": NICS + [{"name": "eth3", "mtu": 8244}]}, node.root, capsys)
    assert out["failed"] is True and out["ready"] is False
    assert out["msg"] == ("3 of 3 GPU NICs not ready on node1: eth1: no IPv4 10.0.1.2 (has 10.0.1.9); "
                          "eth2: mtu 1460, expected 8244; eth3: no such interface")


def test_check_mode_checks_too(node, capsys):
    set_mtu(node, "eth1", 1460)
    out = run({"nics": NICS, "_ansible_check_mode": True}, node.root, capsys)
    assert out["failed"] is True and "eth1: mtu 1460, expected 8244" in out["msg"]


def test_nic_found_by_mac(node, capsys):
    out = run({"nics": [{"mac": "02:00:0A:00:02:02", "mtu": 8244, "nic": "nic2"}]}, node.root, capsys)
    assert out["nics"][0]["iface"] == "eth2" and out["nics"][0]["nic"] == "nic2" and out["ready"] is True


def test_peers_ping_full_size_dont_fragment(node, capsys):
    node.ping_rc["10.0.2.3"] = 1
    out = run({"nics": NICS, "peers": {"eth1": ["10.0.1.3"], "eth2": ["10.0.2.3"]}}, node.root, capsys)
    pings = [c for c in node.calls if c[0].endswith("/ping")]
    assert pings == [["/usr/bin/ping", "-M", "do", "-s", "8216", "-c", "1", "-W", "1", "-I", "eth1", "10.0.1.3"],
                     ["/usr/bin/ping", "-M", "do", "-s", "8216", "-c", "1", "-W", "1", "-I", "eth2", "10.0.2.3"]]
    assert out["failed"] is True
    assert "eth2: ping -M do -s 8216 to 10.0.2.3 failed (ping: local error: message too long, mtu=1500)" in out["msg"]
    assert "eth1" not in out["msg"]


def test_no_ping_when_local_checks_fail(node, capsys):
    set_mtu(node, "eth1", 1460)
    run({"nics": NICS[:1], "peers": {"eth1": ["10.0.1.3"]}}, node.root, capsys)
    assert not [c for c in node.calls if c[0].endswith("/ping")]


def test_timeout_polls_until_ready(node, capsys):
    set_mtu(node, "eth1", 1460)
    clock = {"t": 0.0}
    sleeps = []

    def sleep(seconds):
        sleeps.append(seconds)
        clock["t"] += seconds
        if len(sleeps) == 3:
            set_mtu(node, "eth1", 8244)  # as if networkd had applied it meanwhile
    out = run({"nics": NICS, "timeout": 10, "poll_interval": 2}, node.root, capsys,
              sleep=sleep, clock=lambda: clock["t"])
    assert out["ready"] is True and sleeps == [2, 2, 2] and out["elapsed"] == 6


def test_timeout_runs_out(node, capsys):
    set_mtu(node, "eth1", 1460)
    clock = {"t": 0.0}

    def sleep(seconds):
        clock["t"] += seconds
    out = run({"nics": NICS, "timeout": 5, "poll_interval": 1}, node.root, capsys,
              sleep=sleep, clock=lambda: clock["t"])
    assert out["failed"] is True and out["elapsed"] == 5 and "eth1: mtu 1460, expected 8244" in out["msg"]


def test_gib_without_rdma_devices_says_so(node, capsys):
    out = run({"nics": NICS, "family": "a3-ultra"}, node.root, capsys)
    assert out["ready"] is True
    assert out["rdma"] == {"checked": False, "reason": "no RDMA devices on this node", "devices": []}
    assert any("no RDMA devices on this node" in str(w) for w in out["warnings"])


def test_gib_rdma_required_fails_without_devices(node, capsys):
    out = run({"nics": NICS, "family": "a4", "rdma": "required"}, node.root, capsys)
    assert out["failed"] is True and "eth1: no RDMA devices on this node" in out["msg"]


def test_gib_rdma_checked(node, capsys):
    node.rdma("mlx5_0", "eth1", ipv4="10.0.1.2").rdma("mlx5_1", "eth2", state="1: DOWN", ipv4="10.0.2.2")
    out = run({"nics": NICS, "family": "a3-ultra"}, node.root, capsys)
    assert out["rdma"]["checked"] is True
    assert out["msg"] == "1 of 2 GPU NICs not ready on node1: eth2: RDMA mlx5_1 port 1 is DOWN, expected ACTIVE"


def test_tcpxo_family_skips_rdma_with_reason(node, capsys):
    out = run({"nics": NICS, "family": "a3-mega"}, node.root, capsys)
    assert out["rdma"]["checked"] is False and out["rdma"]["reason"] == "a3-mega uses tcpxo, not RDMA"


@pytest.mark.parametrize("args,msg", [
    ({"nics": [{"mtu": 8244}]}, "nics[0] has neither name nor mac"),
    ({"nics": NICS, "timeout": -1}, "timeout must be 0 or more, got -1"),
    ({"nics": NICS, "peers": {"eth1": "10.0.1.3"}}, "peers[eth1] must be a list of addresses"),
    ({"nics": [{"name": "eth1"}], "peers": {"eth1": ["10.0.1.3"]}}, "peers need the NICs' mtu to size the ping"),
])
def test_bad_input_is_one_line(node, capsys, args, msg):
    out = run(args, node.root, capsys)
    assert out["failed"] is True and out["msg"] == msg


def test_unknown_family_is_one_line(node, capsys):
    out = run({"nics": NICS, "family": "h100"}, node.root, capsys)
    assert out["msg"].startswith("family: unknown GPU family 'h100'; known: a3-edge, a3-high")


# what gpu_nic_facts returns: the record goes on as it is, and its "mtu" is what the map saw then
MAP = [{"nic": "nic1", "network": "vpc-1", "mac": "02:00:0a:00:01:02", "ip": "10.0.1.2", "expected_mtu": 8244,
        "iface": "eth1", "matched_by": "mac", "mtu": 8244},
       {"nic": "nic2", "network": "vpc-2", "mac": "02:00:0a:00:02:02", "ip": "10.0.2.2", "expected_mtu": 8244,
        "iface": "eth2", "matched_by": "mac", "mtu": 1460}]


def test_nic_map_records_are_checked_against_their_expected_mtu(node, capsys):
    out = run({"nic_map": MAP}, node.root, capsys)
    assert out["ready"] is True and [n["nic"] for n in out["nics"]] == ["nic1", "nic2"]
    set_mtu(node, "eth2", 1460)
    out = run({"nic_map": [dict(MAP[1], mtu=8244)]}, node.root, capsys)
    assert out["failed"] is True and "eth2: mtu 1460, expected 8244" in out["msg"]


def test_a_nic_map_record_the_map_found_no_interface_for_is_looked_up_by_mac(node, capsys):
    out = run({"nic_map": [dict(MAP[0], iface=None)]}, node.root, capsys)
    assert out["ready"] is True and out["nics"][0]["iface"] == "eth1"
    out = run({"nic_map": [dict(MAP[0], iface=None, mac=None)]}, node.root, capsys)
    assert out["failed"] is True and out["msg"] == "nic_map[0] (nic1) has neither iface nor mac"


def test_nic_map_and_nics_are_one_or_the_other(node, capsys):
    out = run({"nic_map": MAP, "nics": NICS}, node.root, capsys)
    assert out["failed"] is True and "mutually exclusive" in out["msg"]
