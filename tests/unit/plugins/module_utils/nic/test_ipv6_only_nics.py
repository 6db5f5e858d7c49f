# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A4X Max's RDMA NICs have no IPv4: they are found, checked and pinged by their IPv6 address."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import nic_map as M
from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import nic_ready as R
from ansible_collections.gpudirect.gcp.plugins.module_utils.nic.nic_sysfs import SysfsReader
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.nic.test_nic_sysfs import FakeSys


def iface6(name, mac, addresses, mtu=8896):
    return {"name": name, "mac": mac, "mtu": mtu, "admin_up": True, "operstate": "up", "carrier": True,
            "ipv4": [], "ipv6": list(addresses)}


# two RDMA NICs on the one shared subnet of the RoCE VPC; the API gives no MAC, only the IPv6 address
INTERFACES = {"gpu0rdma0": iface6("gpu0rdma0", "02:00:00:00:01:00", ["fd20:1:2:3:0:1::"]),
              "gpu0rdma1": iface6("gpu0rdma1", "02:00:00:00:01:01", ["fd20:1:2:3:0:5::"])}
EXPECTED = [{"name": "nic6", "network": "rdma-net", "ip": None, "ipv6": "fd20:1:2:3:0:5:0:0", "mtu": 8896},
            {"name": "nic2", "network": "rdma-net", "ip": None, "ipv6": "FD20:1:2:3:0:1::", "mtu": 8896}]


def test_nics_without_ipv4_are_mapped_by_their_ipv6_in_any_spelling():
    mapped = M.map_nics(EXPECTED, INTERFACES)
    assert [(m["nic"], m["iface"], m["matched_by"], m["ipv6"]) for m in mapped] == [
        ("nic6", "gpu0rdma1", "ipv6", "fd20:1:2:3:0:5::"), ("nic2", "gpu0rdma0", "ipv6", "fd20:1:2:3:0:1::")]
    # a NIC whose address no interface holds stays unmapped, never guessed from the others
    lost = M.map_nics([dict(EXPECTED[0], ipv6="fd20:1:2:3:0:9::")], INTERFACES)
    assert lost[0]["iface"] is None and lost[0]["matched_by"] is None
    assert M.norm_ipv6("not-an-address") is None and M.norm_ipv6(None) is None


def test_an_ipv6_only_nic_is_ready_with_its_address_and_named_without_it():
    record = M.map_nics(EXPECTED[1:], INTERFACES)[0]
    assert R.check_nic(record, INTERFACES)["problems"] == []
    moved = dict(INTERFACES, gpu0rdma0=iface6("gpu0rdma0", "02:00:00:00:01:00", []))
    assert R.check_nic(record, moved)["problems"] == ["no IPv6 fd20:1:2:3:0:1:: (has none)"]


def test_a_full_size_ping6_leaves_room_for_the_larger_ipv6_header():
    assert R.ping_argv("/bin/ping", "gpu0rdma0", 8896, "fd20:1:2:3:0:2::") == [
        "/bin/ping", "-M", "do", "-s", "8848", "-c", "1", "-W", "1", "-I", "gpu0rdma0", "fd20:1:2:3:0:2::"]
    res = R.check_nic(M.map_nics(EXPECTED[1:], INTERFACES)[0], INTERFACES)
    R.check_peers(res, ["fd20:1:2:3:0:2::"], lambda argv: (1, "", "ping: local error: message too long, mtu=1500"),
                  "/bin/ping")
    assert res["problems"] == ["ping -M do -s 8848 to fd20:1:2:3:0:2:: failed "
                               "(ping: local error: message too long, mtu=1500)"]


def test_the_rdma_gid_table_must_hold_the_ipv6_address_of_an_ipv6_only_nic(tmp_path):
    fake = FakeSys(tmp_path).rdma("mlx5_0", "gpu0rdma0", ipv6="fd20:1:2:3:0:1::")
    fake.rdma("mlx5_4", "gpu0rdma1")
    results = [R.check_nic(r, INTERFACES) for r in M.map_nics(EXPECTED[::-1], INTERFACES)]
    R.check_rdma(results, SysfsReader(fake.root).rdma_devices(), "required")
    assert results[0]["problems"] == []
    assert results[1]["problems"] == ["RDMA mlx5_4 GID table lacks fd20:1:2:3:0:5:: (has no global IPv6 GIDs)"]


def test_the_gid_index_nccl_is_pinned_to_must_hold_the_nics_address(tmp_path):
    # A4X Max pins NCCL_IB_GID_INDEX=3: NCCL takes the GID there, whatever else the table holds
    assert R.gid_index("a4x-max") == 3 and R.gid_index("a4x") is None and R.gid_index(None) is None
    assert R.rdma_mode("auto", "a4x-max") == ("auto", None, 3)
    fake = FakeSys(tmp_path).rdma("mlx5_0", "gpu0rdma0", ipv6="fd20:1:2:3:0:1::")
    results = [R.check_nic(M.map_nics(EXPECTED[1:], INTERFACES)[0], INTERFACES)]
    R.check_rdma(results, SysfsReader(fake.root).rdma_devices(), "required", 3)
    assert results[0]["problems"] == []
    # the address only at index 2 (a RoCE v1 GID), another at index 3
    (tmp_path / "sys/class/infiniband/mlx5_0/ports/1/gids/3").write_text("fd20:0001:0002:0003:0000:0009:0000:0000\n")
    results = [R.check_nic(M.map_nics(EXPECTED[1:], INTERFACES)[0], INTERFACES)]
    R.check_rdma(results, SysfsReader(fake.root).rdma_devices(), "required", 3)
    assert results[0]["problems"] == ["RDMA mlx5_0 GID index 3 holds fd20:1:2:3:0:9::, not fd20:1:2:3:0:1::, "
                                      "and NCCL_IB_GID_INDEX is 3 for this family"]
