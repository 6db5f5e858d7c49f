# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import nic_map as M


def iface(name, mac, ips=()):
    return {"name": name, "mac": mac, "mtu": 1460, "ipv4": list(ips)}


IFACES = {
    "enp0s12": iface("enp0s12", "42:01:0a:00:00:02", ["10.0.0.2"]),
    "enp6s0": iface("enp6s0", "42:01:0a:00:01:02", ["10.0.1.2"]),
    "enp7s0": iface("enp7s0", "42:01:0a:00:02:02", ["10.0.2.2"]),
}


def test_mac_first_case_insensitive():
    out = M.map_nics([{"name": "nic1", "mac": "42:01:0A:00:01:02", "ip": "10.0.2.2", "mtu": 8244}], IFACES)
    assert out[0]["iface"] == "enp6s0" and out[0]["matched_by"] == "mac"
    assert out[0]["expected_mtu"] == 8244 and out[0]["mtu"] == 1460


def test_ip_when_mac_unknown():
    out = M.map_nics([{"name": "nic2", "mac": None, "ip": "10.0.2.2"}], IFACES)
    assert out[0]["iface"] == "enp7s0" and out[0]["matched_by"] == "ip"
    assert out[0]["mac"] == "42:01:0a:00:02:02"


def test_unknown_mac_falls_back_to_ip():
    out = M.map_nics([{"name": "nic2", "mac": "aa:aa:aa:aa:aa:aa", "ip": "10.0.2.2"}], IFACES)
    assert out[0]["iface"] == "enp7s0" and out[0]["matched_by"] == "ip"


def test_no_match_keeps_order_and_says_so():
    out = M.map_nics([{"name": "nic1", "ip": "10.9.9.9"}, {"name": "nic2", "mac": "42:01:0a:00:02:02"}], IFACES)
    assert [o["iface"] for o in out] == [None, "enp7s0"]
    assert out[0]["matched_by"] is None


def test_an_interface_is_matched_once():
    out = M.map_nics([{"name": "nic1", "ip": "10.0.1.2"}, {"name": "nic9", "ip": "10.0.1.2"}], IFACES)
    assert [o["iface"] for o in out] == ["enp6s0", None]


def test_metadata_nics():
    data = [{"mac": "42:01:0A:00:00:02", "ip": "10.0.0.2", "mtu": 8244, "network": "projects/1/networks/sys"},
            {"mac": "42:01:0a:00:01:02", "ip": "10.0.1.2", "mtu": 8244, "network": "projects/1/networks/gpu-1"}]
    out = M.metadata_nics(data)
    assert out[0] == {"name": "nic0", "mac": "42:01:0a:00:00:02", "ip": "10.0.0.2", "mtu": 8244, "network": "sys"}
    assert out[1]["name"] == "nic1" and out[1]["network"] == "gpu-1"
    assert M.select(out, [1, 5]) == [out[1]]


@pytest.mark.parametrize("data", [{"a": 1}, [1]])
def test_metadata_nics_rejects_bad_shapes(data):
    with pytest.raises(ValueError, match="metadata network-interfaces"):
        M.metadata_nics(data)
