# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet ledger in the inventory: a VM whose physical host has recent history joins gpu_host_history with why,
a VM made since on such a host included, also from a cached answer; a ledger that cannot be read is a warning."""

import json
import time

import compute_fleet as fx

from ansible_collections.gpudirect.gcp.plugins.inventory import gce_gpu
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.fleet import ledger


def _fleet(*names):
    """VMs of one project, each on its own physical host (h-<name>)."""
    vms = [fx.gpu_instance(name, "a3-mega", index=n, prefix="mega", extra={"resourceStatus": {
        "physicalHostTopology": {"block": "b1", "subBlock": "s1", "host": host}}})
        for n, (name, host) in enumerate(names)]
    return {"projects": {"proj-a": {"instances": vms, "networks": fx.networks_for("mega", "a3-mega")}}}


def _ledger(path, records):
    path.write_text(json.dumps(ledger.document(records)))
    path.chmod(0o600)


def _finding(host, age_days, node="vm-gone"):
    return {"kind": "finding", "host": host, "node": node, "time": int(time.time() - age_days * ledger.DAY),
            "component": "gpu", "subject": "GPU 2", "cause": "Xid 79"}


def test_a_vm_on_a_host_with_recent_history_is_grouped_with_why(make_emulator, run_plugin, config, tmp_path):
    store = tmp_path / "fleet" / "ledger.json"
    store.parent.mkdir(mode=0o700)
    _ledger(store, [_finding("h-1", 2), _finding("h-2", 90)])
    emu = make_emulator(_fleet(("vm-a", "h-1"), ("vm-b", "h-2"), ("vm-c", "h-3")))
    cfg = config(emu, fleet_ledger=str(store), cache=True, cache_plugin="jsonfile",
                 cache_connection=str(tmp_path / "cache"), cache_timeout=3600)
    run = run_plugin(cfg)
    assert run.group(gce_gpu.HISTORY_GROUP) == ["vm-a"]
    assert run.hosts["vm-a"]["gpu_host_history"].startswith(
        "physical host h-1: 1 record(s), 1 failure(s) in the last 30 day(s); the latest ")
    assert run.hosts["vm-a"]["gpu_host_history"].endswith("gpu GPU 2: Xid 79")
    assert "gpu_host_history" not in run.hosts["vm-c"]
    # the ledger is read at every parse: a host that fails now is known at once, also from the cached answer
    _ledger(store, [_finding("h-1", 2), _finding("h-3", 0, node="vm-c")])
    requests = emu.request_count() if hasattr(emu, "request_count") else None
    run = run_plugin(cfg)
    assert run.plugin.stats["cache_hit"] and run.group(gce_gpu.HISTORY_GROUP) == ["vm-a", "vm-c"]
    if requests is not None:
        assert emu.request_count() == requests


def test_a_vm_re_created_on_a_host_with_history_is_known_at_once(make_emulator, run_plugin, config, tmp_path):
    store = tmp_path / "ledger.json"
    # the old VM, deleted since, failed on h-7; a new VM (another name) landed on h-7
    _ledger(store, [_finding("h-7", 1, node="vm-old")])
    emu = make_emulator(_fleet(("vm-new", "h-7")))
    run = run_plugin(config(emu, fleet_ledger=str(store), fleet_ledger_days=7))
    assert run.group(gce_gpu.HISTORY_GROUP) == ["vm-new"]
    assert "(VM vm-old)" not in run.hosts["vm-new"]["gpu_host_history"]
    assert "in the last 7 day(s)" in run.hosts["vm-new"]["gpu_host_history"]


def test_a_ledger_that_cannot_be_read_is_a_warning_and_the_inventory_stands(
        make_emulator, run_plugin, config, tmp_path):
    store = tmp_path / "ledger.json"
    store.write_text("{not json")
    store.chmod(0o600)
    emu = make_emulator(_fleet(("vm-a", "h-1")))
    run = run_plugin(config(emu, fleet_ledger=str(store)))
    assert sorted(run.hosts) == ["vm-a"] and run.group(gce_gpu.HISTORY_GROUP) is None
    assert [w for w in run.warnings if "fleet_ledger" in w] == [
        "gce_gpu: option fleet_ledger: fleet ledger file %s is not JSON: remove it, or repair it, to let the ledger "
        "be kept again; no VM is put in gpu_host_history" % store]
    run = run_plugin(config(emu, fleet_ledger="gs://ops-a/ledger.json"))
    assert "the inventory reads a local ledger file only" in " ".join(run.warnings)
    # a missing ledger is an empty one
    run = run_plugin(config(emu, fleet_ledger=str(tmp_path / "none" / "ledger.json")))
    assert run.group(gce_gpu.HISTORY_GROUP) is None and not [w for w in run.warnings if "fleet_ledger" in w]
