# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import nic_ready as R
from ansible_collections.gpudirect.gcp.plugins.module_utils.nic.nic_sysfs import SysfsReader
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.nic.test_nic_sysfs import FakeSys


def iface(name, mac="02:00:00:00:00:01", mtu=8244, up=True, oper="up", ips=("10.0.1.2",)):
    return {"name": name, "mac": mac, "mtu": mtu, "admin_up": up, "operstate": oper, "carrier": oper in ("up", "unknown"),
            "ipv4": list(ips)}


def test_ready_nic_has_no_problems():
    res = R.check_nic({"iface": "eth1", "expected_mtu": 8244, "ip": "10.0.1.2"}, {"eth1": iface("eth1")})
    assert res["problems"] == [] and res["iface"] == "eth1" and res["up"] is True


def test_wrong_mtu_message():
    res = R.check_nic({"iface": "eth3", "expected_mtu": 8244}, {"eth3": iface("eth3", mtu=1460)})
    assert res["problems"] == ["mtu 1460, expected 8244"]


def test_bigger_mtu_is_wrong_too():
    res = R.check_nic({"iface": "eth3", "expected_mtu": 8244}, {"eth3": iface("eth3", mtu=8896)})
    assert res["problems"] == ["mtu 8896, expected 8244"]


def test_down_and_missing_ip():
    res = R.check_nic({"iface": "eth2", "ip": "10.0.2.2"}, {"eth2": iface("eth2", oper="lowerlayerdown", ips=())})
    assert res["problems"] == ["down (no carrier)", "no IPv4 10.0.2.2 (has none)"] and res["up"] is False
    flapping = dict(iface("eth2"), operstate="dormant")
    assert R.check_nic({"iface": "eth2"}, {"eth2": flapping})["problems"] == ["down (operstate dormant)"]
    res = R.check_nic({"iface": "eth2"}, {"eth2": iface("eth2", up=False, oper="down")})
    assert res["problems"] == ["down (administratively)"] and res["up"] is False
    assert R.check_nic({"iface": "eth9"}, {})["up"] is False


def test_operstate_unknown_counts_as_up():
    assert R.check_nic({"iface": "eth1"}, {"eth1": iface("eth1", oper="unknown")})["problems"] == []


def test_missing_by_name_and_by_mac():
    assert R.check_nic({"iface": "eth9"}, {})["problems"] == ["no such interface"]
    res = R.check_nic({"mac": "AA:BB:CC:DD:EE:FF"}, {})
    assert res["name"] == "aa:bb:cc:dd:ee:ff"
    assert res["problems"] == ["no interface with MAC aa:bb:cc:dd:ee:ff"]


def test_resolve_by_mac():
    res = R.check_nic({"mac": "02:00:00:00:00:07", "expected_mtu": 8244}, {"enp6s0": iface("enp6s0", mac="02:00:00:00:00:07")})
    assert res["iface"] == "enp6s0" and res["name"] == "enp6s0"


def test_summary_names_every_bad_nic():
    ifaces = {"eth1": iface("eth1"), "eth3": iface("eth3", mtu=1460), "eth4": iface("eth4", up=False, oper="down")}
    results = [R.check_nic({"iface": n, "expected_mtu": 8244}, ifaces) for n in ("eth1", "eth3", "eth4")]
    assert R.summary(results, "node1") == ("2 of 3 GPU NICs not ready on node1: eth3: mtu 1460, expected 8244; "
                                           "eth4: down (administratively)")
    assert R.summary(results[:1]) is None


def test_ping_argv_is_full_size_dont_fragment():
    assert R.ping_argv("/bin/ping", "eth1", 8244, "10.0.1.3") == [
        "/bin/ping", "-M", "do", "-s", "8216", "-c", "1", "-W", "1", "-I", "eth1", "10.0.1.3"]


def test_check_peers_records_failures():
    res = R.check_nic({"iface": "eth1", "expected_mtu": 8244}, {"eth1": iface("eth1")})
    answers = {"10.0.1.3": (0, "", ""), "10.0.1.4": (1, "", "ping: local error: message too long, mtu=1460")}
    R.check_peers(res, ["10.0.1.3", "10.0.1.4"], lambda argv: answers[argv[-1]], "/bin/ping")
    assert [p["ok"] for p in res["peers"]] == [True, False]
    assert res["problems"] == ["ping -M do -s 8216 to 10.0.1.4 failed (ping: local error: message too long, mtu=1460)"]


def _gib_results(fake, ips):
    ifaces = {}
    for i, ip in enumerate(ips):
        ifaces["gpu%drdma0" % i] = iface("gpu%drdma0" % i, mac="02:00:00:00:01:%02x" % i, ips=(ip,))
    return [R.check_nic({"iface": n, "ip": ifaces[n]["ipv4"][0]}, ifaces) for n in sorted(ifaces)]


def test_rdma_active_with_ip_in_gid_table(tmp_path):
    fake = FakeSys(tmp_path).rdma("mlx5_0", "gpu0rdma0", ipv4="10.128.0.2").rdma("mlx5_1", "gpu1rdma0",
                                                                                 ipv4="10.128.1.2")
    results = _gib_results(fake, ["10.128.0.2", "10.128.1.2"])
    out = R.check_rdma(results, SysfsReader(fake.root).rdma_devices(), "auto")
    assert out["checked"] is True and out["devices"] == ["mlx5_0", "mlx5_1"]
    assert [r["problems"] for r in results] == [[], []]
    assert results[0]["rdma_device"] == "mlx5_0"


def test_rdma_down_port_and_missing_gid(tmp_path):
    fake = FakeSys(tmp_path).rdma("mlx5_0", "gpu0rdma0", state="1: DOWN", ipv4="10.128.0.2")
    fake.rdma("mlx5_1", "gpu1rdma0", ipv4=None)
    results = _gib_results(fake, ["10.128.0.2", "10.128.1.2"])
    R.check_rdma(results, SysfsReader(fake.root).rdma_devices(), "auto")
    assert results[0]["problems"] == ["RDMA mlx5_0 port 1 is DOWN, expected ACTIVE"]
    assert results[1]["problems"] == ["RDMA mlx5_1 GID table lacks 10.128.1.2 (has no IPv4 GIDs)"]


def test_rdma_device_missing_for_a_nic(tmp_path):
    fake = FakeSys(tmp_path).rdma("mlx5_0", "gpu0rdma0", ipv4="10.128.0.2")
    results = _gib_results(fake, ["10.128.0.2", "10.128.1.2"])
    R.check_rdma(results, SysfsReader(fake.root).rdma_devices(), "required")
    assert results[1]["problems"] == ["no RDMA device for this interface"]


def test_no_rdma_devices_auto_says_so_required_fails(tmp_path):
    results = _gib_results(FakeSys(tmp_path), ["10.128.0.2"])
    out = R.check_rdma(results, {}, "auto")
    assert out == {"checked": False, "reason": "no RDMA devices on this node", "devices": []}
    assert results[0]["problems"] == []
    out = R.check_rdma(results, {}, "required")
    assert results[0]["problems"] == ["no RDMA devices on this node"] and out["checked"] is True


def test_rdma_skip():
    assert R.check_rdma([], {}, "skip")["checked"] is False


def test_a_ping_the_node_could_not_send_is_retried_and_never_a_path_fault():
    res = R.check_nic({"iface": "eth1", "expected_mtu": 8244}, {"eth1": iface("eth1")})
    full = (2, "", "ping: sendmsg: No buffer space available")
    answers = {"10.0.1.3": [full, full, (0, "", "")], "10.0.1.4": [full] * 4}
    pauses = []
    local = R.check_peers(res, ["10.0.1.3", "10.0.1.4"], lambda argv: answers[argv[-1]].pop(0), "/bin/ping",
                          sleep=pauses.append)
    assert [(p["ok"], p["tries"]) for p in res["peers"]] == [(True, 3), (None, 4)]
    assert res["peers"][1]["local_error"] == "No buffer space available"
    assert pauses == [0.2, 0.4, 0.2, 0.4, 0.8]
    assert local == res["problems"] == [
        "ping to 10.0.1.4 could not be sent after 4 tries (No buffer space available): this node's send queue "
        "or neighbour table is full"]
    assert not any(p.startswith("ping -M do") for p in res["problems"])
