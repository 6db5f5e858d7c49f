# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gce_topology from every form of resourceStatus, the block and sub-block groups, and the one summary line."""

import compute_fleet as fx

import pytest

from ansible_collections.gpudirect.gcp.plugins.inventory import gce_gpu


def _fleet():
    """Four VMs of one project, each placed differently (or not at all)."""
    structured = fx.gpu_instance("vm-structured", "a3-mega", index=0, prefix="mega", extra={"resourceStatus": {
        "physicalHostTopology": {"cluster": "europe-west1-cluster-jfhb", "block": "b" * 32, "subBlock": "s" * 32,
                                 "host": "h" * 32},
        "physicalHost": "/x/y/z"}})
    shouting = fx.gpu_instance("vm-shouting", "a3-mega", index=1, prefix="mega", extra={"resourceStatus": {
        "physicalHostTopology": {"BLOCK": "b" * 32, "SUBBLOCK": "s" * 32, "Host": "h2"}}})
    flat = fx.gpu_instance("vm-flat", "a3-mega", index=2, prefix="mega", extra={"resourceStatus": {
        "physicalHost": "/blk-9/sb.7/host-3"}})
    nowhere = fx.gpu_instance("vm-nowhere", "a3-mega", index=3, prefix="mega")
    empty = fx.gpu_instance("vm-empty", "a3-mega", index=4, prefix="mega", extra={"resourceStatus": {
        "physicalHostTopology": {"cluster": "only-a-cluster"}, "physicalHost": ""}})
    return {"projects": {"proj-a": {"instances": [structured, shouting, flat, nowhere, empty],
                                    "networks": fx.networks_for("mega", "a3-mega")}}}


@pytest.fixture
def placed(make_emulator, run_plugin, config, monkeypatch):
    emu = make_emulator(_fleet())
    lines = []
    monkeypatch.setattr(gce_gpu.display, "v", lambda msg, *a, **k: lines.append(msg))

    def run(**extra):
        del lines[:]
        result = run_plugin(config(emu, **extra))
        result.lines = list(lines)
        return result

    return run


def test_topology_from_every_form_of_resource_status(placed):
    hosts = placed().hosts
    assert hosts["vm-structured"]["gce_topology"] == {
        "cluster": "europe-west1-cluster-jfhb", "block": "b" * 32, "subblock": "s" * 32, "host": "h" * 32}
    # any casing of the keys; the structured field wins over physicalHost
    assert hosts["vm-shouting"]["gce_topology"] == {"block": "b" * 32, "subblock": "s" * 32, "host": "h2"}
    # only physicalHost: parsed
    assert hosts["vm-flat"]["gce_topology"] == {"block": "blk-9", "subblock": "sb.7", "host": "host-3"}
    # no placement data, or none below the cluster
    assert hosts["vm-nowhere"]["gce_topology"] == {} and hosts["vm-empty"]["gce_topology"] == {}


def test_block_and_subblock_groups_have_safe_names(placed):
    run = placed()
    assert run.group("block_" + "b" * 32) == ["vm-shouting", "vm-structured"]
    assert run.group("subblock_%s_%s" % ("b" * 32, "s" * 32)) == ["vm-shouting", "vm-structured"]
    assert run.group("block_blk_9") == ["vm-flat"]
    assert run.group("subblock_blk_9_sb_7") == ["vm-flat"]
    placed_groups = [g for g in run.inventory.groups if g.startswith(("block_", "subblock_"))]
    assert len(placed_groups) == 4
    for name in ("vm-nowhere", "vm-empty"):
        assert not [g.name for g in run.inventory.hosts[name].groups if g.name.startswith(("block_", "subblock_"))]


def test_keyed_groups_on_every_topology_field(placed):
    run = placed(keyed_groups=[{"key": "gce_topology.subblock", "prefix": "sb"},
                               {"key": "gce_topology.cluster | default('none')", "prefix": "cluster"},
                               {"key": "gce_topology.host", "prefix": "host", "default_value": "unplaced"}])
    assert run.group("sb_" + "s" * 32) == ["vm-shouting", "vm-structured"]
    assert run.group("sb_sb_7") == ["vm-flat"]
    assert run.group("cluster_europe_west1_cluster_jfhb") == ["vm-structured"]
    assert run.group("cluster_none") == ["vm-empty", "vm-flat", "vm-nowhere", "vm-shouting"]
    assert run.group("host_host_3") == ["vm-flat"]


def test_hosts_without_placement_are_counted_once(placed):
    run = placed()
    assert not [w for w in run.warnings if "placement" in w]
    summary = [line for line in run.lines if "placement" in line]
    assert len(summary) == 1
    assert summary[0].startswith("gce_gpu: 5 hosts, 2 of them without placement data (gce_topology is {})")
    assert run.plugin.stats["unplaced"] == 2


def test_summary_of_a_fleet_placed_everywhere(emulator, run_plugin, config, monkeypatch):
    lines = []
    monkeypatch.setattr(gce_gpu.display, "v", lambda msg, *a, **k: lines.append(msg))
    run = run_plugin(config(emulator, machine_types=["a3-megagpu-8g"]))
    assert sorted(run.hosts) == ["mega-0", "mega-1", "mega-2", "mega-3"]
    summary = [line for line in lines if line.startswith("gce_gpu: 4 hosts")]
    assert len(summary) == 1 and "placement" not in summary[0]
    assert "host_vars minimal (10.0 variables per host)" in summary[0]
