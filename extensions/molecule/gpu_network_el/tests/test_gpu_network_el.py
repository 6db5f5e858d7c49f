# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""After converge on EL-like nodes: NetworkManager, not systemd-networkd, holds the GPU
NICs' VPC MTU in their connection profiles, and re-activating a profile restores it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

testinfra_hosts = ["ansible://gpu_nodes"]


def _ifaces(host):
    """{ipv4: (name, mtu)} from the node's own view."""
    out = {}
    for link in json.loads(host.check_output("ip -j -4 addr show")):
        for addr in link.get("addr_info", []):
            out[addr["local"]] = (link["ifname"], link["mtu"])
    return out


def _gpu_nics(host):
    """[(interface, VPC MTU)] of the node's GPU NICs."""
    ifaces = _ifaces(host)
    return [(ifaces[nic["ip"]][0], nic["mtu"]) for nic in host.ansible.get_variables()["gpu_nics"]]


def _connection(host, iface):
    return host.check_output("nmcli -g GENERAL.CONNECTION device show %s" % iface).strip()


def test_networkmanager_manages_the_node_and_networkd_is_off(host):
    assert host.service("NetworkManager").is_running
    assert not host.service("systemd-networkd").is_running
    assert not host.file("/etc/systemd/network/40-gpudirect-%s.network" % _gpu_nics(host)[0][0]).exists
    assert not host.file("/etc/netplan/90-gpudirect-gpu-mtu.yaml").exists


def test_every_gpu_nic_is_at_its_vpc_mtu(host):
    running = dict(_ifaces(host).values())
    wrong = ["%s: mtu %s, expected %s" % (name, running[name], mtu) for name, mtu in _gpu_nics(host)
             if running[name] != mtu]
    assert not wrong, wrong


def test_each_gpu_nic_connection_keeps_the_mtu_on_disk(host):
    for iface, mtu in _gpu_nics(host):
        conn = _connection(host, iface)
        assert conn == "cloud-init %s" % iface, "%s is up with %r, not the image's connection" % (iface, conn)
        assert host.check_output("nmcli -g 802-3-ethernet.mtu connection show '%s'" % conn).strip() == str(mtu)
        # the image's keyfile, not a copy NetworkManager keeps only in memory (/run)
        path = "/etc/NetworkManager/system-connections/cloud-init-%s.nmconnection" % iface
        keyfile = host.file(path)
        assert keyfile.exists and "mtu=%d" % mtu in keyfile.content_string, "%s: no mtu=%d" % (path, mtu)


def test_reactivating_a_connection_restores_the_vpc_mtu(host):
    iface, mtu = _gpu_nics(host)[-1]
    # the guest default a boot gives the NIC before NetworkManager activates its profile
    host.check_output("ip link set dev %s mtu 1460" % iface)
    assert host.file("/sys/class/net/%s/mtu" % iface).content_string.strip() == "1460"
    host.check_output("nmcli connection up '%s'" % _connection(host, iface))
    assert host.file("/sys/class/net/%s/mtu" % iface).content_string.strip() == str(mtu)
