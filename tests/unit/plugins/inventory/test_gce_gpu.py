# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gce_gpu plugin, run in-process against the Compute API emulator."""

import gc
import os

import pytest

from ansible.errors import AnsibleError, AnsibleParserError

from ansible_collections.gpudirect.gcp.plugins.module_utils import families

import compute_fleet as fx
import compute_harness as harness

# What a host carries by default (host_vars: minimal): what the roles, playbooks and AWX project read
CONTRACT_VARS = {"ansible_host", "gpu_family", "gpu_transport", "gce_project", "gce_zone", "gce_name", "gce_status",
                 "gce_topology", "gce_nics", "gpu_nics"}
# ...and what host_vars: full adds
FULL_ONLY_VARS = {"gpu_class", "gce_id", "gce_machine_type", "gce_labels", "gce_provisioning_model", "gce_placement_policies",
                  "gce_reservation", "gce_accelerators"}
NIC_KEYS = {"name", "network", "ip", "mtu"}  # + mac and ipv6 when the API has them
FULL_NIC_KEYS = NIC_KEYS | {"nic_type", "subnetwork", "public_ip", "stack_type"}
MEGA_TOPOLOGY = {"cluster": "cluster-1", "block": "blk1", "subblock": "sb0", "host": "h1"}


def test_hosts_groups_and_contract_vars(emulator, run_plugin, config):
    run = run_plugin(config(emulator))
    hosts = run.hosts
    # running A3/A4 only: no web VMs, no TERMINATED one
    assert sorted(hosts) == ["mega-0", "mega-1", "mega-2", "mega-3", "shared", "ultra-0"]
    for name, hvars in hosts.items():
        assert set(hvars) == CONTRACT_VARS, name
        for nic in hvars["gce_nics"] + hvars["gpu_nics"]:
            assert set(nic) == NIC_KEYS
    mega = hosts["mega-1"]
    assert mega["gpu_family"] == "a3-mega" and mega["gpu_transport"] == "tcpxo"
    assert mega["ansible_host"] == mega["gce_nics"][0]["ip"] == "10.0.0.3"
    assert mega["gce_zone"] == "us-central1-a" and mega["gce_project"] == "proj-a" and mega["gce_name"] == "mega-1"
    assert mega["gce_status"] == "RUNNING"
    assert mega["gce_topology"] == MEGA_TOPOLOGY
    table = families.FAMILIES["a3-mega"]["nics"]
    assert [n["name"] for n in mega["gce_nics"]] == ["nic%d" % i for i in range(table["count"])]
    assert mega["gpu_nics"] == [mega["gce_nics"][i] for i in table["gpu_indexes"]]
    assert mega["gce_nics"][0]["mtu"] == 1460
    assert {n["mtu"] for n in mega["gpu_nics"]} == {families.FAMILIES["a3-mega"]["vpc_mtu"]}
    assert mega["gce_nics"][3]["network"] == "mega-net-3"
    ultra = hosts["ultra-0"]
    assert ultra["gpu_family"] == "a3-ultra" and ultra["gpu_transport"] == "gib"
    assert ultra["gce_topology"] == {}
    assert len(ultra["gpu_nics"]) == 8
    assert run.group("family_a3_mega") == ["mega-0", "mega-1", "mega-2", "mega-3"]
    assert run.group("transport_gib") == ["shared", "ultra-0"]
    assert run.group("zone_us_central1_a") == ["mega-0", "mega-1", "mega-2", "mega-3"]
    assert run.group("project_proj_a") == sorted(hosts)
    # groups come from every variable, also those host_vars: minimal does not keep
    assert run.group("placement_compact_a") == ["mega-0", "mega-1", "mega-2", "mega-3"]
    assert run.group("block_blk1") == ["mega-0", "mega-1", "mega-2", "mega-3"]
    assert run.group("subblock_blk1_sb0") == ["mega-0", "mega-1"]
    assert run.group("subblock_blk1_sb1") == ["mega-2", "mega-3"]
    assert run.group("family_a4") == ["shared"]


def test_host_vars_full_keeps_every_variable(emulator, run_plugin, config):
    hosts = run_plugin(config(emulator, host_vars="full")).hosts
    for name, hvars in hosts.items():
        assert set(hvars) == CONTRACT_VARS | FULL_ONLY_VARS, name
        for nic in hvars["gce_nics"] + hvars["gpu_nics"]:
            assert set(nic) == FULL_NIC_KEYS
    mega = hosts["mega-1"]
    assert mega["gce_machine_type"] == "a3-megagpu-8g"
    assert mega["gce_placement_policies"] == ["compact-a"]
    assert mega["gce_labels"] == {"pool": "train", "node": "n1"}
    assert mega["gce_provisioning_model"] == "STANDARD" and mega["gce_reservation"] is None
    assert mega["gce_nics"][3]["subnetwork"] == "mega-net-3-sub"
    assert mega["gce_accelerators"] == [{"type": families.FAMILIES["a3-mega"]["gpu"]["model"],
                                         "count": families.FAMILIES["a3-mega"]["gpu"]["count"]}]
    ultra = hosts["ultra-0"]
    assert ultra["gce_reservation"] == "res-1" and ultra["gce_provisioning_model"] == "SPOT"
    assert [n["nic_type"] for n in ultra["gpu_nics"]] == ["MRDMA"] * 8
    assert ultra["gce_nics"][0]["public_ip"] == "34.1.2.3"


def test_extra_host_vars_keep_the_named_ones(emulator, run_plugin, config):
    hosts = run_plugin(config(emulator, extra_host_vars=["gce_labels", "gce_reservation"])).hosts
    assert set(hosts["ultra-0"]) == CONTRACT_VARS | {"gce_labels", "gce_reservation"}
    assert hosts["ultra-0"]["gce_reservation"] == "res-1"
    assert set(hosts["ultra-0"]["gce_nics"][0]) == NIC_KEYS


def test_host_vars_from_the_environment(emulator, run_plugin, config):
    run = run_plugin(config(emulator), env={"GCP_GCE_GPU_HOST_VARS": "full"})
    assert set(run.hosts["mega-0"]) == CONTRACT_VARS | FULL_ONLY_VARS


def test_constructed_options_see_every_variable(emulator, run_plugin, config):
    """compose, groups and keyed_groups read variables host_vars: minimal does not keep on the host."""
    run = run_plugin(config(emulator, compose={"nic0_type": "gce_nics[0].nic_type", "pool": "gce_labels.pool"},
                            groups={"spot": "gce_provisioning_model == 'SPOT'"},
                            keyed_groups=[{"key": "gce_topology.subblock", "prefix": "sb"},
                                          {"key": "gce_labels.pool", "prefix": "pool"}]))
    hosts = run.hosts
    assert hosts["mega-0"]["nic0_type"] == "GVNIC" and hosts["mega-0"]["pool"] == "train"
    assert "gce_labels" not in hosts["mega-0"] and "nic_type" not in hosts["mega-0"]["gce_nics"][0]
    assert run.group("spot") == ["ultra-0"]
    assert run.group("sb_sb0") == ["mega-0", "mega-1"] and run.group("sb_sb1") == ["mega-2", "mega-3"]
    assert run.group("pool_train") == ["mega-0", "mega-1", "mega-2", "mega-3"]
    assert run.group("pool_infer") == ["ultra-0"]


def test_remote_strings_are_unsafe(emulator, run_plugin, config):
    hvars = run_plugin(config(emulator, host_vars="full")).hosts["ultra-0"]
    label = hvars["gce_labels"]["tmpl"]
    assert label == "{{ lookup('pipe', 'id') }}"
    # what unsafe means on every core: a template engine leaves the string as it is
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar
    assert Templar(loader=DataLoader()).template(label) == label
    try:
        from ansible.template import is_trusted_as_template
    except ImportError:  # ansible-core < 2.19 marks only strings that could be templated
        return
    # from 2.19 no string the API sent carries template trust, templated or not
    assert not is_trusted_as_template(label)
    assert not is_trusted_as_template(hvars["gce_nics"][0]["ip"])


def test_constructed_options_never_template_remote_strings(emulator, run_plugin, config):
    """compose reads variables the host does not keep; a label that looks like a template stays text there too."""
    hosts = run_plugin(config(emulator, compose={"tmpl_copy": "gce_labels.tmpl"},
                              keyed_groups=[{"key": "gce_labels.tmpl", "prefix": "t"}])).hosts
    assert hosts["ultra-0"]["tmpl_copy"] == "{{ lookup('pipe', 'id') }}"
    assert "gce_labels" not in hosts["ultra-0"]


def test_server_side_filter_and_pagination(emulator, run_plugin, config):
    run = run_plugin(config(emulator))
    stats = emulator.stats()
    # 6 matching instances at page size 2 -> 3 pages; the 5 web VMs never cross the wire
    assert stats["by_kind"]["aggregated"] == 3
    # every MTU came from the project's networks.list (30 networks, 2 per page), none from networks.get
    assert stats["by_kind"]["network_list"] == 15
    assert "network" not in stats["by_kind"]
    assert run.plugin.stats["requests"] == stats["api"]


def test_shared_vpc_networks_are_read_one_by_one(make_emulator, run_plugin, config, fixture_data):
    data = fixture_data()
    inst = data["projects"]["proj-b"]["instances"][0]
    inst["networkInterfaces"][0]["network"] = "projects/proj-a/global/networks/default"
    emu = make_emulator(data)
    run = run_plugin(config(emu, projects=["proj-b"]))
    assert run.hosts["high-0"]["gce_nics"][0]["mtu"] == 1460
    assert run.hosts["high-0"]["gce_nics"][1]["mtu"] == families.FAMILIES["a3-high"]["vpc_mtu"]
    assert emu.stats()["by_kind"]["network"] == 1
    assert emu.stats()["by_project"]["proj-a"] == 1


def test_without_server_side_filter_classifies_on_the_controller(emulator, run_plugin, config):
    run = run_plugin(config(emulator, server_side_filter=False))
    assert sorted(run.hosts) == ["mega-0", "mega-1", "mega-2", "mega-3", "shared", "ultra-0"]
    assert emulator.stats()["by_kind"]["aggregated"] == 6  # 12 instances, 2 per page


def test_comparison_filters_are_sent_alone(emulator, run_plugin, config):
    run = run_plugin(config(emulator, filters=["labels.pool = train"]))
    assert sorted(run.hosts) == ["mega-0", "mega-1", "mega-2", "mega-3"]


def test_regex_filters_combine_with_ours(emulator, run_plugin, config):
    run = run_plugin(config(emulator, filters=['labels.pool eq "infer"']))
    assert sorted(run.hosts) == ["ultra-0"]
    assert emulator.stats()["by_kind"]["aggregated"] == 1


def test_include_and_exclude_filters(emulator, run_plugin, config):
    run = run_plugin(config(emulator, filters=['labels.pool eq "train"'],
                            include_filters=['name eq "shared"'],
                            exclude_filters=[['labels.node eq "n[01]"']]))
    assert sorted(run.hosts) == ["mega-2", "mega-3", "shared"]


def test_zones_use_parallel_per_zone_calls(emulator, run_plugin, config):
    run = run_plugin(config(emulator, zones=["us-central1-a", "europe-west4-b"], projects=["proj-a", "proj-b"]))
    assert sorted(run.hosts) == ["mega-0", "mega-1", "mega-2", "mega-3", "ultra-0"]
    stats = emulator.stats()
    assert "aggregated" not in stats["by_kind"]
    # proj-a us-central1-a: 4 hosts = 2 pages; other three (project, zone) pairs: 1 page each
    assert stats["by_kind"]["zone_instances"] == 5


def test_statuses_and_machine_types_widen(emulator, run_plugin, config):
    run = run_plugin(config(emulator, statuses=["RUNNING", "TERMINATED"],
                            machine_types=["a3-megagpu-8g", "n2-standard-8"]))
    hosts = run.hosts
    assert sorted(hosts) == ["mega-0", "mega-1", "mega-2", "mega-3", "mega-stopped",
                             "web-0", "web-1", "web-2", "web-3", "web-4"]
    assert hosts["web-0"]["gpu_family"] is None and hosts["web-0"]["gpu_nics"] == []
    assert hosts["mega-stopped"]["gce_status"] == "TERMINATED"


def test_duplicate_names_are_qualified_never_merged(emulator, run_plugin, config):
    run = run_plugin(config(emulator, projects=["proj-a", "proj-b"]))
    hosts = run.hosts
    assert "shared" not in hosts
    assert hosts["shared.us-central1-b.proj-a"]["gce_project"] == "proj-a"
    assert hosts["shared.us-central1-b.proj-b"]["gce_project"] == "proj-b"
    assert hosts["high-0"]["gpu_family"] == "a3-high"
    assert any("hostname shared is used by 2 instances" in w for w in run.warnings)


def test_duplicate_names_error_when_asked(emulator, run_plugin, config):
    with pytest.raises(AnsibleParserError, match="hostname shared is used by 2 instances"):
        run_plugin(config(emulator, projects=["proj-a", "proj-b"], duplicate_hostnames="error"))


def test_hostname_preferences(emulator, run_plugin, config):
    prefixed = {"name": "name", "prefix": "labels.pool", "separator": "-"}
    run = run_plugin(config(emulator, hostnames=["labels.node", prefixed]))
    # "shared" has no labels, so no entry gives it a name: skipped with a warning
    assert sorted(run.hosts) == ["infer-ultra-0", "n0", "n1", "n2", "n3"]
    assert any("instance shared in proj-a/us-central1-b has no value" in w for w in run.warnings)
    run = run_plugin(config(emulator, hostnames=["private_ip"]))
    assert "10.0.0.2" in run.hosts


def test_ansible_host_source(emulator, run_plugin, config):
    hosts = run_plugin(config(emulator, ansible_host_source="public_ip")).hosts
    assert hosts["ultra-0"]["ansible_host"] == "34.1.2.3"
    assert "ansible_host" not in hosts["mega-0"]
    hosts = run_plugin(config(emulator, ansible_host_source="name")).hosts
    assert hosts["mega-0"]["ansible_host"] == "mega-0"


def test_constructed_options(emulator, run_plugin, config):
    run = run_plugin(config(emulator, compose={"gpu_nic_count": "gpu_nics | length"},
                            groups={"big": "gpu_nics | length >= 8"},
                            keyed_groups=[{"key": "gce_labels.pool", "prefix": "pool"}]))
    # a compose result is text before ansible-core 2.19, which keeps the expression's type
    assert run.hosts["mega-0"]["gpu_nic_count"] in (8, "8")
    assert run.group("big") == ["mega-0", "mega-1", "mega-2", "mega-3", "shared", "ultra-0"]
    assert run.group("pool_train") == ["mega-0", "mega-1", "mega-2", "mega-3"]


def test_keep_raw(emulator, run_plugin, config):
    hosts = run_plugin(config(emulator, keep_raw=True)).hosts
    assert hosts["mega-0"]["gce_raw"]["cpuPlatform"] == "Intel Sapphire Rapids"
    assert "gce_raw" not in run_plugin(config(emulator)).hosts["mega-0"]


def test_projects_from_environment(emulator, run_plugin, config):
    cfg = config(emulator)
    del cfg["projects"]
    run = run_plugin(cfg, env={"GCP_PROJECT": "proj-b"})
    assert sorted(run.hosts) == ["high-0", "shared"]


# --- faults -------------------------------------------------------------------

@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_transient_errors_are_retried(emulator, run_plugin, config, status):
    emulator.set_faults({"fail_first": {"count": 2, "status": status, "retry_after": 0}})
    run = run_plugin(config(emulator))
    assert len(run.hosts) == 6
    assert emulator.stats()["failed"] == 2
    assert run.plugin.stats["retries"] == 2


def test_retry_after_is_honoured(emulator, run_plugin, config):
    import time
    emulator.set_faults({"fail_first": {"count": 1, "status": 429, "retry_after": 1}})
    started = time.monotonic()
    run_plugin(config(emulator, projects=["proj-b"]))
    assert time.monotonic() - started >= 1.0


def test_connection_resets_are_retried(emulator, run_plugin, config):
    emulator.set_faults({"reset_first": 2})
    assert len(run_plugin(config(emulator)).hosts) == 6


def test_retry_budget_is_bounded(emulator, run_plugin, config):
    emulator.set_faults({"fail_first": {"count": 1000, "status": 503}})
    with pytest.raises(AnsibleParserError) as err:
        run_plugin(config(emulator, retry_max_time=1, retries=3))
    assert str(err.value).startswith("gce_gpu: project proj-a: listing instances kept failing with HTTP 503")


def test_unauthorized(emulator, run_plugin, config):
    emulator.set_faults({"unauthorized": True})
    with pytest.raises(AnsibleParserError, match=r"^gce_gpu: project proj-a: authentication failed \(401\)"):
        run_plugin(config(emulator))


def test_forbidden_project_is_fatal_when_strict(emulator, run_plugin, config):
    emulator.set_faults({"forbidden_projects": ["proj-b"]})
    with pytest.raises(AnsibleParserError, match=r"^gce_gpu: project proj-b: permission denied \(403\)"):
        run_plugin(config(emulator, projects=["proj-a", "proj-b"]))


def test_forbidden_project_is_skipped_when_not_strict(emulator, run_plugin, config):
    emulator.set_faults({"forbidden_projects": ["proj-b"]})
    run = run_plugin(config(emulator, projects=["proj-a", "proj-b"], strict_permissions=False))
    assert sorted(run.hosts) == ["mega-0", "mega-1", "mega-2", "mega-3", "shared", "ultra-0"]
    assert any("skipping project proj-b: permission denied" in w for w in run.warnings)


def test_disabled_api(emulator, run_plugin, config):
    emulator.set_faults({"disabled_projects": ["proj-a"]})
    with pytest.raises(AnsibleParserError, match="project proj-a: the Compute Engine API is disabled"):
        run_plugin(config(emulator))


def test_unknown_project(emulator, run_plugin, config):
    with pytest.raises(AnsibleParserError, match=r"project nope: not found \(404\)"):
        run_plugin(config(emulator, projects=["nope"]))


def test_unreachable_zone_is_a_warning(emulator, run_plugin, config):
    emulator.set_faults({"unreachable_zones": ["europe-west4-b"]})
    run = run_plugin(config(emulator))
    assert "ultra-0" not in run.hosts and "mega-0" in run.hosts
    assert any("zones/europe-west4-b was unreachable" in w for w in run.warnings)


def test_unreadable_network_stops_the_inventory_naming_it(emulator, run_plugin, config):
    emulator.set_faults({"forbidden_networks": ["mega-net-1"]})
    with pytest.raises(AnsibleParserError) as info:
        run_plugin(config(emulator))
    text = str(info.value)
    assert "project proj-a network(s) mega-net-1: permission denied (403)" in text
    assert "compute.networks.get" in text and "mega-0, mega-1, mega-2, mega-3" in text
    assert "ultra-0" not in text and "\n" not in text


def test_unreadable_network_without_strict_permissions_leaves_its_hosts_out(emulator, run_plugin, config):
    emulator.set_faults({"forbidden_networks": ["mega-net-1"]})
    run = run_plugin(config(emulator, strict_permissions=False))
    # never a NIC without its MTU: the hosts on that network are out, the others keep every MTU
    assert sorted(run.hosts) == ["shared", "ultra-0"]
    assert all(nic["mtu"] for hvars in run.hosts.values() for nic in hvars["gce_nics"])
    notes = [w for w in run.warnings if "mega-net-1" in w]
    assert len(notes) == 1 and "4 host(s) on them left out: mega-0, mega-1, mega-2, mega-3" in notes[0], notes


def test_shared_vpc_host_project_403_names_project_networks_permission_and_hosts(make_emulator, run_plugin,
                                                                                 config):
    emu = make_emulator(fx.shared_vpc_fleet())
    emu.set_faults({"forbidden_network_projects": ["net-host"]})
    with pytest.raises(AnsibleParserError) as info:
        run_plugin(config(emu, projects=["svc-proj"]))
    text = str(info.value)
    assert "project net-host, the Shared VPC host project of network(s) mega-net-1, mega-net-2, mega-net-3, " \
           "mega-net-4 (+4 more): permission denied (403): the credentials lack compute.networks.get there " \
           "(grant roles/compute.networkViewer on project net-host); 2 host(s) on them would have no VPC MTU: " \
           "mega-0, mega-1" in text, text
    assert "high-0" not in text


def test_shared_vpc_mtus_are_read_in_the_host_project(make_emulator, run_plugin, config):
    emu = make_emulator(fx.shared_vpc_fleet())
    run = run_plugin(config(emu, projects=["svc-proj"]))
    mega = run.hosts["mega-0"]
    assert [n["mtu"] for n in mega["gpu_nics"]] == [families.FAMILIES["a3-mega"]["vpc_mtu"]] * 8
    assert mega["gce_nics"][0]["mtu"] == 1460
    assert emu.stats()["by_project"]["net-host"] == 8  # one networks.get per GPU VPC
    assert run.hosts["high-0"]["gpu_nics"][0]["mtu"] == families.FAMILIES["a3-high"]["vpc_mtu"]


# --- bad configuration --------------------------------------------------------

@pytest.mark.parametrize("option, value", [
    ("auth_kind", "magic"), ("duplicate_hostnames", "merge"), ("ansible_host_source", "dns"), ("host_vars", "all"),
])
def test_a_value_outside_the_choices_is_named(emulator, run_plugin, config, option, value):
    """ansible-core checks the choices and words the line; on every core one line with the value and the option."""
    with pytest.raises(AnsibleError) as err:
        run_plugin(config(emulator, **{option: value}))
    assert harness.choice_error(option, value).search(str(err.value)), str(err.value)
    assert "\n" not in str(err.value)
    assert emulator.stats()["api"] == 0


@pytest.mark.parametrize("extra, message", [
    ({"extra_host_vars": ["gce_label"]},
     "option extra_host_vars: 'gce_label' is not a host variable of this inventory; did you mean gce_labels?"),
    ({"extra_host_vars": ["ansible_user"]}, "option extra_host_vars: 'ansible_user' is not a host variable"),
    ({"projects": []}, "option projects is empty"),
    ({"hostnames": ["fqdn"]}, "option hostnames: unknown hostnames entry 'fqdn'"),
    ({"statuses": []}, "option statuses is empty"),
    ({"include_filters": [{"a": 1}]}, "option include_filters: entry"),
    ({"auth_kind": "accesstoken", "access_token": None}, "auth_kind accesstoken needs option access_token"),
])
def test_bad_options(emulator, run_plugin, config, extra, message):
    with pytest.raises(AnsibleError) as err:
        run_plugin(config(emulator, **extra))
    assert message in str(err.value)
    assert "\n" not in str(err.value)
    assert emulator.stats()["api"] == 0


def test_collector_state_is_restored(emulator, run_plugin, config):
    """parse() pauses the cyclic collector while it builds hosts; it must always switch it back on."""
    assert gc.isenabled()
    run_plugin(config(emulator))
    assert gc.isenabled()
    with pytest.raises(AnsibleError):
        run_plugin(config(emulator, projects=["nope"]))
    assert gc.isenabled()
    gc.disable()
    try:
        run_plugin(config(emulator))
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()


def test_verify_file_wants_the_suffix(plugin_factory, tmp_path):
    plugin = plugin_factory()
    for name, ok in (("a.gce_gpu.yml", True), ("gce_gpu.yaml", True), ("a.gcp.yml", False), ("x.yml", False)):
        path = tmp_path / name
        path.write_text("plugin: gpudirect.gcp.gce_gpu\n")
        assert plugin.verify_file(str(path)) is ok, name


# --- cache --------------------------------------------------------------------

def test_cache_hit_makes_no_request_and_refresh_writes_back(emulator, run_plugin, config, tmp_path):
    cache_dir = tmp_path / "cache"
    # short name: these in-process tests run without the collection loader
    cfg = config(emulator, cache=True, cache_plugin="jsonfile",
                 cache_connection=str(cache_dir), cache_timeout=3600)
    first = run_plugin(cfg)
    cold = emulator.stats()["api"]
    assert cold > 0 and len(os.listdir(str(cache_dir))) == 1
    emulator.reset()
    # a cache hit needs neither the API nor a token (credentials only key the cache, as a hash)
    second = run_plugin(cfg)
    assert emulator.stats()["total"] == 0
    assert second.plugin.stats["cache_hit"] is True
    assert second.hosts == first.hosts
    # the fleet changes; a refresh (cache=False, as --flush-cache and refresh_inventory do) sees it...
    emulator.set_faults({"unreachable_zones": ["europe-west4-b"]})
    third = run_plugin(cfg, cache=False)
    assert "ultra-0" not in third.hosts and emulator.stats()["api"] > 0
    # ...and writes it back, so the next cached read serves the refreshed result
    emulator.reset()
    fourth = run_plugin(cfg)
    assert emulator.stats()["total"] == 0
    assert "ultra-0" not in fourth.hosts


def test_cache_disabled_always_calls_the_api(emulator, run_plugin, config):
    run_plugin(config(emulator))
    run_plugin(config(emulator))
    assert emulator.stats()["by_kind"]["aggregated"] == 6


def test_service_account_token_is_fetched_once(emulator, run_plugin, config, tmp_path):
    import compute_harness
    key = str(tmp_path / "sa.json")
    compute_harness.make_service_account_key(key, emulator.url + "/token")
    cfg = config(emulator, auth_kind="serviceaccount", access_token=None, service_account_file=key,
                 projects=["proj-a", "proj-b"])
    run = run_plugin(cfg)
    assert len(run.hosts) == 8
    assert emulator.stats()["token"] == 1  # parallel calls share one token


def test_rejected_service_account_key(emulator, run_plugin, config, tmp_path):
    import compute_harness
    key = str(tmp_path / "sa.json")
    compute_harness.make_service_account_key(key, emulator.url + "/token")
    emulator.set_faults({"bad_token_grants": True})
    cfg = config(emulator, auth_kind="serviceaccount", access_token=None, service_account_file=key)
    with pytest.raises(AnsibleParserError, match="^gce_gpu: could not obtain an access token: .*invalid_grant"):
        run_plugin(cfg)
    assert emulator.stats()["api"] == 0


def test_g4_vms_are_classified_and_grouped_apart_from_the_gpudirect_nodes(make_emulator, run_plugin, config):
    """G4 (RTX PRO 6000) VMs run NCCL within one VM only: listed by default, named by class, and kept out of
    gpu_nodes, the group every phase targets."""
    fleet = {"projects": {"proj-a": {
        "instances": [fx.gpu_instance("mega-0", "a3-mega", prefix="mega"),
                      fx.plain_instance("render-0", machine_type="g4-standard-96", index=1),
                      fx.plain_instance("render-1", machine_type="g4-standard-384", index=2),
                      fx.plain_instance("web-0", index=3)],
        "networks": dict(fx.networks_for("mega", "a3-mega"), default={"mtu": 1460})}}}
    emu = make_emulator(fleet)
    run = run_plugin(config(emu, host_vars="full", groups={"gpu_nodes": "gpu_family is not none"}))
    assert sorted(run.hosts) == ["mega-0", "render-0", "render-1"]
    assert run.hosts["render-0"]["gpu_family"] is None and run.hosts["render-0"]["gpu_class"] == "g4"
    assert run.hosts["mega-0"]["gpu_class"] == "a3-mega"
    assert run.group("gpu_nodes") == ["mega-0"]
    assert run.group("class_g4") == ["render-0", "render-1"]
    assert run.group("gpu_other") == ["render-0", "render-1"]
    assert run.group("family_a3_mega") == ["mega-0"]


def test_a4x_max_ipv6_only_rdma_nics_on_one_subnet_are_gpu_nics_with_their_vpc_mtus(
        make_emulator, run_plugin, config):
    """A4X Max: eight MRDMA NICs, IPv6-only, on the one subnet of the RoCE VPC (8896); two IDPF NICs on
    VPCs at 4096. A GPU NIC record then carries its IPv6 address and no IPv4."""
    fleet = {"projects": {"proj-a": {
        "instances": [fx.gpu_instance("gb300-%d" % i, "a4x-max", prefix="max", index=i) for i in range(2)],
        "networks": fx.networks_for("max", "a4x-max")}}}
    run = run_plugin(config(make_emulator(fleet)))
    host = run.hosts["gb300-1"]
    assert host["gpu_family"] == "a4x-max" and len(host["gpu_nics"]) == 8
    assert set(n["network"] for n in host["gpu_nics"]) == {"max-net-2"}
    assert [n["mtu"] for n in host["gpu_nics"]] == [8896] * 8
    assert host["gpu_nics"][0]["ip"] is None and host["gpu_nics"][0]["ipv6"] == "fd20:0:1::2"
    assert [n["mtu"] for n in host["gce_nics"][:2]] == [1460, 4096]
    assert run.group("family_a4x_max") == ["gb300-0", "gb300-1"]


def test_an_ipv6_only_gpu_nic_without_its_address_leaves_that_vm_out_in_one_line(
        make_emulator, run_plugin, config):
    bad = fx.gpu_instance("gb300-1", "a4x-max", prefix="max", index=1)
    del bad["networkInterfaces"][5]["ipv6Address"]
    wrong = fx.gpu_instance("gb300-2", "a4x-max", prefix="max", index=2)
    wrong["networkInterfaces"][3]["ipv6Address"] = "fd20::zz"
    fleet = {"projects": {"proj-a": {
        "instances": [fx.gpu_instance("gb300-0", "a4x-max", prefix="max"), bad, wrong],
        "networks": fx.networks_for("max", "a4x-max")}}}
    run = run_plugin(config(make_emulator(fleet)))
    assert sorted(run.hosts) == ["gb300-0"]
    text = "\n".join(run.warnings)
    assert "gb300-1" in text and "GPU NIC nic5 is IPv6-only and has no internal IPv6 address" in text
    assert "NIC nic3 has an internal IPv6 address that is not an address ('fd20::zz')" in text
