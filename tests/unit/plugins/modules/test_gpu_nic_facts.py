# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_nic_facts run as a module against fake sysfs trees."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest
from ansible.module_utils import basic

from ansible_collections.gpudirect.gcp.plugins.modules import gpu_nic_facts
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.nic.test_nic_sysfs import FakeSys
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules._module_args import patch_module_args


def ip_json(addrs):
    return json.dumps([{"ifname": n, "addr_info": [{"family": "inet", "local": a, "prefixlen": 24}]}
                       for n, a in addrs.items()])


@pytest.fixture
def node(tmp_path, monkeypatch):
    """An A3 Mega-like node with two GPU NICs (Ubuntu names) and a fake `ip`."""
    fake = FakeSys(tmp_path)
    fake.nic("enp0s12", "42:01:0a:00:00:02", mtu=8244, pci="0000:00:0c.0")
    fake.nic("enp6s0", "42:01:0a:00:01:02", mtu=8244, pci="0000:06:00.0")
    fake.nic("enp7s0", "42:01:0a:00:02:02", mtu=1460, pci="0000:07:00.0")
    fake.addrs = {"enp0s12": "10.0.0.2", "enp6s0": "10.0.1.2", "enp7s0": "10.0.2.2"}
    calls = []

    def run_command(self, args, **kwargs):
        calls.append(args)
        assert isinstance(args, list)
        return 0, ip_json(fake.addrs), ""
    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/usr/sbin/" + name)
    fake.calls = calls
    return fake


def run(args, root, capsys, check_mode=False):
    if check_mode:
        args = dict(args, _ansible_check_mode=True)
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            gpu_nic_facts.run_module(root=root)
    return json.loads(capsys.readouterr().out)


GCE_NICS = [
    {"name": "nic0", "mac": "42:01:0a:00:00:02", "ip": "10.0.0.2", "mtu": 8244, "network": "sys"},
    {"name": "nic1", "mac": "42:01:0a:00:01:02", "ip": "10.0.1.2", "mtu": 8244, "network": "gpu-1"},
    {"name": "nic2", "mac": None, "ip": "10.0.2.2", "mtu": 8244, "network": "gpu-2"},
]


def test_maps_inventory_nics_by_mac_then_ip(node, capsys):
    out = run({"gpu_nics": GCE_NICS[1:], "all_nics": GCE_NICS}, node.root, capsys)
    facts = out["ansible_facts"]["gpu_nic_facts"]
    assert out["changed"] is False
    assert facts["source"] == "inventory"
    assert facts["gpu_ifaces"] == ["enp6s0", "enp7s0"]
    assert [m["matched_by"] for m in facts["gpu_nics"]] == ["mac", "ip"]
    assert facts["gpu_nics"][1]["mtu"] == 1460 and facts["gpu_nics"][1]["expected_mtu"] == 8244
    assert facts["host_ifaces"] == ["enp0s12"]
    assert facts["unmatched"] == []
    # what was read is returned beside the mapping, not kept as a fact every later task copies
    assert out["interfaces"]["enp6s0"]["pci_address"] == "0000:06:00.0" and "interfaces" not in facts
    assert sorted(facts) == ["gpu_ifaces", "gpu_nics", "host_ifaces", "host_nics", "source", "unmatched"]
    assert node.calls == [["/usr/sbin/ip", "-j", "addr", "show"]]


def test_works_in_check_mode(node, capsys):
    out = run({"gpu_nics": GCE_NICS[1:]}, node.root, capsys, check_mode=True)
    assert out["ansible_facts"]["gpu_nic_facts"]["gpu_ifaces"] == ["enp6s0", "enp7s0"]


def test_unmatched_nic_is_listed(node, capsys):
    nics = GCE_NICS[1:] + [{"name": "nic3", "mac": "42:01:0a:00:03:02", "ip": "10.0.3.2", "mtu": 8244}]
    facts = run({"gpu_nics": nics}, node.root, capsys)["ansible_facts"]["gpu_nic_facts"]
    assert facts["unmatched"] == ["nic3"] and facts["gpu_nics"][2]["iface"] is None


def test_a3_mega_devices_and_no_rdma(node, capsys):
    node.aperture(8).dmabuf()
    facts = run({"gpu_nics": []}, node.root, capsys)
    assert len(facts["aperture_devices"]) == 8 and facts["dmabuf_import_helper"] is True
    assert facts["rdma_present"] is False and facts["rdma_devices"] == {}


def test_rdma_devices_reported(node, capsys):
    node.rdma("mlx5_0", "enp6s0", ipv4="10.0.1.2")
    facts = run({"gpu_nics": []}, node.root, capsys)
    assert facts["rdma_present"] is True
    assert facts["rdma_devices"]["mlx5_0"]["netdevs"] == ["enp6s0"]


def test_nic_without_mac_or_ip_is_one_clear_error(node, capsys):
    out = run({"gpu_nics": [{"name": "nic1"}]}, node.root, capsys)
    assert out["failed"] is True
    assert out["msg"] == "gpu_nics[0] (nic1) has neither mac nor ip nor ipv6, so it cannot be matched"


def test_metadata_source_with_family(node, capsys, monkeypatch):
    data = [{"mac": m["mac"] or "42:01:0a:00:02:02", "ip": m["ip"], "mtu": 8244,
             "network": "projects/1/networks/" + m["network"]} for m in GCE_NICS]

    class Resp(object):
        def read(self):
            return json.dumps(data)
    seen = {}

    def fake_fetch(module, url, headers=None, timeout=None, **kw):
        seen.update(url=url, headers=headers)
        return Resp(), {"status": 200}
    monkeypatch.setattr(gpu_nic_facts, "fetch_url", fake_fetch)
    facts = run({"family": "a3-mega"}, node.root, capsys)["ansible_facts"]["gpu_nic_facts"]
    assert seen["headers"] == {"Metadata-Flavor": "Google"}
    assert facts["source"] == "metadata"
    assert facts["gpu_ifaces"] == ["enp6s0", "enp7s0"] and facts["host_ifaces"] == ["enp0s12"]
    assert facts["gpu_nics"][0]["network"] == "gpu-1"


def test_metadata_unreachable_warns_and_maps_nothing(node, capsys, monkeypatch):
    monkeypatch.setattr(gpu_nic_facts, "fetch_url", lambda *a, **k: (None, {"status": -1, "msg": "refused"}))
    out = run({}, node.root, capsys)
    facts = out["ansible_facts"]["gpu_nic_facts"]
    assert facts["source"] == "none" and facts["gpu_nics"] == []
    assert any("metadata server did not answer" in str(w) for w in out["warnings"])


def test_missing_ip_command_is_one_clear_error(node, capsys, monkeypatch):
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: None)
    out = run({"gpu_nics": []}, node.root, capsys)
    assert out["failed"] is True and out["msg"].startswith("the ip command (iproute2) is not on this node")


def test_unknown_family_is_one_line(node, capsys):
    out = run({"gpu_nics": [], "family": "h100"}, node.root, capsys)
    assert out["failed"] is True and out["msg"].startswith("family: unknown GPU family 'h100'")


@pytest.mark.parametrize("mtu, why", [(None, "mtu is null"), ("", "mtu is ''"), ("big", "mtu is 'big'"),
                                      (100, "mtu 100 is outside 576-9216")])
def test_gpu_nic_without_a_usable_mtu_is_one_error_naming_node_nic_and_field(node, capsys, monkeypatch, mtu, why):
    monkeypatch.setattr(gpu_nic_facts.socket, "gethostname", lambda: "node7")
    nics = [dict(GCE_NICS[1]), dict(GCE_NICS[2], mtu=mtu)]
    out = run({"gpu_nics": nics}, node.root, capsys)
    assert out["failed"] is True
    assert out["msg"].startswith("gpu_nics[1] (nic2) on node7: %s" % why)
    assert "network gpu-2" in out["msg"] and "\n" not in out["msg"]
