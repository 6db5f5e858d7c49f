# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia_smi_parse, xid_events and nvlink_domain_peers as a playbook calls them."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.filter.gpu import FilterModule as GpuFilters
from ansible_collections.gpudirect.gcp.plugins.filter.topology import FilterModule as TopologyFilters
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.gpu.test_gpu_xid import read

GPU = GpuFilters().filters()
TOPOLOGY = TopologyFilters().filters()


def test_nvidia_smi_parse_takes_text_or_a_registered_result():
    text = read("h100-580.159.04", "nvidia-smi-q-x.xml")
    assert GPU["nvidia_smi_parse"](text) == GPU["nvidia_smi_parse"]({"stdout": text, "rc": 0})
    assert GPU["nvidia_smi_parse"](text)[0]["pcie_width_max"] == 16


@pytest.mark.parametrize("value,why", [("No devices were found", "not XML"), (42, "expected text")])
def test_nvidia_smi_parse_bad_input_is_one_line(value, why):
    with pytest.raises(AnsibleFilterError) as err:
        GPU["nvidia_smi_parse"](value)
    assert why in str(err.value) and "\n" not in str(err.value) and str(err.value).startswith("nvidia_smi_parse: ")


def test_xid_events():
    found = GPU["xid_events"]({"stdout": read("public", "xid-kernel-log.txt")})
    assert {e["xid"] for e in found} >= {13, 48, 63, 64, 79, 94, 119}
    assert GPU["xid_events"](read("h100-580.159.04", "kernel-log.txt")) == []


def host(ip, block="b1", subblock="s1", family="a4x"):
    return {"gpu_family": family, "gce_topology": {"block": block, "subBlock": subblock},
            "gce_nics": [{"name": "nic0", "ip": ip}]}


def test_nvlink_domain_peers_groups_a4x_by_sub_block():
    hostvars = {"a": host("10.0.0.2"), "b": host("10.0.0.3"), "c": host("10.0.0.4", subblock="s2"),
                "d": host("10.0.0.5", family="a3-mega"), "e": {"gpu_family": "a4x"}}
    hosts = sorted(hostvars)
    assert TOPOLOGY["nvlink_domain_peers"](hosts, "b", hostvars) == ["10.0.0.2", "10.0.0.3"]
    assert TOPOLOGY["nvlink_domain_peers"](hosts, "c", hostvars) == ["10.0.0.4"]
    # no multi-node NVLink on A3 Mega, and a node whose placement is unknown has no domain
    assert TOPOLOGY["nvlink_domain_peers"](hosts, "d", hostvars) == []
    assert TOPOLOGY["nvlink_domain_peers"](hosts, "e", hostvars) == []


def test_nvlink_domain_peers_names_a_domain_host_without_an_address():
    hostvars = {"a": host("10.0.0.2"), "b": dict(host("x"), gce_nics=[])}
    with pytest.raises(AnsibleFilterError) as err:
        TOPOLOGY["nvlink_domain_peers"](["a", "b"], "a", hostvars)
    assert "b shares a's NVLink domain but has no primary address" in str(err.value)
