# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sandbox's node variants: what manages the network on each image, and the
configuration each variant's node holds before its first boot."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import configparser
import os
import sys

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


@pytest.fixture(name="lib")
def _lib():
    sys.path.insert(0, os.path.join(ROOT, "tests", "sandbox"))
    try:
        from sandboxlib import images, layout, netconfig  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.pop(0)
    return images, layout, netconfig


def _plan(layout, variant):
    return layout.plan("unit", "a3-high", 2, 150, variant)


def test_every_variant_has_an_image(lib):
    images, layout = lib[0], lib[1]
    assert sorted(images.VARIANT_IMAGES) == sorted(layout.VARIANTS)


def test_el_runs_networkmanager_and_never_networkd(lib):
    images = lib[0]
    name, packages, enabled, masked, _dirs = images.variant_recipe("el")
    assert name.endswith("-el") and "network-manager" in packages
    assert "NetworkManager.service" in enabled and "systemd-networkd.service" not in enabled
    assert "systemd-networkd.service" in masked


def test_ubuntu_renders_netplan_for_networkd(lib):
    images = lib[0]
    _name, packages, enabled, masked, _dirs = images.variant_recipe("ubuntu")
    assert "netplan.io" in packages and "systemd-networkd.service" in enabled
    assert "systemd-networkd.service" not in masked


def test_cos_boots_through_its_filesystem_setup_and_says_it_is_cos(lib):
    images = lib[0]
    name, packages, enabled, masked, dirs = images.variant_recipe("cos")
    assert name.endswith("-cos") and packages == images.NODE_PACKAGES
    assert "systemd-networkd.service" in enabled and masked == images.NODE_MASKED
    overlay = [d for d in dirs if d.endswith("node-cos")]
    assert len(overlay) == 1
    with open(os.path.join(overlay[0], "etc", "os-release")) as fh:
        assert "ID=cos\n" in fh.read()
    init = images.init_command("cos")
    script = os.path.join(overlay[0], init.lstrip("/"))
    assert os.access(script, os.X_OK)
    with open(script) as fh:
        text = fh.read()
    # a read-only root, an /etc that is a fresh tmpfs at every boot, then systemd as PID 1
    assert "mount -o remount,bind,ro /" in text and "mount -t tmpfs" in text and text.rstrip().endswith(
        "exec /sbin/init")
    assert [images.init_command(v) for v in ("ubuntu", "el")] == ["/sbin/init", "/sbin/init"]


def test_the_default_node_is_googles_ubuntu_image(lib):
    images, layout = lib[0], lib[1]
    assert layout.DEFAULT_VARIANT == "ubuntu"
    assert layout.plan("unit", "a3-mega", 1, 150)["variant"] == "ubuntu"
    assert images.variant_recipe()[0].endswith("-ubuntu")


def test_unknown_variant_is_one_line(lib):
    images = lib[0]
    with pytest.raises(images.common.SandboxError, match="node variant 'suse' unknown"):
        images.variant_recipe("suse")


def test_netplan_file_matches_every_nic_by_mac_with_set_name(lib):
    layout, netconfig = lib[1], lib[2]
    plan = _plan(layout, "ubuntu")
    node = plan["nodes"][1]
    eths = yaml.safe_load(netconfig.netplan_cloud_init(plan, node))["network"]["ethernets"]
    assert list(eths) == [nic["iface"] for nic in node["nics"]]
    for nic in node["nics"]:
        conf = eths[nic["iface"]]
        assert conf["match"] == {"macaddress": nic["mac"]} and conf["set-name"] == nic["iface"]
        assert conf["addresses"] == ["%s/24" % nic["ip"]]
        # the MTU is what the role must persist: the image sets none
        assert "mtu" not in conf


def test_networkmanager_keyfiles_one_per_nic(lib):
    layout, netconfig = lib[1], lib[2]
    plan = _plan(layout, "el")
    node = plan["nodes"][0]
    files = netconfig.nm_keyfiles(plan, node)
    assert len(files) == len(node["nics"])
    for (path, text), nic in zip(files, node["nics"]):
        assert path == "%s/cloud-init-%s.nmconnection" % (netconfig.NM_DIR, nic["iface"])
        key = configparser.ConfigParser(interpolation=None)
        key.read_string(text)
        assert key["connection"]["id"] == "cloud-init %s" % nic["iface"]
        assert key["connection"]["interface-name"] == nic["iface"]
        assert key["ethernet"]["mac-address"] == nic["mac"].upper()
        assert "mtu" not in key["ethernet"]
        assert key["ipv4"]["address1"] == "%s/24" % nic["ip"]
    first = configparser.ConfigParser(interpolation=None)
    first.read_string(files[0][1])
    assert first["ipv4"]["gateway"] == plan["networks"][0]["gateway"]
    second = configparser.ConfigParser(interpolation=None)
    second.read_string(files[1][1])
    assert second["ipv4"]["never-default"] == "true" and "gateway" not in second["ipv4"]


def test_el_and_ubuntu_nodes_use_pci_names(lib):
    layout = lib[1]
    cos = [n["iface"] for n in _plan(layout, "cos")["nodes"][0]["nics"]]
    el = [n["iface"] for n in _plan(layout, "el")["nodes"][0]["nics"]]
    assert cos[0] == "eth0" and el == [n["iface"] for n in _plan(layout, "ubuntu")["nodes"][0]["nics"]]
    assert all(name.startswith("enp") for name in el[1:])


def test_a4x_max_gpu_nics_share_one_ipv6_only_network_as_macvlan_links_on_one_port(lib):
    layout, netconfig = lib[1], lib[2]
    plan = layout.plan("unit", "a4x-max", 2, 150)
    nets = dict((n["name"], n) for n in plan["networks"])
    assert len(nets) == 3 and nets["unit-vpc2"]["subnet"] == "fd47:96::/64" and nets["unit-vpc2"]["mtu"] == 8896
    assert [nets["unit-vpc%d" % i]["mtu"] for i in (0, 1)] == [4096, 4096]
    nics = plan["nodes"][1]["nics"]
    assert [n["iface"] for n in nics[2:4]] == ["gpu0rdma0", "gpu1rdma0"]
    assert nics[2]["ip"] is None and nics[2]["ipv6"] == "fd47:96::b:1"
    assert set(n.get("macvlan_of") for n in nics[2:]) == {"rdmaport0"} and nics[9]["ipv6"] == "fd47:96::b:8"
    port = plan["nodes"][1]["links_port"]
    assert (port["iface"], port["network"], port["ipv6"], port["mtu"]) == ("rdmaport0", "unit-vpc2", "fd47:96::b:0", 8896)
    macs = [n["mac"] for node in plan["nodes"] for n in node["nics"] + [node["links_port"]]]
    assert len(set(macs)) == len(macs) == 22
    text = yaml.safe_load(netconfig.netplan_cloud_init(plan, plan["nodes"][1]))
    assert text["network"]["ethernets"]["gpu3rdma1"]["addresses"] == ["fd47:96::b:8/64"]
    with pytest.raises(Exception, match="a4x-max nodes are laid out on the ubuntu variant only, not el"):
        layout.plan("unit", "a4x-max", 2, 150, "el")
