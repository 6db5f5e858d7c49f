# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Instance -> host conversion, hostnames and groups (pure functions)."""

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


@pytest.mark.parametrize("family", sorted(families.FAMILIES))
def test_every_family_classifies_with_its_gpu_nics(family):
    inst = _raw("vm", family)
    # one MTU per network, by the first NIC on it (A4X Max's RDMA NICs share one)
    mtus = {}
    for i, n in enumerate(inst["networkInterfaces"]):
        mtus.setdefault(n["network"], 9000 + i)
    hvars = gce_hosts.host_vars(inst, "p", mtus)
    table = families.FAMILIES[family]
    assert hvars["gpu_family"] == family
    assert hvars["gpu_transport"] == table["transport"]
    assert len(hvars["gce_nics"]) == table["nics"]["count"]
    assert [n["name"] for n in hvars["gpu_nics"]] == ["nic%d" % i for i in table["nics"]["gpu_indexes"]]
    assert [n["mtu"] for n in hvars["gpu_nics"]] == [mtus[inst["networkInterfaces"][i]["network"]]
                                                     for i in table["nics"]["gpu_indexes"]]
    assert hvars["gce_accelerators"] == [{"type": table["gpu"]["model"], "count": table["gpu"]["count"]}]


def test_mac_only_when_the_api_gives_one():
    inst = _raw("vm", "a3-mega")
    inst["networkInterfaces"][1]["macAddress"] = "42:01:0a:01:00:02"
    nics = gce_hosts.host_vars(inst, "p", {})["gce_nics"]
    assert nics[1]["mac"] == "42:01:0a:01:00:02"
    assert "mac" not in nics[0] and "mac" not in nics[2]


def test_non_gpu_machine_type_has_no_family():
    inst = compute_api.normalise_instance("p", fx.plain_instance("web"), 0)
    hvars = gce_hosts.host_vars(inst, "p", {})
    assert hvars["gpu_family"] is None and hvars["gpu_transport"] is None and hvars["gpu_nics"] == []
    assert hvars["gce_nics"][0]["mtu"] is None  # unknown network -> unknown MTU, never a guess


def test_topology_reservation_and_placement():
    inst = _raw("vm", "a4", placement="pp", topology={"block": "b", "subblock": "s", "host": "h"},
                reservation="projects/p/reservations/r9", provisioning_model="FLEX_START")
    hvars = gce_hosts.host_vars(inst, "p", {})
    assert hvars["gce_topology"] == {"cluster": "cluster-1", "block": "b", "subblock": "s", "host": "h"}
    assert hvars["gce_reservation"] == "r9"
    assert hvars["gce_placement_policies"] == ["pp"]
    assert hvars["gce_provisioning_model"] == "FLEX_START"
    assert gce_hosts.groups_for(hvars) == ["family_a4", "transport_gib", "zone_us_central1_a", "project_p",
                                           "placement_pp", "block_b", "subblock_b_s"]
    assert "gce_physical_host" not in hvars


@pytest.mark.parametrize("status, topology, groups", [
    ({"physicalHost": "/b-1/s.2/h"}, {"block": "b-1", "subblock": "s.2", "host": "h"}, ["block_b_1", "subblock_b_1_s_2"]),
    ({"physicalHostTopology": {"block": "b", "subBlock": "s"}}, {"block": "b", "subblock": "s"}, ["block_b", "subblock_b_s"]),
    ({"physicalHostTopology": {"block": "b", "host": "h"}}, {"block": "b", "host": "h"}, ["block_b"]),
    ({"physicalHostTopology": {"cluster": "c"}, "physicalHost": "not-a-path"}, {}, []),
    ("malformed", {}, []),
    (None, {}, []),
])
def test_topology_from_resource_status_and_its_groups(status, topology, groups):
    inst = _raw("vm", "a3-mega", extra={"resourceStatus": status})
    hvars = gce_hosts.host_vars(inst, "p", {})
    assert hvars["gce_topology"] == topology
    assert [g for g in gce_hosts.groups_for(hvars) if g.startswith(("block_", "subblock_"))] == groups


def test_kept_vars_and_slim():
    names, nic_keys = gce_hosts.kept_vars("minimal")
    assert names == gce_hosts.MINIMAL_HOST_VARS and nic_keys == gce_hosts.MINIMAL_NIC_KEYS
    assert gce_hosts.kept_vars("full") == (gce_hosts.HOST_VARS, None)
    names, _keys = gce_hosts.kept_vars("minimal", ["gce_accelerators", "gce_labels"])
    assert names[-3:] == ("gce_accelerators", "gce_nics", "gpu_nics") and "gce_labels" in names
    inst = _raw("vm", "a3-mega", public_ip="34.0.0.1")
    inst["networkInterfaces"][1]["macAddress"] = "42:01:0a:01:00:02"
    full = gce_hosts.host_vars(inst, "p", {})
    kept = gce_hosts.slim(full, *gce_hosts.kept_vars("minimal"))
    assert set(kept) == set(gce_hosts.MINIMAL_HOST_VARS)
    assert kept["gce_nics"][0] == {"name": "nic0", "network": full["gce_nics"][0]["network"],
                                   "ip": full["gce_nics"][0]["ip"], "mtu": None}
    assert kept["gce_nics"][1]["mac"] == "42:01:0a:01:00:02"
    assert full["gce_nics"][0]["public_ip"] == "34.0.0.1"  # the full record is left as it was
    assert gce_hosts.slim(full, *gce_hosts.kept_vars("full")) == full


@pytest.mark.parametrize("mode, extra, message", [
    ("all", [], "option host_vars has unknown value 'all'; expected one of: minimal, full"),
    ("minimal", ["gce_label"], "option extra_host_vars: 'gce_label' is not a host variable of this inventory; "
                               "did you mean gce_labels?"),
    ("minimal", ["zzz"], "option extra_host_vars: 'zzz' is not a host variable of this inventory; known: gpu_family"),
])
def test_kept_vars_names_a_bad_option(mode, extra, message):
    with pytest.raises(ValueError) as err:
        gce_hosts.kept_vars(mode, extra)
    assert str(err.value).startswith(message)


def test_reservation_needs_specific_affinity():
    inst = _raw("vm", "a4", extra={"reservationAffinity": {"consumeReservationType": "ANY_RESERVATION"}})
    assert gce_hosts.host_vars(inst, "p", {})["gce_reservation"] is None


def test_machine_type_regex_matches_only_whole_names():
    import re
    rx = gce_hosts.machine_type_regex(["a3-megagpu-8g", "a4-highgpu-8g"])
    assert re.fullmatch(rx, "https://x/zones/z/machineTypes/a3-megagpu-8g")
    assert not re.fullmatch(rx, "https://x/zones/z/machineTypes/a3-megagpu-8g-custom")
    assert gce_hosts.regex_escape("a.b|c") == r"a\.b\|c"


def _hv(name, project="p", zone="z", ip="10.0.0.1", labels=None):
    return {"gce_name": name, "gce_project": project, "gce_zone": zone, "gce_labels": labels or {},
            "gce_nics": [{"ip": ip, "public_ip": None}]}


def test_assign_hostnames_qualifies_duplicates():
    hosts, warnings = gce_hosts.assign_hostnames(
        [_hv("a", "p1"), _hv("a", "p2"), _hv("b", "p1")], ["name"])
    assert [pair[0] for pair in hosts] == ["a.z.p1", "a.z.p2", "b"]
    assert warnings == ["hostname a is used by 2 instances; they are named <name>.<zone>.<project>"]


def test_assign_hostnames_error_mode_names_the_clash():
    with pytest.raises(ValueError, match=r"hostname a is used by 2 instances \(p/z1, p/z2\)"):
        gce_hosts.assign_hostnames([_hv("a", zone="z1"), _hv("a", zone="z2")], ["name"], "error")


def test_hostname_entries():
    hv = _hv("vm", labels={"role": "w"})
    assert gce_hosts.pick_hostname(["labels.missing", "private_ip"], hv) == "10.0.0.1"
    assert gce_hosts.pick_hostname([{"name": "name", "prefix": "labels.role"}], hv) == "w_vm"
    assert gce_hosts.pick_hostname([{"name": "name", "prefix": "project", "separator": "."}], hv) == "p.vm"
    assert gce_hosts.pick_hostname(["public_ip"], hv) is None
    with pytest.raises(ValueError, match="unknown hostnames entry 'dns'"):
        gce_hosts.validate_hostnames(["name", "dns"])
    with pytest.raises(ValueError, match="needs a 'name' key"):
        gce_hosts.validate_hostnames([{"prefix": "project"}])


def test_ansible_host_sources():
    hv = _hv("vm")
    hv["gce_nics"][0]["public_ip"] = "1.2.3.4"
    assert gce_hosts.ansible_host("private_ip", hv) == "10.0.0.1"
    assert gce_hosts.ansible_host("public_ip", hv) == "1.2.3.4"
    assert gce_hosts.ansible_host("name", hv) == "vm"


def test_inventory_host_is_the_minimal_record_with_address_and_groups():
    inst = _raw("vm", "a3-mega", public_ip="34.0.0.9")
    full = gce_hosts.host_vars(inst, "p", {})
    hvars, groups = gce_hosts.inventory_host(inst, "p", {})
    assert set(hvars) == set(gce_hosts.MINIMAL_HOST_VARS) | {"ansible_host"}
    assert hvars["ansible_host"] == full["gce_nics"][0]["ip"]
    assert all(set(nic) <= set(gce_hosts.MINIMAL_NIC_KEYS) for nic in hvars["gce_nics"] + hvars["gpu_nics"])
    assert groups == gce_hosts.groups_for(full)
    hvars, _groups = gce_hosts.inventory_host(inst, "p", {}, mode="full", ansible_host_source="public_ip")
    assert hvars == dict(full, ansible_host="34.0.0.9")


def test_inventory_host_names_an_unusable_instance():
    inst = _raw("vm", "a3-mega")
    del inst["networkInterfaces"][2:]
    with pytest.raises(ValueError, match=r"^instance vm: 2 NICs, but a3-mega has 9$"):
        gce_hosts.inventory_host(inst, "p", {})


@pytest.mark.parametrize("name", ["localhost", "LocalHost", "all", "ungrouped", "127.0.0.1"])
def test_a_name_ansible_reserves_is_qualified_never_the_controller(name):
    hosts, warnings = gce_hosts.assign_hostnames([_hv(name, "proj-a"), _hv("b")], ["name"])
    assert [pair[0] for pair in hosts] == ["%s.z.proj-a" % name, "b"]
    assert warnings == ["hostname %s is one Ansible reserves (it would stand for the controller or every host); "
                        "instance %s is named %s.z.proj-a" % (name, name, name)]


def test_a_name_still_shared_after_qualifying_costs_only_those_instances():
    hosts, warnings = gce_hosts.assign_hostnames([_hv("a"), _hv("a"), _hv("b")], ["name"])
    assert [pair[0] for pair in hosts] == ["b"]
    assert warnings[-1] == ("hostname a.z.p is still used by 2 instances after qualifying (same name, zone and "
                            "project); left out")


@pytest.mark.parametrize("bad", ["10.0.0.1; touch /tmp/x", "-oProxyCommand=x", "not-an-ip", 12])
def test_an_address_that_is_not_one_leaves_the_record_out_by_name(bad):
    inst = _raw("vm", "a3-mega")
    inst["networkInterfaces"][0]["networkIP"] = bad
    with pytest.raises(ValueError, match=r"^instance vm: NIC nic0 has an internal IP that is not an address"):
        gce_hosts.inventory_host(inst, "p", {})
    inst = _raw("vm", "a3-mega", public_ip="34.0.0.9")
    inst["networkInterfaces"][0]["accessConfigs"][0]["natIP"] = bad
    hvars, _groups = gce_hosts.inventory_host(inst, "p", {}, ansible_host_source="public_ip")
    assert hvars.get("ansible_host") is None
