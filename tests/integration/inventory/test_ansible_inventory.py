# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpudirect.gcp.gce_gpu through the real ansible-inventory and ansible-playbook CLIs."""

import os

import pytest
from ansible import release

import compute_harness as harness

pytestmark = pytest.mark.emulator

# host_vars: minimal (the default), as ansible-inventory --list shows them
CONTRACT_VARS = {"ansible_host", "gpu_family", "gpu_transport", "gce_project", "gce_zone", "gce_name", "gce_status",
                 "gce_topology", "gce_nics", "gpu_nics"}
FULL_ONLY_VARS = {"gpu_class", "gce_id", "gce_machine_type", "gce_labels", "gce_provisioning_model",
                  "gce_placement_policies", "gce_reservation", "gce_accelerators"}


def test_list_gives_contract_vars_and_groups(emulator, ansible, config):
    res = ansible(["ansible-inventory", "--list"], config(emulator, projects=["proj-a", "proj-b"]))
    assert res.rc == 0, res.stderr
    assert "Traceback" not in res.stderr
    hv = res.hostvars
    assert sorted(hv) == ["high-0", "mega-0", "mega-1", "mega-2", "mega-3",
                          "shared.us-central1-b.proj-a", "shared.us-central1-b.proj-b", "ultra-0"]
    for name, hvars in hv.items():
        assert set(hvars) == CONTRACT_VARS, name
        assert set(hvars["gce_nics"][0]) == {"name", "network", "ip", "mtu"}
    assert hv["mega-0"]["gpu_nics"][0]["name"] == "nic1" and hv["mega-0"]["gpu_nics"][0]["mtu"] == 8244
    assert hv["mega-0"]["gce_topology"] == {"cluster": "cluster-1", "block": "blk1", "subblock": "sb0", "host": "h0"}
    assert hv["ultra-0"]["gce_topology"] == {}
    assert hv["high-0"]["gpu_transport"] == "tcpx"
    assert res.group("family_a3_mega") == ["mega-0", "mega-1", "mega-2", "mega-3"]
    assert res.group("transport_tcpx") == ["high-0"]
    assert res.group("project_proj_b") == ["high-0", "shared.us-central1-b.proj-b"]
    assert res.group("zone_europe_west4_b") == ["ultra-0"]
    assert res.group("block_blk1") == ["mega-0", "mega-1", "mega-2", "mega-3"]
    assert res.group("subblock_blk1_sb1") == ["mega-2", "mega-3"]
    assert "hostname shared is used by 2 instances" in res.stderr
    assert "without placement" not in res.stderr  # counted in the -v summary, never warned per host


def test_full_host_vars_from_the_environment(emulator, ansible, config):
    res = ansible(["ansible-inventory", "--list"], config(emulator), env={"GCP_GCE_GPU_HOST_VARS": "full"})
    assert res.rc == 0, res.stderr
    hv = res.hostvars
    assert set(hv["mega-0"]) == CONTRACT_VARS | FULL_ONLY_VARS
    assert hv["mega-0"]["gce_nics"][0]["subnetwork"] == "mega-net-0-sub"
    # the label that looks like a template stays a plain, untemplated string
    assert hv["ultra-0"]["gce_labels"]["tmpl"] == "{{ lookup('pipe', 'id') }}"


def test_keyed_groups_on_topology_and_on_variables_the_hosts_do_not_keep(emulator, ansible, config):
    cfg = config(emulator, keyed_groups=[{"key": "gce_topology.subblock", "prefix": "sb"},
                                         {"key": "gce_labels.pool", "prefix": "pool"}],
                 compose={"rack": "gce_topology.block ~ '/' ~ gce_topology.subblock"})
    res = ansible(["ansible-inventory", "--list"], cfg)
    assert res.rc == 0, res.stderr
    assert res.group("sb_sb0") == ["mega-0", "mega-1"] and res.group("sb_sb1") == ["mega-2", "mega-3"]
    assert res.group("pool_train") == ["mega-0", "mega-1", "mega-2", "mega-3"]
    assert res.hostvars["mega-3"]["rack"] == "blk1/sb1"
    assert "gce_labels" not in res.hostvars["mega-3"]
    graph = ansible(["ansible-inventory", "--graph", "-v"], cfg)
    assert graph.rc == 0, graph.stderr
    summary = [line for line in (graph.stdout + graph.stderr).splitlines() if line.startswith("gce_gpu: ")]
    assert len(summary) == 1, summary
    assert summary[0].startswith("gce_gpu: 6 hosts, 2 of them without placement data (gce_topology is {})")


def test_awx_style_service_account_from_environment(emulator, ansible, tmp_path):
    """What AWX's GCE credential injects: a key file and GCP_* variables, no auth in the file."""
    key = str(tmp_path / "awx-key.json")
    harness.make_service_account_key(key, emulator.url + "/token")
    env = {"GCE_CREDENTIALS_FILE_PATH": key, "GCP_SERVICE_ACCOUNT_FILE": key,
           "GOOGLE_APPLICATION_CREDENTIALS": key, "GCP_AUTH_KIND": "serviceaccount", "GCP_PROJECT": "proj-b",
           "GCP_COMPUTE_API_ENDPOINT": emulator.url,
           "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True", "ANSIBLE_INVENTORY_EXPORT": "True"}
    res = ansible(["ansible-inventory", "--list", "--export"], {"plugin": "gpudirect.gcp.gce_gpu"}, env=env)
    assert res.rc == 0, res.stderr
    assert sorted(res.hostvars) == ["high-0", "shared"]
    stats = emulator.stats()
    assert stats["token"] == 1 and stats["by_project"] == {"proj-b": stats["api"]}


@pytest.mark.parametrize("case, faults, extra, line", [
    ("forbidden", {"forbidden_projects": ["proj-b"]}, {"projects": ["proj-a", "proj-b"]},
     "gce_gpu: project proj-b: permission denied (403)"),
    ("disabled", {"disabled_projects": ["proj-a"]}, {},
     "gce_gpu: project proj-a: the Compute Engine API is disabled (403)"),
    ("unauthorized", {"unauthorized": True}, {}, "gce_gpu: project proj-a: authentication failed (401)"),
    ("unknown project", {}, {"projects": ["no-such-project"]}, "gce_gpu: project no-such-project: not found (404)"),
    ("no projects", {}, {"projects": []}, "option projects is empty"),
    ("bad choice", {}, {"ansible_host_source": "dns"}, harness.choice_error('ansible_host_source', 'dns')),
    ("bad hostnames", {}, {"hostnames": ["fqdn"]}, "option hostnames: unknown hostnames entry 'fqdn'"),
    ("bad host_vars", {}, {"host_vars": "everything"}, harness.choice_error('host_vars', 'everything')),
    ("bad extra_host_vars", {}, {"extra_host_vars": ["gce_label"]},
     "option extra_host_vars: 'gce_label' is not a host variable of this inventory; did you mean gce_labels?"),
    ("missing key file", {}, {"auth_kind": "serviceaccount", "access_token": None,
                              "service_account_file": "/nonexistent/sa.json"},
     "gce_gpu: service_account_file /nonexistent/sa.json cannot be read"),
    ("throttled for good", {"fail_first": {"count": 1000, "status": 429}}, {"retry_max_time": 1, "retries": 2},
     "gce_gpu: project proj-a: listing instances kept failing with HTTP 429"),
])
def test_errors_are_one_line_without_traceback(emulator, ansible, config, case, faults, extra, line):
    emulator.set_faults(faults)
    res = ansible(["ansible-inventory", "--list"], config(emulator, **extra),
                  env={"ANSIBLE_INVENTORY_UNPARSED_FAILED": "True"})
    assert res.rc != 0, case
    assert (line.search(res.stderr) if hasattr(line, "search") else line in res.stderr), res.stderr
    assert "Traceback" not in res.stderr


def test_unreachable_zone_warns_and_lists_the_rest(emulator, ansible, config):
    emulator.set_faults({"unreachable_zones": ["europe-west4-b"]})
    res = ansible(["ansible-inventory", "--list"], config(emulator))
    assert res.rc == 0, res.stderr
    assert "ultra-0" not in res.hostvars and "mega-0" in res.hostvars
    assert "project proj-a: zones/europe-west4-b was unreachable" in " ".join(res.stderr.split())


def test_cache_hit_refresh_and_write_back(emulator, ansible, config, tmp_path):
    cache = str(tmp_path / "cache")
    cfg = config(emulator, cache=True, cache_plugin="ansible.builtin.jsonfile", cache_connection=cache,
                 cache_timeout=3600)
    cold = ansible(["ansible-inventory", "--list"], cfg)
    assert cold.rc == 0 and len(os.listdir(cache)) == 1
    assert emulator.stats()["api"] > 0
    emulator.reset()
    warm = ansible(["ansible-inventory", "--list"], cfg)
    assert warm.hostvars == cold.hostvars
    assert emulator.stats()["total"] == 0  # no token, no API call
    emulator.set_faults({"unreachable_zones": ["europe-west4-b"]})
    if tuple(int(n) for n in release.__version__.split(".")[:2]) >= (2, 17):
        fresh = ansible(["ansible-inventory", "--list", "--flush-cache"], cfg)
        assert "ultra-0" not in fresh.hostvars
    else:  # ansible-inventory has --flush-cache from 2.17 on; ansible-playbook's refreshes the cache the same way
        play = tmp_path / "nothing.yml"
        play.write_text("- hosts: localhost\n  gather_facts: false\n  tasks: []\n")
        assert ansible(["ansible-playbook", "--flush-cache", str(play)], cfg).rc == 0
    assert emulator.stats()["api"] > 0
    emulator.reset()
    again = ansible(["ansible-inventory", "--list"], cfg)
    assert emulator.stats()["total"] == 0
    assert "ultra-0" not in again.hostvars  # the refresh was written back


def test_refresh_inventory_in_a_play_writes_the_cache_back(emulator, ansible, config, tmp_path):
    cache = str(tmp_path / "cache")
    cfg = config(emulator, cache=True, cache_plugin="ansible.builtin.jsonfile", cache_connection=cache,
                 cache_timeout=3600)
    playbook = tmp_path / "refresh.yml"
    playbook.write_text("""
- name: Refresh the inventory after the fleet changed
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Before, ultra-0 is known
      ansible.builtin.assert:
        that: "'ultra-0' in groups['all']"
    - name: Take a zone away in the emulator
      ansible.builtin.uri:
        url: "{{ emulator_url }}/_emulator/faults"
        method: POST
        body_format: json
        body: {unreachable_zones: [europe-west4-b]}
    - name: Refresh
      ansible.builtin.meta: refresh_inventory
    - name: After, ultra-0 is gone
      ansible.builtin.assert:
        that: "'ultra-0' not in groups['all'] and 'mega-0' in groups['all']"
""")
    res = ansible(["ansible-playbook", str(playbook), "-e", "emulator_url=" + emulator.url], cfg)
    assert res.rc == 0, res.stdout + res.stderr
    emulator.reset()
    cached = ansible(["ansible-inventory", "--list"], cfg)
    assert emulator.stats()["total"] == 0
    assert "ultra-0" not in cached.hostvars and "mega-0" in cached.hostvars
