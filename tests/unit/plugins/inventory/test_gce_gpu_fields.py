# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The field mask the plugin sends, and what host_vars keeps from the cache."""

import copy
import os

import compute_api
import compute_fleet as fx

import pytest
import yaml

from ansible.errors import AnsibleParserError
from ansible.parsing.dataloader import DataLoader

from ansible_collections.gpudirect.gcp.plugins.inventory import gce_gpu
from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_api, gce_hosts


@pytest.mark.parametrize("listing", [{}, {"zones": ["us-central1-a", "us-central1-b", "europe-west4-b"]}],
                         ids=["aggregated", "per-zone"])
def test_field_mask_shrinks_the_answers_and_changes_no_host(make_emulator, run_plugin, config, listing):
    emu = make_emulator(fx.mixed_fleet())
    masked = run_plugin(config(emu, host_vars="full", **listing))
    with_mask = emu.stats()
    emu.set_faults({"ignore_fields": True})  # what a client that sends no mask gets
    full = run_plugin(config(emu, host_vars="full", **listing))
    without_mask = emu.stats()
    assert masked.hosts == full.hosts and len(masked.hosts) == 6
    assert with_mask["api"] == without_mask["api"]
    # the fixture's instances carry what real ones do (disks, metadata, service accounts, ...); the
    # networks listings, the same either way, are a good part of these few answers
    assert with_mask["bytes_json"] * 1.4 < without_mask["bytes_json"]
    assert with_mask["bytes"] < without_mask["bytes"]


def test_an_unparsable_mask_is_one_line(emulator, run_plugin, config, monkeypatch):
    """The emulator refuses a mask it cannot parse, as the API does: so the plugin's mask is really checked."""
    monkeypatch.setattr(gce_api, "INSTANCE_FIELDS", "name,networkInterfaces(name")
    with pytest.raises(AnsibleParserError) as err:
        run_plugin(config(emulator))
    text = str(err.value)
    assert text.startswith("gce_gpu: project proj-a: HTTP 400: Invalid field selection") and "\n" not in text


def _rich(family="a3-ultra"):
    """An instance resource with every field the inventory can read set."""
    inst = fx.gpu_instance("vm", family, zone="europe-west4-b", index=7, prefix="x", public_ip="34.1.2.3",
                           placement="pp", topology={"block": "b", "subblock": "s", "host": "h"},
                           reservation="projects/p/reservations/r", provisioning_model="SPOT",
                           labels={"role": "train"})
    raw = compute_api.normalise_instance("p", inst, 7)
    raw["networkInterfaces"][1]["macAddress"] = "42:01:0a:01:00:02"
    raw["networkInterfaces"][1].update(stackType="IPV4_IPV6", ipv6Address="fd20:0:0:1::2")
    raw["networkInterfaces"][0]["ipv6AccessConfigs"] = [{"externalIpv6": "2600::1"}]
    return raw


def _masked(raw):
    return compute_api.apply_fields(raw, compute_api.parse_fields(gce_api.INSTANCE_FIELDS))


def _view(raw, mtus=None):
    """Everything the plugin makes of one record: host vars, zone, every hostnames entry."""
    # as the plugin reads it: a record that contradicts the family table is a reason, not host vars
    hvars, why = gce_hosts.record(raw, "p", mtus or {})
    entries = ("name", "private_ip", "public_ip", "id", "zone", "project", "labels.role")
    return (hvars, why, gce_hosts.instance_zone(raw), gce_hosts.left_out(raw),
            [gce_hosts.hostname_candidate(e, hvars or {}) for e in entries])


def _as_listed(raw):
    return raw


def _flat_placement(raw):
    del raw["resourceStatus"]["physicalHostTopology"]
    return raw


def _no_zone(raw):
    del raw["zone"]
    return raw


@pytest.mark.parametrize("variant", [_as_listed, _flat_placement, _no_zone], ids=["rich", "flat", "no-zone"])
@pytest.mark.parametrize("family", sorted(families.FAMILIES))
def test_the_mask_keeps_everything_the_inventory_reads(family, variant):
    raw = variant(_rich(family))
    assert _view(_masked(raw)) == _view(raw)
    left = set(raw) - set(_masked(raw))
    assert {"disks", "metadata", "serviceAccounts", "kind", "cpuPlatform"} <= left
    assert "ipv6AccessConfigs" not in _masked(raw)["networkInterfaces"][0]


def _leaves(tree, prefix=()):
    for key, sub in tree.items():
        if sub is None:
            yield prefix + (key,)
        else:
            yield from _leaves(sub, prefix + (key,))


def _drop(value, path):
    if isinstance(value, list):
        for item in value:
            _drop(item, path)
    elif isinstance(value, dict) and path[0] in value:
        if len(path) == 1:
            del value[path[0]]
        else:
            _drop(value[path[0]], path[1:])


# What a field is read for only shows when what would stand in for it is missing
_ONLY_WITHOUT = {
    ("zone",): ("selfLink",),
    ("selfLink",): ("zone",),
    ("resourceStatus", "physicalHost"): ("resourceStatus", "physicalHostTopology"),
}


@pytest.mark.parametrize("path", sorted(_leaves(compute_api.parse_fields(gce_api.INSTANCE_FIELDS))),
                         ids="/".join)
def test_every_field_of_the_mask_is_read(path):
    raw = _masked(_rich())
    if path in _ONLY_WITHOUT:
        _drop(raw, _ONLY_WITHOUT[path])
    if path == ("networkInterfaces", "name"):
        # the API names NICs nic0, nic1, ...; the inventory reads the name rather than assume it
        for index, nic in enumerate(raw["networkInterfaces"]):
            nic["name"] = "eth%d" % index
    smaller = copy.deepcopy(raw)
    _drop(smaller, path)
    assert smaller != raw, "the fixture lacks %s" % "/".join(path)
    assert _view(smaller) != _view(raw), "%s is requested but never read" % "/".join(path)


def test_the_cache_holds_every_variable_whatever_host_vars_keeps(emulator, run_plugin, config, tmp_path):
    cfg = config(emulator, cache=True, cache_plugin="jsonfile", cache_connection=str(tmp_path / "cache"),
                 cache_timeout=3600)
    minimal = run_plugin(cfg)
    assert emulator.stats()["api"] > 0
    emulator.reset()
    full = run_plugin(dict(cfg, host_vars="full"))
    labels = run_plugin(dict(cfg, extra_host_vars=["gce_labels"]))
    again = run_plugin(cfg)
    # one cached answer serves every host_vars: none of these asked the API
    assert emulator.stats()["total"] == 0
    assert len(os.listdir(str(tmp_path / "cache"))) == 1
    assert full.hosts["mega-0"]["gce_labels"] == labels.hosts["mega-0"]["gce_labels"] == {"pool": "train", "node": "n0"}
    assert "gce_labels" not in again.hosts["mega-0"]
    assert again.hosts == minimal.hosts
    assert set(full.hosts["mega-0"]["gce_nics"][0]) > set(again.hosts["mega-0"]["gce_nics"][0])


def test_cache_key_follows_the_answer_not_host_vars(plugin_factory, config, emulator, tmp_path, monkeypatch):
    """The cache holds every variable: host_vars does not key it, a new shape of the answer does."""

    def key(**extra):
        path = tmp_path / "k.gce_gpu.yml"
        path.write_text(yaml.safe_dump(config(emulator, **extra)))
        plugin = plugin_factory()
        plugin.loader = DataLoader()
        plugin._read_config_data(str(path))
        return plugin._answer_key(str(path), plugin._read_options())

    minimal = key()
    assert key(host_vars="full") == key(extra_host_vars=["gce_labels"]) == minimal
    assert key(statuses=["RUNNING", "TERMINATED"]) != minimal
    monkeypatch.setattr(gce_gpu, "_CACHE_FORMAT", gce_gpu._CACHE_FORMAT + 1)
    assert key() != minimal  # a cache entry of another shape is never served
