# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gce_gpu plugin reads a VM's GPU NICs from each NIC's own fields: a listing in another order changes
nothing, and a NIC that contradicts the family table costs only its VM, in one line naming the VM and the NIC."""

import compute_fleet as fx

ALL = ["mega-0", "mega-1", "mega-2", "mega-3", "shared", "ultra-0"]


def _by_name(data, project="proj-a"):
    return dict((i["name"], i) for i in data["projects"][project]["instances"])


def test_nics_listed_in_another_order_give_the_same_hosts(make_emulator, run_plugin, config):
    before = run_plugin(config(make_emulator(fx.mixed_fleet()), host_vars="full"))
    data = fx.mixed_fleet()
    for inst in data["projects"]["proj-a"]["instances"] + data["projects"]["proj-b"]["instances"]:
        inst["networkInterfaces"].reverse()
    after = run_plugin(config(make_emulator(data), host_vars="full"))
    assert sorted(after.hosts) == sorted(before.hosts) == ALL
    for name in ALL:
        assert after.hosts[name]["gpu_nics"] == before.hosts[name]["gpu_nics"]
        assert after.hosts[name]["ansible_host"] == before.hosts[name]["ansible_host"]


def test_a_nic_that_contradicts_the_family_costs_only_its_vm(make_emulator, run_plugin, config):
    data = fx.mixed_fleet()
    by_name = _by_name(data)
    by_name["ultra-0"]["networkInterfaces"][6]["nicType"] = "IRDMA"
    by_name["mega-2"]["networkInterfaces"][3]["nicType"] = "VIRTIO_NET"
    run = run_plugin(config(make_emulator(data)))
    assert sorted(run.hosts) == ["mega-0", "mega-1", "mega-3", "shared"]
    ultra = [w for w in run.warnings if "instance ultra-0" in w]
    mega = [w for w in run.warnings if "instance mega-2" in w]
    assert len(ultra) == 1 and "left out" in ultra[0] and "nic6" in ultra[0] and "IRDMA" in ultra[0]
    assert len(mega) == 1 and "nic3" in mega[0] and "VIRTIO_NET" in mega[0] and "GVNIC" in mega[0]
    assert any(w.startswith("gce_gpu: 2 instance(s) left out") for w in run.warnings)
