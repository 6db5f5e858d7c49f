# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gce_gpu plugin against a Compute API that misbehaves: bad records, cut and trickled answers,
looping pages, partial answers, typos in the configuration. One bad record never costs the other
hosts; everything else is one line naming the project or the option."""

import json
import os
import socket
import time

import pytest

from ansible.errors import AnsibleError, AnsibleParserError

import compute_fleet as fx

ALL = ["mega-0", "mega-1", "mega-2", "mega-3", "shared", "ultra-0"]


def one_line(err):
    text = str(err.value)
    assert "\n" not in text and "Traceback" not in text
    return text


# 1. the cache is keyed by everything that changes the answer

def test_cache_follows_the_configuration_and_the_credentials(emulator, run_plugin, config, tmp_path):
    cache_dir = tmp_path / "cache"
    cfg = config(emulator, cache=True, cache_plugin="jsonfile", cache_connection=str(cache_dir), cache_timeout=3600)
    assert sorted(run_plugin(cfg).hosts) == ALL
    # the same file now names another project: its hosts, not the cached ones
    other = run_plugin(dict(cfg, projects=["proj-b"]))
    assert other.plugin.stats["cache_hit"] is False and "mega-0" not in other.hosts
    # other filters, another endpoint or other credentials are other answers too
    for change in ({"filters": ['labels.pool = "train"']}, {"access_token": "another-token"},
                   {"api_endpoint": emulator.url + "/"}):
        assert run_plugin(dict(cfg, **change)).plugin.stats["cache_hit"] is False, change
    assert run_plugin(cfg).plugin.stats["cache_hit"] is True
    # credentials are part of the key only as a hash, never stored
    for name in os.listdir(str(cache_dir)):
        text = (cache_dir / name).read_text()
        assert "test-token" not in text and "another-token" not in text and "test-token" not in name


# 2. a record without a zone

def test_instance_without_zone_takes_it_from_its_listing(emulator, run_plugin, config):
    emulator.set_faults({"strip_zone": ["mega-1"], "strip_self_link": ["mega-2"]})
    run = run_plugin(config(emulator))
    assert sorted(run.hosts) == ALL
    assert run.hosts["mega-1"]["gce_zone"] == run.hosts["mega-2"]["gce_zone"] == "us-central1-a"
    zoned = run_plugin(config(emulator, zones=["us-central1-a", "us-central1-b"]))
    assert zoned.hosts["mega-2"]["gce_zone"] == "us-central1-a"


def test_zone_from_the_self_link_else_the_record_is_skipped_by_name():
    from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_hosts
    link = "https://www.googleapis.com/compute/v1/projects/p/zones/europe-west4-b/instances/x"
    assert gce_hosts.instance_zone({"selfLink": link}) == "europe-west4-b"
    assert gce_hosts.instance_zone({"zone": "zones/us-east5-a", "selfLink": link}) == "us-east5-a"
    assert gce_hosts.instance_zone({}, scope="zones/asia-east1-c") == "asia-east1-c"
    assert gce_hosts.instance_zone({}, scope="regions/x") is None


# 3. cut answers are retried; malformed ones and a bad endpoint are one line

def test_answer_cut_mid_body_is_retried(emulator, run_plugin, config):
    emulator.set_faults({"drop_body_first": 2})
    run = run_plugin(config(emulator))
    assert sorted(run.hosts) == ALL and run.plugin.stats["retries"] >= 2


@pytest.mark.parametrize("body, what", [("null", "null"), ("list", "a list"), ("items_list", "items is a list")])
def test_malformed_listing_is_one_line_naming_the_project(emulator, run_plugin, config, body, what):
    emulator.set_faults({"listing_body": body})
    with pytest.raises(AnsibleParserError) as err:
        run_plugin(config(emulator))
    text = one_line(err)
    assert text.startswith("gce_gpu: project proj-a: listing instances returned a malformed answer")
    assert what in text


def test_endpoint_without_scheme_names_the_option(emulator, run_plugin, config):
    with pytest.raises(AnsibleError) as err:
        run_plugin(config(emulator, api_endpoint=emulator.url.split("://", 1)[1]))
    assert "option api_endpoint" in one_line(err) and "https://" in str(err.value)
    assert emulator.stats()["api"] == 0


# 4. a deadline per project, and no endless pages

def test_repeated_page_token_stops_at_once(emulator, run_plugin, config):
    emulator.set_faults({"repeat_page_token": True})
    with pytest.raises(AnsibleParserError) as err:
        run_plugin(config(emulator))
    assert "repeated the page token" in one_line(err) and "project proj-a" in str(err.value)
    assert emulator.stats()["by_kind"]["aggregated"] <= 3


def test_trickling_server_meets_the_project_deadline(emulator, run_plugin, config):
    emulator.set_faults({"trickle_ms": 50})
    started = time.monotonic()
    with pytest.raises(AnsibleParserError) as err:
        run_plugin(config(emulator, project_timeout=2, retries=1))
    assert time.monotonic() - started < 10
    assert "project proj-a" in one_line(err) and "deadline of 2 s" in str(err.value)


# 5. partial answers are never served silently from the cache

def test_cached_partial_answer_repeats_its_warnings(emulator, run_plugin, config, tmp_path):
    emulator.set_faults({"unreachable_zones": ["europe-west4-b"], "forbidden_projects": ["proj-b"]})
    cfg = config(emulator, projects=["proj-a", "proj-b"], strict_permissions=False, cache=True,
                 cache_plugin="jsonfile", cache_connection=str(tmp_path / "cache"), cache_timeout=3600)
    first = run_plugin(cfg)
    assert "ultra-0" not in first.hosts
    emulator.reset()
    cached = run_plugin(cfg)
    assert cached.plugin.stats["cache_hit"] is True and emulator.stats()["total"] == 0
    assert any("zones/europe-west4-b was unreachable" in w and "cached" in w for w in cached.warnings)
    assert any("skipping project proj-b" in w and "cached" in w for w in cached.warnings)


# 6. typos in the configuration

def test_unknown_option_is_named_with_the_closest_one(emulator, run_plugin, config):
    cfg = config(emulator)
    cfg["project"] = cfg.pop("projects")
    with pytest.raises(AnsibleError) as err:
        run_plugin(cfg, env={"GCP_PROJECT": "proj-a"})
    text = one_line(err)
    assert "unknown option project" in text and "did you mean projects" in text
    assert emulator.stats()["api"] == 0


# 7. records left out for data reasons are named and counted

def test_records_left_out_are_named_and_counted(make_emulator, run_plugin, config):
    data = fx.mixed_fleet()
    insts = data["projects"]["proj-a"]["instances"]
    by_name = dict((i["name"], i) for i in insts)
    by_name["mega-1"]["networkInterfaces"] = by_name["mega-1"]["networkInterfaces"][:3]
    del by_name["mega-2"]["networkInterfaces"][4]["networkIP"]
    by_name["mega-3"]["machineType"] = None
    emu = make_emulator(data)
    run = run_plugin(config(emu, server_side_filter=False))
    assert sorted(run.hosts) == ["mega-0", "shared", "ultra-0"]
    text = " | ".join(run.warnings)
    assert "mega-1" in text and "3 NICs" in text
    assert "mega-2" in text and "no internal IP" in text and "nic4" in text
    assert "mega-3" in text and "no machine type" in text
    assert any(w.startswith("gce_gpu: 3 instance(s) left out") for w in run.warnings)
    # a machine type the configuration does not ask for is no record to warn about
    narrow = run_plugin(config(emu, server_side_filter=False, machine_types=["a3-ultragpu-8g"]))
    assert sorted(narrow.hosts) == ["ultra-0"]
    assert not any("mega-1" in w or "mega-2" in w for w in narrow.warnings)


# 8. connection refused names the URL and gives up soon

def test_connection_refused_names_the_url_and_is_bounded(run_plugin, config, monkeypatch, emulator):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    url = "http://127.0.0.1:%d" % port
    from ansible_collections.gpudirect.gcp.plugins.inventory import gce_gpu
    verbose = []
    monkeypatch.setattr(gce_gpu.display, "v", lambda msg, *a, **k: verbose.append(msg))
    started = time.monotonic()
    with pytest.raises(AnsibleParserError) as err:
        run_plugin(config(emulator, api_endpoint=url, retry_max_time=60))
    assert time.monotonic() - started < 15
    assert url in one_line(err) and "connection refused" in str(err.value)
    assert any(url in m for m in verbose)


# 9. an inventory that does not parse stops the run

def test_shipped_configuration_fails_on_an_unparsed_inventory():
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
    import configparser
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(root, "ansible.cfg"))
    assert cfg.getboolean("inventory", "any_unparsed_is_failed")


def test_an_inventory_source_that_does_not_parse_stops_the_run(tmp_path):
    import subprocess
    import sys
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
    (tmp_path / "typo.gce_gpu.yml").write_text("plugin: gpudirect.gcp.gce_gpu\nproject: [p]\n")
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(root, "ansible.cfg"))
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-inventory"), "-i",
                           str(tmp_path / "typo.gce_gpu.yml"), "--list"], cwd=root, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert proc.returncode != 0
    assert "unknown option project; did you mean projects?" in proc.stdout


def _parse_for_a_run(new_plugin, tmp_path, monkeypatch, config_text, stops):
    """parse() as a run's first parse of the source, with any_unparsed_is_failed set to stops."""
    import yaml
    from ansible.inventory.data import InventoryData
    from ansible.parsing.dataloader import DataLoader
    from ansible_collections.gpudirect.gcp.plugins.inventory import gce_gpu
    path = tmp_path / "run.gce_gpu.yml"
    path.write_text(yaml.safe_dump(config_text))
    errors = []
    monkeypatch.setattr(gce_gpu.display, "error", lambda msg, *a, **k: errors.append(msg))
    monkeypatch.setattr(gce_gpu, "_stop_on_error", lambda: stops)
    plugin = new_plugin()
    return errors, lambda: plugin.parse(InventoryData(), DataLoader(), str(path))


def test_first_parse_of_a_failing_run_ends_it_in_one_line(emulator, config, tmp_path, monkeypatch, plugin_factory):
    errors, parse = _parse_for_a_run(plugin_factory, tmp_path, monkeypatch, config(emulator, projects=["nope"]), True)
    with pytest.raises(SystemExit) as info:
        parse()
    assert info.value.code == 1
    assert len(errors) == 1 and "\n" not in errors[0]
    assert errors[0].startswith("gce_gpu: project nope: not found (404)") and "run.gce_gpu.yml" in errors[0]
    # a second parse of the same source is a refresh inside a running play: it raises, never exits
    with pytest.raises(AnsibleParserError, match="project nope: not found"):
        parse()


def test_without_any_unparsed_is_failed_errors_are_left_to_ansible(emulator, config, tmp_path, monkeypatch,
                                                                   plugin_factory):
    errors, parse = _parse_for_a_run(plugin_factory, tmp_path, monkeypatch, config(emulator, projects=["nope"]), False)
    with pytest.raises(AnsibleParserError, match="project nope: not found"):
        parse()
    assert errors == []


def test_cache_json_is_strict(emulator, run_plugin, config, tmp_path):
    cfg = config(emulator, cache=True, cache_plugin="jsonfile", cache_connection=str(tmp_path / "c"),
                 cache_timeout=3600)
    run_plugin(cfg)
    for name in os.listdir(str(tmp_path / "c")):
        json.loads((tmp_path / "c" / name).read_text(), parse_constant=pytest.fail)


def test_one_malformed_record_never_costs_the_other_hosts(make_emulator, run_plugin, config):
    data = fx.mixed_fleet()
    by_name = dict((i["name"], i) for i in data["projects"]["proj-a"]["instances"])
    by_name["mega-1"]["labels"] = ["not", "a", "mapping"]
    run = run_plugin(config(make_emulator(data)))
    assert sorted(run.hosts) == [h for h in ALL if h != "mega-1"]
    assert any("instance mega-1 left out: malformed record" in w for w in run.warnings)


def test_a_nic_network_of_the_wrong_type_costs_only_its_record(make_emulator, run_plugin, config):
    data = fx.mixed_fleet()
    by_name = dict((i["name"], i) for i in data["projects"]["proj-a"]["instances"])
    by_name["mega-2"]["networkInterfaces"][3]["network"] = ["not", "a", "link"]
    run = run_plugin(config(make_emulator(data)))
    assert sorted(run.hosts) == [h for h in ALL if h != "mega-2"]
    assert any("instance mega-2 left out: malformed record" in w for w in run.warnings)


def test_vms_named_for_ansibles_own_names_never_stand_for_the_controller(make_emulator, run_plugin, config):
    """A VM called localhost (a valid GCE name), all or ungrouped becomes name.zone.project, with a warning;
    the others keep their names and nothing fails to parse."""
    data = fx.mixed_fleet()
    by_name = dict((i["name"], i) for i in data["projects"]["proj-a"]["instances"])
    for old, new in (("mega-0", "localhost"), ("mega-1", "all"), ("mega-2", "ungrouped")):
        by_name[old]["name"] = new
    run = run_plugin(config(make_emulator(data)))
    assert not {"localhost", "all", "ungrouped"} & set(run.hosts)
    assert {"localhost.us-central1-a.proj-a", "all.us-central1-a.proj-a", "ungrouped.us-central1-a.proj-a",
            "mega-3"} <= set(run.hosts)
    assert any("hostname localhost is one Ansible reserves" in w for w in run.warnings)
