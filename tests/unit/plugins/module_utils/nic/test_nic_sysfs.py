# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""SysfsReader against fake sysfs trees (FakeSys is reused by the module tests)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import json
import os

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import nic_sysfs as S


class FakeSys(object):
    """Builds a sysfs/dev tree like a GPU VM's under a temporary root."""

    def __init__(self, root):
        self.root = str(root)

    def _write(self, path, text):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as handle:
            handle.write("%s\n" % text)

    def nic(self, name, mac, mtu=1460, operstate="up", up=True, carrier=True, driver="gve",
            pci="0000:06:00.0", speed=None, link_type=1):
        base = "sys/class/net/%s/" % name
        self._write(base + "address", mac)
        self._write(base + "mtu", mtu)
        self._write(base + "operstate", operstate)
        self._write(base + "flags", "0x1003" if up else "0x1002")
        self._write(base + "carrier", 1 if carrier else 0)
        self._write(base + "type", link_type)
        if speed is not None:
            self._write(base + "speed", speed)
        if pci:
            dev = os.path.join(self.root, "sys/devices/pci0000:00", pci)
            os.makedirs(dev, exist_ok=True)
            os.symlink(dev, os.path.join(self.root, base, "device"))
            if driver:
                drv = os.path.join(self.root, "sys/bus/pci/drivers", driver)
                os.makedirs(drv, exist_ok=True)
                os.symlink(drv, os.path.join(dev, "driver"))
        return self

    def rdma(self, dev, netdev, state="4: ACTIVE", ipv4=None, port="1", ipv6=None):
        base = "sys/class/infiniband/%s/ports/%s/" % (dev, port)
        self._write(base + "state", state)
        gids = ["fe80:0000:0000:0000:0000:0000:0000:0001", "fe80:0000:0000:0000:0000:0000:0000:0001"]
        if ipv4:
            octets = [int(o) for o in ipv4.split(".")]
            mapped = "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(octets)
            gids += [mapped, mapped]
        if ipv6:
            # the kernel writes a GID as eight groups of four hex digits
            full = ipaddress.IPv6Address(ipv6).exploded
            gids += [full, full]
        for idx in range(4):
            gid = gids[idx] if idx < len(gids) else "0000:0000:0000:0000:0000:0000:0000:0000"
            self._write(base + "gids/%d" % idx, gid)
            self._write(base + "gid_attrs/ndevs/%d" % idx, netdev)
            self._write(base + "gid_attrs/types/%d" % idx, "RoCE v2" if idx % 2 else "IB/RoCE v1")
        return self

    def aperture(self, count):
        for i in range(count):
            self._write("dev/aperture_devices/0000:%02x:00.1/resource0" % (6 + i), "")
        return self

    def dmabuf(self):
        self._write("dev/dmabuf_import_helper", "")
        return self


IP_JSON = json.dumps([
    {"ifindex": 1, "ifname": "lo", "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8}]},
    {"ifindex": 3, "ifname": "eth1", "addr_info": [{"family": "inet", "local": "10.0.1.2", "prefixlen": 24}]},
    {"ifindex": 4, "ifname": "eth2", "addr_info": []},
    # an IPv6-only RDMA NIC (A4X Max): a global address, and the link-local one every interface has
    {"ifindex": 5, "ifname": "gpu0rdma0", "addr_info": [
        {"family": "inet6", "local": "fd20:1:2:3:0:1::", "prefixlen": 96, "scope": "global"},
        {"family": "inet6", "local": "fe80::4001:aff:fe00:102", "prefixlen": 64, "scope": "link"}]},
])


@pytest.fixture
def fake(tmp_path):
    return FakeSys(tmp_path)


def test_parse_ip_addr_json():
    assert S.parse_ip_addr_json(IP_JSON) == {"lo": ["127.0.0.1/8"], "eth1": ["10.0.1.2/24"], "eth2": [],
                                             "gpu0rdma0": []}


def test_ipv6_addresses_are_read_without_the_link_local_ones():
    assert S.parse_ip_addr_json(IP_JSON, "inet6") == {"lo": [], "eth1": [], "eth2": [],
                                                      "gpu0rdma0": ["fd20:1:2:3:0:1::/96"]}


def test_parse_ip_addr_json_bad_text_is_one_line():
    with pytest.raises(ValueError, match="cannot parse `ip -j addr show` output"):
        S.parse_ip_addr_json("not json")


def test_interface_fields(fake):
    fake.nic("eth1", "42:01:0A:00:01:02", mtu=8244, speed=200000)
    info = S.SysfsReader(fake.root).interface("eth1", S.parse_ip_addr_json(IP_JSON))
    assert info["mac"] == "42:01:0a:00:01:02"
    assert info["mtu"] == 8244
    assert info["admin_up"] is True and info["carrier"] is True and info["operstate"] == "up"
    assert info["ipv4"] == ["10.0.1.2"] and info["ipv4_cidrs"] == ["10.0.1.2/24"]
    assert info["driver"] == "gve" and info["pci_address"] == "0000:06:00.0"
    assert info["speed_mbps"] == 200000


def test_virtual_nic_has_no_pci_driver_or_speed(fake):
    fake.nic("veth0", "02:00:00:00:00:01", pci=None, speed=-1)
    info = S.SysfsReader(fake.root).interface("veth0")
    assert info["pci_address"] is None and info["driver"] is None and info["speed_mbps"] is None
    assert info["ipv4"] == []


def test_interfaces_skip_loopback_and_non_ethernet(fake):
    fake.nic("eth1", "02:00:00:00:00:01").nic("lo", "00:00:00:00:00:00", link_type=772, pci=None)
    fake.nic("sit0", "00:00:00:00", link_type=776, pci=None)
    assert sorted(S.SysfsReader(fake.root).interfaces()) == ["eth1"]


def test_admin_down(fake):
    fake.nic("eth3", "02:00:00:00:00:03", up=False, operstate="down", carrier=False)
    info = S.SysfsReader(fake.root).interface("eth3")
    assert info["admin_up"] is False and info["operstate"] == "down" and info["carrier"] is False


def test_missing_interface_is_none(fake):
    assert S.SysfsReader(fake.root).interface("eth9") is None
    assert S.SysfsReader(fake.root).interfaces() == {}


def test_rdma_devices_with_gids(fake):
    fake.rdma("mlx5_0", "gpu0rdma0", ipv4="10.128.0.2").rdma("mlx5_1", "gpu1rdma0", state="1: DOWN")
    reader = S.SysfsReader(fake.root)
    assert reader.rdma_present()
    devs = reader.rdma_devices()
    assert sorted(devs) == ["mlx5_0", "mlx5_1"]
    port = devs["mlx5_0"]["ports"]["1"]
    assert port["state"] == "ACTIVE"
    assert [g["index"] for g in port["gids"]] == [0, 1, 2, 3]
    assert port["gids"][3]["ipv4"] == "10.128.0.2" and port["gids"][0]["ipv4"] is None
    assert devs["mlx5_0"]["netdevs"] == ["gpu0rdma0"]
    # zero GIDs are empty slots, not entries
    assert len(devs["mlx5_1"]["ports"]["1"]["gids"]) == 2
    assert devs["mlx5_1"]["ports"]["1"]["state"] == "DOWN"


def test_no_rdma(fake):
    reader = S.SysfsReader(fake.root)
    assert not reader.rdma_present() and reader.rdma_devices() == {}


def test_a3_mega_devices(fake):
    reader = S.SysfsReader(fake.root)
    assert reader.aperture_devices() == [] and not reader.device_exists("/dev/dmabuf_import_helper")
    fake.aperture(8).dmabuf()
    assert len(reader.aperture_devices()) == 8 and reader.aperture_devices()[0] == "0000:06:00.1"
    assert reader.device_exists("/dev/dmabuf_import_helper")


def test_gid_ipv4():
    assert S.gid_ipv4("0000:0000:0000:0000:0000:ffff:0a80:0002") == "10.128.0.2"
    assert S.gid_ipv4("fe80:0000:0000:0000:0000:0000:0000:0001") is None
    assert S.gid_ipv4("garbage") is None


def test_read_interfaces_needs_ip(fake):
    with pytest.raises(ValueError, match="the ip command"):
        S.read_interfaces(S.SysfsReader(fake.root), None, None)


def test_read_interfaces_reports_ip_failure(fake):
    with pytest.raises(ValueError, match="failed: boom"):
        S.read_interfaces(S.SysfsReader(fake.root), lambda argv: (1, "", "boom"), "/sbin/ip")


def test_read_interfaces_runs_ip_as_argv(fake):
    fake.nic("eth1", "02:00:00:00:00:01")
    seen = []

    def run(argv):
        seen.append(argv)
        return 0, IP_JSON, ""
    out = S.read_interfaces(S.SysfsReader(fake.root), run, "/sbin/ip")
    assert seen == [["/sbin/ip", "-j", "addr", "show"]]
    assert out["eth1"]["ipv4"] == ["10.0.1.2"] and out["eth1"]["ipv6"] == []
