# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""After converge, side effect (one NIC broken, then its node restarted): every GPU NIC
is at its VPC MTU, from configuration that survives a restart."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import yaml

testinfra_hosts = ["ansible://gpu_nodes"]


def _ifaces(host):
    """{ipv4: (name, mtu)} from the node's own view."""
    out = {}
    for link in json.loads(host.check_output("ip -j -4 addr show")):
        for addr in link.get("addr_info", []):
            out[addr["local"]] = (link["ifname"], link["mtu"])
    return out


def _gpu_nics(host):
    return host.ansible.get_variables()["gpu_nics"]


def test_every_gpu_nic_is_at_its_vpc_mtu(host):
    ifaces = _ifaces(host)
    wrong = []
    for nic in _gpu_nics(host):
        name, mtu = ifaces[nic["ip"]]
        if mtu != nic["mtu"]:
            wrong.append("%s (%s): mtu %s, expected %s" % (name, nic["name"], mtu, nic["mtu"]))
    assert not wrong, wrong


NETPLAN_FILE = "/etc/netplan/90-gpudirect-gpu-mtu.yaml"


def _netplan(host):
    """The role's netplan override when the node's network is netplan's, else None."""
    override = host.file(NETPLAN_FILE)
    return yaml.safe_load(override.content_string) if override.exists else None


def _persisted_file(host, name):
    """The file that holds a GPU NIC's MTU under plain systemd-networkd: its own .network file,
    or a drop-in for the .network file that already configured the NIC."""
    own = "/etc/systemd/network/40-gpudirect-%s.network" % name
    if host.file(own).exists:
        return own
    status = host.check_output("networkctl status --no-pager %s" % name)
    network_file = status.split("Network File: ", 1)[1].split()[0]
    return "/etc/systemd/network/%s.d/90-gpudirect-mtu.conf" % network_file.rsplit("/", 1)[-1]


def test_mtu_is_persisted(host):
    ifaces = _ifaces(host)
    netplan = _netplan(host)
    if netplan is not None:
        # netplan: each GPU NIC's own id (the one cloud-init gave it) carries the MTU, nothing else
        ethernets = netplan["network"]["ethernets"]
        expected = dict((ifaces[nic["ip"]][0], {"mtu": nic["mtu"]}) for nic in _gpu_nics(host))
        assert ethernets == expected
        assert host.file(NETPLAN_FILE).mode == 0o600
        return
    for nic in _gpu_nics(host):
        name = ifaces[nic["ip"]][0]
        conf = host.file(_persisted_file(host, name))
        assert conf.exists, "no persisted configuration for %s" % name
        assert "MTUBytes=%d" % nic["mtu"] in conf.content_string


def test_networkd_applies_the_persisted_configuration(host):
    ifaces = _ifaces(host)
    netplan = _netplan(host) is not None
    for nic in _gpu_nics(host):
        name = ifaces[nic["ip"]][0]
        status = host.check_output("networkctl status --no-pager %s" % name)
        if netplan:
            # netplan renders the merged definition, MTU included, for systemd-networkd
            rendered = "/run/systemd/network/10-netplan-%s.network" % name
            assert "Network File: %s" % rendered in status, "%s: networkd does not use %s" % (name, rendered)
            assert "MTUBytes=%d" % nic["mtu"] in host.file(rendered).content_string
            continue
        persisted = _persisted_file(host, name)
        # a drop-in is not listed by networkctl; the file it extends is
        used = persisted.rsplit("/", 2)[-2][:-2] if persisted.endswith(".conf") else persisted.rsplit("/", 1)[-1]
        assert "Network File: /etc/systemd/network/%s" % used in status, "%s: networkd does not use %s" % (name, used)


def test_wait_online_unit_waits_for_every_gpu_nic(host):
    unit = host.file("/etc/systemd/system/gpu-network-wait-online.service")
    text = unit.content_string
    names = [_ifaces(host)[nic["ip"]][0] for nic in _gpu_nics(host)]
    for name in names:
        assert "-i %s " % name in text
    assert "-o routable --timeout=180" in text
    assert "Before=network-online.target" in text
    svc = host.service("gpu-network-wait-online.service")
    assert svc.is_enabled
    assert svc.is_running or host.run("systemctl is-active gpu-network-wait-online.service").stdout.strip() == "active"


def test_restarted_node_came_back_at_vpc_mtu_from_persisted_config(host):
    record = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "restarted.json")
    with open(record) as handle:
        restarted = json.load(handle)
    if host.backend.get_hostname() != restarted["node"]:
        return
    # this boot, the sandbox set every GPU NIC to 1460 first ...
    boot = host.check_output("journalctl -b --no-pager -u gpudirect-sandbox-guest-mtu.service")
    assert "%s set to guest default MTU 1460" % restarted["nic"] in boot
    # ... and systemd-networkd brought it back to the VPC MTU
    ifaces = _ifaces(host)
    nics = [{"name": ifaces[nic["ip"]][0], "mtu": nic["mtu"], "ip": nic["ip"]} for nic in _gpu_nics(host)]
    assert restarted["nic"] in [n["name"] for n in nics]
    ready = host.ansible("gpudirect.gcp.gpu_nic_ready", json.dumps({"nics": nics}), check=False)
    assert ready.get("ready") is True, ready.get("msg")
