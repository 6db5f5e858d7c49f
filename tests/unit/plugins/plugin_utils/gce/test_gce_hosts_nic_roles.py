# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which NICs of an instance carry GPU traffic: read from each NIC's own fields (name nicN, nicType, network,
stackType) against the family table, never from the NIC's place in the list."""

import os
import sys

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_hosts

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "emulator"))
import compute_api  # noqa: E402
import compute_fleet as fx  # noqa: E402


def _raw(name, family, project="p", **kw):
    return compute_api.normalise_instance(project, fx.gpu_instance(name, family, **kw), 0)


def _by_name(inst):
    return dict((n["name"], n) for n in inst["networkInterfaces"])


def _nic_types(family):
    return families.FAMILIES[family]["nics"]["nic_types"]


@pytest.mark.parametrize("family", sorted(families.FAMILIES))
@pytest.mark.parametrize("order", ["reversed", "rotated"])
def test_gpu_nics_by_their_names_whatever_the_list_order(family, order):
    inst = _raw("vm", family, public_ip="34.1.2.3")
    nics = inst["networkInterfaces"]
    inst["networkInterfaces"] = list(reversed(nics)) if order == "reversed" else nics[3:] + nics[:3]
    assert gce_hosts.left_out(inst) is None
    hvars = gce_hosts.host_vars(inst, "p", {})
    table = families.FAMILIES[family]["nics"]
    assert [n["name"] for n in hvars["gpu_nics"]] == ["nic%d" % i for i in table["gpu_indexes"]]
    assert [n["nic_type"] for n in hvars["gpu_nics"]] == [table["nic_types"][i] for i in table["gpu_indexes"]]
    # the primary NIC (nic0) stays first: hostnames and ansible_host read it
    assert [n["name"] for n in hvars["gce_nics"]] == ["nic%d" % i for i in range(table["count"])]
    assert gce_hosts.ansible_host("private_ip", hvars) == _by_name(inst)["nic0"]["networkIP"]
    assert gce_hosts.ansible_host("public_ip", hvars) == "34.1.2.3"


@pytest.mark.parametrize("family", ["a3-ultra", "a4", "a4x", "a4x-max"])
def test_rdma_nics_by_their_nic_type(family):
    """The MRDMA NICs are the GPU NICs even where the list order alone would say otherwise."""
    inst = _raw("vm", family)
    nics = inst["networkInterfaces"]
    for nic in nics:
        del nic["name"]  # no names: only nicType tells the RDMA NICs apart
    # the second host NIC listed last: by place, it would stand where an RDMA NIC stands
    inst["networkInterfaces"] = [nics[0]] + nics[2:] + [nics[1]]
    assert gce_hosts.left_out(inst) is None
    hvars = gce_hosts.host_vars(inst, "p", {})
    gpu_type = _nic_types(family)[families.FAMILIES[family]["nics"]["gpu_indexes"][0]]
    assert len(hvars["gpu_nics"]) == len(families.FAMILIES[family]["nics"]["gpu_indexes"])
    assert set(n["nic_type"] for n in hvars["gpu_nics"]) == {gpu_type}
    assert gpu_type not in [n["nic_type"] for n in hvars["gce_nics"] if n not in hvars["gpu_nics"]]


def _left_out_line(inst):
    why = gce_hosts.left_out(inst)
    assert why and "\n" not in why and "Traceback" not in why
    with pytest.raises(ValueError) as err:
        gce_hosts.inventory_host(inst, "p", {})
    assert "instance vm" in str(err.value) and why in str(err.value)
    return why


def test_a_missing_rdma_nic_names_the_nic_and_the_count():
    inst = _raw("vm", "a3-ultra")
    _by_name(inst)["nic9"]["nicType"] = "GVNIC"
    why = _left_out_line(inst)
    assert "nic9" in why and "GVNIC" in why and "7 MRDMA" in why and "a3-ultra has 8" in why


def test_an_extra_rdma_nic_names_the_nic_and_the_count():
    inst = _raw("vm", "a4")
    _by_name(inst)["nic1"]["nicType"] = "MRDMA"
    why = _left_out_line(inst)
    assert "nic1" in why and "9 MRDMA" in why and "a4 has 8" in why


def test_an_rdma_nic_of_the_wrong_nic_type():
    inst = _raw("vm", "a3-ultra")
    _by_name(inst)["nic5"]["nicType"] = "IRDMA"
    why = _left_out_line(inst)
    assert "nic5" in why and "IRDMA" in why and "MRDMA" in why


def test_a_gvnic_family_gpu_nic_of_another_nic_type():
    inst = _raw("vm", "a3-mega")
    _by_name(inst)["nic3"]["nicType"] = "VIRTIO_NET"
    why = _left_out_line(inst)
    assert "nic3" in why and "VIRTIO_NET" in why and "GVNIC" in why and "a3-mega" in why


def test_an_rdma_nic_as_the_primary_nic():
    inst = _raw("vm", "a3-ultra")
    by = _by_name(inst)
    by["nic0"]["nicType"], by["nic9"]["nicType"] = "MRDMA", "GVNIC"
    why = _left_out_line(inst)
    assert "nic0" in why and "MRDMA" in why and "primary" in why


@pytest.mark.parametrize("family, nic", [("a3-mega", "nic4"), ("a3-ultra", "nic7"), ("a4x-max", "nic2")])
def test_a_gpu_nic_without_a_network(family, nic):
    inst = _raw("vm", family)
    del _by_name(inst)[nic]["network"]
    why = _left_out_line(inst)
    assert why == "GPU NIC %s has no network" % nic


def test_an_ipv6_only_family_gpu_nic_of_another_stack_type():
    inst = _raw("vm", "a4x-max")
    nic = _by_name(inst)["nic6"]
    nic.update(stackType="IPV4_IPV6", networkIP="10.6.0.2")
    why = _left_out_line(inst)
    assert "nic6" in why and "IPV4_IPV6" in why and "IPV6_ONLY" in why and "a4x-max" in why


def test_two_nics_of_one_name():
    inst = _raw("vm", "a3-mega")
    _by_name(inst)["nic3"]["name"] = "nic4"
    why = _left_out_line(inst)
    assert "nic4" in why and "two" in why


def test_a_contradiction_costs_only_that_vm():
    good, bad = _raw("vm", "a3-ultra"), _raw("vm", "a3-ultra")
    bad["name"] = "bad"
    _by_name(bad)["nic4"]["nicType"] = "IRDMA"
    assert gce_hosts.record(good, "p", {})[1] is None
    hvars, why = gce_hosts.record(bad, "p", {})
    assert hvars is None and "nic4" in why
