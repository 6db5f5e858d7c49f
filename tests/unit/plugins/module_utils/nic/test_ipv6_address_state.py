# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An IPv6 address is ready only once duplicate address detection passed: a tentative or dadfailed one, or
only the link-local one, leaves its NIC not ready, in words of the NIC's own address family."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import nic_map as M
from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import nic_ready as R
from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import nic_sysfs as S
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.nic.test_nic_sysfs import FakeSys

MAC = "02:00:00:00:01:00"
GLOBAL = {"family": "inet6", "local": "fd20:1:2:3:0:1::", "prefixlen": 96, "scope": "global",
          "valid_life_time": 4294967295, "preferred_life_time": 4294967295}
LINK = {"family": "inet6", "local": "fe80::4001:aff:fe00:102", "prefixlen": 64, "scope": "link",
        "valid_life_time": 4294967295, "preferred_life_time": 4294967295}
# the record of an IPv6-only RDMA NIC (A4X Max), as the NIC map makes it
RECORD = {"nic": "nic2", "network": "rdma-net", "mac": MAC, "ip": None, "ipv6": "fd20:1:2:3:0:1::",
          "expected_mtu": 8896, "iface": "gpu0rdma0"}


def _interfaces(tmp_path, addr_info, name="gpu0rdma0"):
    """What the modules read: a fake sysfs tree and `ip -j addr show` JSON, through read_interfaces."""
    fake = FakeSys(tmp_path)
    fake.nic(name, MAC, mtu=8896, driver="mlx5_core")
    text = json.dumps([{"ifindex": 5, "ifname": name, "addr_info": addr_info}])
    return S.read_interfaces(S.SysfsReader(fake.root), lambda argv: (0, text, ""), "/sbin/ip"), fake


def test_the_address_flags_and_the_link_local_address_are_read(tmp_path):
    out, _fake = _interfaces(tmp_path, [dict(GLOBAL, tentative=True),
                                        dict(GLOBAL, local="fd20:1:2:3:0:9:0:0", tentative=True, dadfailed=True),
                                        LINK])
    info = out["gpu0rdma0"]
    assert info["ipv6"] == ["fd20:1:2:3:0:1::", "fd20:1:2:3:0:9:0:0"]
    assert info["ipv6_link_local"] == ["fe80::4001:aff:fe00:102"]
    # keyed by the address in its one canonical form; dadfailed wins over the tentative flag it comes with
    assert info["address_states"] == {"fd20:1:2:3:0:1::": "tentative", "fd20:1:2:3:0:9::": "dadfailed"}
    ready, _fake = _interfaces(tmp_path / "ready", [GLOBAL, LINK])
    assert ready["gpu0rdma0"]["address_states"] == {}


def test_a_tentative_ipv6_address_is_not_ready_yet(tmp_path):
    interfaces, _fake = _interfaces(tmp_path, [dict(GLOBAL, tentative=True), LINK])
    results, _rdma = R.check_node([RECORD], interfaces, {}, ("skip", None, None), None, None, lambda i, r: [])
    assert results[0]["ready"] is False
    assert results[0]["problems"] == ["IPv6 fd20:1:2:3:0:1:: is tentative (duplicate address detection "
                                      "has not finished)"]
    assert R.summary(results) == ("1 of 1 GPU NICs not ready: gpu0rdma0: IPv6 fd20:1:2:3:0:1:: is tentative "
                                  "(duplicate address detection has not finished)")


def test_an_ipv6_address_that_failed_duplicate_address_detection(tmp_path):
    interfaces, _fake = _interfaces(tmp_path, [dict(GLOBAL, tentative=True, dadfailed=True), LINK])
    problems = R.check_nic(RECORD, interfaces)["problems"]
    assert problems == ["IPv6 fd20:1:2:3:0:1:: failed duplicate address detection (dadfailed): another "
                        "host on the network holds it"]


def test_an_unexpected_address_that_failed_duplicate_address_detection_is_named_too(tmp_path):
    extra = dict(GLOBAL, local="fd20:1:2:3:0:9::", tentative=True, dadfailed=True)
    interfaces, _fake = _interfaces(tmp_path, [GLOBAL, extra, LINK])
    assert R.check_nic(RECORD, interfaces)["problems"] == [
        "IPv6 fd20:1:2:3:0:9:: failed duplicate address detection (dadfailed): another host on the network "
        "holds it"]


@pytest.mark.parametrize("link_state, why", [
    ({}, "it holds only its link-local address fe80::4001:aff:fe00:102"),
    ({"tentative": True, "dadfailed": True},
     "it holds only its link-local address fe80::4001:aff:fe00:102, which failed duplicate address detection"),
])
def test_a_nic_with_only_its_link_local_address_is_missing_its_ipv6_address(tmp_path, link_state, why):
    interfaces, _fake = _interfaces(tmp_path, [dict(LINK, **link_state)])
    problems = R.check_nic(RECORD, interfaces)["problems"]
    assert problems == ["missing its IPv6 address fd20:1:2:3:0:1:: (%s)" % why]


def test_an_ipv6_only_nic_speaks_ipv6_even_with_a_stray_ipv4_address(tmp_path):
    """A link-local IPv4 (169.254/16, what a DHCP client leaves on a NIC without a lease) is not the NIC's
    address: the GID check looks for its IPv6 address."""
    interfaces, fake = _interfaces(tmp_path, [{"family": "inet", "local": "169.254.7.9", "prefixlen": 16,
                                               "scope": "link"}, GLOBAL, LINK])
    fake.rdma("mlx5_0", "gpu0rdma0", ipv6="fd20:1:2:3:0:1::")
    results = [R.check_nic(RECORD, interfaces)]
    R.check_rdma(results, S.SysfsReader(fake.root).rdma_devices(), "required", 3)
    assert results[0]["problems"] == []
    fake.rdma("mlx5_0", "gpu0rdma0", ipv6="fd20:1:2:3:0:7::")
    results = [R.check_nic(RECORD, interfaces)]
    R.check_rdma(results, S.SysfsReader(fake.root).rdma_devices(), "required")
    assert results[0]["problems"] == ["RDMA mlx5_0 GID table lacks fd20:1:2:3:0:1:: (has fd20:1:2:3:0:7::)"]
    assert not any("IPv4" in p or "IP " in p for p in results[0]["problems"])


def test_an_ipv4_nic_is_judged_on_its_ipv4_address_alone(tmp_path):
    interfaces, _fake = _interfaces(tmp_path, [{"family": "inet", "local": "10.0.1.2", "prefixlen": 24,
                                                "scope": "global"}, LINK], name="eth1")
    record = {"nic": "nic1", "mac": MAC, "ip": "10.0.1.2", "ipv6": None, "expected_mtu": 8896, "iface": "eth1"}
    assert R.check_nic(record, interfaces)["problems"] == []
    assert R.check_nic(dict(record, ip="10.0.1.3"), interfaces)["problems"] == ["no IPv4 10.0.1.3 (has 10.0.1.2)"]
    assert M.norm_ipv6(interfaces["eth1"]["ipv6_link_local"][0]) == "fe80::4001:aff:fe00:102"
