# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight role's cross-node checks, run by ansible-playbook on local hosts.

Each case builds an inventory of hosts that all use the local connection, so
the version detection reads this machine (nothing found, the same on every
host) and the cases vary only the inventory facts and the role's options.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re
import os
import subprocess
import sys

import yaml

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_hosts
from ansible_collections.gpudirect.gcp.tests.unit.playbooks import _ansible_output as ansible_output

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))

import compute_fleet as fx  # noqa: E402  pylint: disable=wrong-import-position
import compute_harness as harness  # noqa: E402  pylint: disable=wrong-import-position

PLAYBOOK = """
- name: Preflight
  hosts: gpu_nodes
  gather_facts: false
  roles:
    - role: gpudirect.gcp.preflight
"""


def run(tmp_path, hosts, extra_vars=None, limit=None, env_extra=None):
    inv = {"gpu_nodes": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
                         "hosts": hosts}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inv))
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
            str(tmp_path / "play.yml"), "-e",
            json.dumps(dict({"preflight_check_prerequisites": False, "preflight_check_firewalls": False},
                            **(extra_vars or {})))]
    if limit:
        argv += ["--limit", limit]
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_INVENTORY_ENABLED="ansible.builtin.yaml", **(env_extra or {}))
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    return proc.returncode, ansible_output.text(proc.stdout + proc.stderr)


def node(family="a3-mega", zone="us-central1-a"):
    """A host as the gce_gpu plugin makes it (host_vars: minimal)."""
    return gce_hosts.inventory_host(fx.gpu_instance("vm", family, zone=zone), "p", {})[0]


def test_one_family_one_zone_passes(tmp_path):
    rc, out = run(tmp_path, {"n0": node(), "n1": node()})
    assert rc == 0, out


def test_odd_family_and_zone_are_named_and_every_node_fails(tmp_path):
    rc, out = run(tmp_path, {"n0": node(), "n1": node(), "n2": node("a3-high", "us-central1-b")})
    assert rc == 2, out
    assert "machine family (gpu_family) differs across nodes: 2 of 3 have a3-mega; n2 has a3-high" in out
    assert "zone (gce_zone) differs across nodes: 2 of 3 have us-central1-a; n2 has us-central1-b" in out
    for host in ("n0", "n1", "n2"):
        assert re.search(r"^%s\s+: ok=\d+ +changed=0 +unreachable=0 +failed=1" % host, out, re.M), out


def test_unknown_family_is_one_line(tmp_path):
    # no instance of an unknown family can come from the plugin: the variable is set by hand
    rc, out = run(tmp_path, {"n0": dict(node(), gpu_family="a9-giant")})
    assert rc == 2, out
    assert "unknown GPU family 'a9-giant'" in out
    assert "Traceback" not in out


def test_missing_inventory_facts_are_named(tmp_path):
    rc, out = run(tmp_path, {"n0": {"gpu_family": "a3-mega"}})
    assert rc == 2, out
    assert "n0: inventory variable(s) gce_zone missing" in out


def test_a_limited_run_checks_its_nodes_and_says_in_one_line_that_their_count_was_not(tmp_path):
    hosts = {"n0": node(), "n1": node(), "n2": node()}
    rc, out = run(tmp_path, hosts, {"preflight_expected_nodes": 3, "preflight_min_nodes": 3}, limit="n0,n1")
    assert rc == 0, out
    lines = [line for line in out.splitlines() if "node count not checked" in line]
    assert len(lines) == 1, out
    assert "this run is limited to 2 of 3 node(s) (--limit n0,n1)" in lines[0], lines
    assert "partial cluster" not in out and "reachable node(s)" not in out
    # the checks across the nodes of the run still stop it
    rc, out = run(tmp_path, dict(hosts, n1=node("a3-high")), {"preflight_expected_nodes": 3}, limit="n0,n1")
    assert rc == 2, out
    assert "machine family (gpu_family) differs across nodes" in out


def test_expected_nodes_refuses_a_run_over_every_node_of_a_short_inventory(tmp_path):
    rc, out = run(tmp_path, {"n0": node(), "n1": node()}, {"preflight_expected_nodes": 3})
    assert rc == 2, out
    assert "partial cluster: 2 node(s) in this run (n0, n1), preflight_expected_nodes is 3" in out
    assert "node count not checked" not in out
    # a limit that keeps every node limits nothing
    rc, out = run(tmp_path, {"n0": node(), "n1": node()}, {"preflight_expected_nodes": 3}, limit="gpu_nodes")
    assert rc == 2 and "partial cluster: 2 node(s)" in out, out


def test_sliced_awx_job_is_refused_unless_allowed(tmp_path):
    awx = {"awx_job_template_name": "GPU cluster - site", "awx_workflow_job_name": "GPU cluster - site"}
    rc, out = run(tmp_path, {"n0": node()}, awx)
    assert rc == 2, out
    assert 'one slice of the sliced AWX job "GPU cluster - site"' in out
    # the checks can be turned off
    rc, out = run(tmp_path, {"n0": node(), "n1": node("a3-high")},
                  dict(awx, preflight_refuse_sliced_jobs=False, preflight_require_one_family=False))
    assert rc == 0, out


SLICE = {"awx_job_template_name": "GPU cluster - configure", "awx_workflow_job_name": "GPU cluster - configure"}


def test_each_node_on_its_own_compares_nothing_across_nodes_and_takes_a_slice(tmp_path):
    rc, out = run(tmp_path, {"n0": node(), "n1": node("a3-high", "us-central1-b")},
                  dict(SLICE, preflight_cluster_checks=False, preflight_expected_nodes=5, preflight_min_nodes=3))
    assert rc == 0, out
    assert "differs across nodes" not in out and "slice" not in out


def test_on_its_own_a_node_missing_a_prerequisite_stops_alone(tmp_path):
    (tmp_path / "nvidia-version").write_text("570.172.08\n")
    (tmp_path / "helper").write_text("")
    perf = tmp_path / "nccl-tests"
    perf.mkdir()
    for name in ("all_gather", "all_reduce", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv"):
        (perf / ("%s_perf" % name)).write_text("#!/bin/sh\n")
        (perf / ("%s_perf" % name)).chmod(0o755)
    sources = {"/sys/module/nvidia/version": str(tmp_path / "nvidia-version"),
               "/dev/dmabuf_import_helper": str(tmp_path / "helper")}
    hosts = {"n0": dict(node(), preflight_path_sources=sources),
             "n1": dict(node(), preflight_path_sources=dict(sources, **{"/dev/dmabuf_import_helper": "/nonexistent"}))}
    seeded = {"preflight_check_prerequisites": True, "preflight_cluster_checks": False, "preflight_registries": [],
              "nccl_tests_binary_dir": str(perf)}
    rc, out = run(tmp_path, hosts, seeded)
    assert rc == 2, out
    assert "dmabuf import helper: /dev/dmabuf_import_helper is missing" in out
    assert "(1 of 1 node(s): n1)" in out
    assert re.search(r"^n0\s+: ok=\d+ +changed=0 +unreachable=0 +failed=0", out, re.M), out
    assert re.search(r"^n1\s+: ok=\d+ +changed=0 +unreachable=0 +failed=1", out, re.M), out


def test_a_slice_cannot_configure_imex_but_a_limited_run_can(tmp_path):
    hosts = {"n0": node("a4x", "us-central1-a"), "n1": node("a4x", "us-central1-a")}
    rc, out = run(tmp_path, hosts, dict(SLICE, preflight_cluster_checks=False))
    assert rc == 2, out
    assert ("a4x lists every VM of the NVLink domain in its IMEX configuration, and this slice of the sliced AWX job "
            '"GPU cluster - configure" sees only its own share of them') in out
    rc, out = run(tmp_path, hosts, {"preflight_cluster_checks": False}, limit="n0")
    assert rc == 0, out


def test_each_missing_prerequisite_is_one_line_before_anything_changes(tmp_path):
    """This machine has no GPU driver: a stand-in version file takes its place, and A3 Mega's
    dmabuf helper and the nccl-tests programs are missing on purpose."""
    (tmp_path / "nvidia-version").write_text("570.172.08\n")
    seeded = {"preflight_check_prerequisites": True,
              "preflight_path_sources": {"/sys/module/nvidia/version": str(tmp_path / "nvidia-version"),
                                         "/dev/dmabuf_import_helper": str(tmp_path / "no-helper")},
              "nccl_tests_binary_dir": str(tmp_path / "no-nccl-tests")}
    rc, out = run(tmp_path, {"n0": node(), "n1": node()}, seeded)
    assert rc == 2, out
    assert ("dmabuf import helper: /dev/dmabuf_import_helper is missing and no import-helper kernel module is there "
            "to make it") in out
    assert "(2 of 2 node(s): n0, n1)" in out
    assert "nccl-tests: %s/all_reduce_perf is missing" % (tmp_path / "no-nccl-tests") in out
    assert "NVIDIA driver" not in out
    for host in ("n0", "n1"):
        assert re.search(r"^%s\s+: ok=\d+ +changed=0 +unreachable=0 +failed=1" % host, out, re.M), out


def test_a_gpu_vpc_whose_rules_block_icmp_is_one_line_before_anything_changes(tmp_path):
    """The Compute API emulator serves firewall rules that allow TCP everywhere and ICMP everywhere but on one
    GPU VPC; preflight reads them with the inventory plugin's environment and stops every node, in check mode too."""
    vms = [fx.gpu_instance("vm%d" % i, "a3-mega", prefix="mega", index=i) for i in range(2)]
    nets = fx.gpu_networks("mega", "a3-mega")
    rules = [{"name": "%s-internal" % net, "network": net, "sourceRanges": ["10.0.0.0/8"],
              "allowed": [{"IPProtocol": "tcp"}] + ([] if net == nets[2] else [{"IPProtocol": "icmp"}])}
             for net in nets]
    hosts = dict((vm["name"], gce_hosts.inventory_host(vm, "p", {})[0]) for vm in vms)
    fleet = {"projects": {"p": {"instances": vms, "firewalls": rules}}}
    with harness.ThreadEmulator(fleet) as emu:
        env = {"GCP_COMPUTE_API_ENDPOINT": emu.url, "GCP_AUTH_KIND": "accesstoken", "GCP_ACCESS_TOKEN": "t-not-secret"}
        rc, out = run(tmp_path, hosts, {"preflight_check_firewalls": True}, env_extra=env)
        checked_rc, checked = run(tmp_path, hosts, {"preflight_check_firewalls": True, "ansible_check_mode": True},
                                  env_extra=env)
    assert rc == 2, out
    fatal = [json.loads(line.split("=> ", 1)[1])["msg"] for line in out.splitlines()
             if line.startswith("fatal: [vm0]: FAILED! => ")]
    assert len(fatal) == 1, out
    lines = fatal[0][len("preflight: "):].split(" | ")
    assert len(lines) == 1 and lines[0].startswith("firewall of network %s: ICMP from the nodes' addresses"
                                                   % nets[2]), out
    assert checked_rc == 2 and ("firewall of network %s: ICMP" % nets[2]) in checked
    for host in hosts:
        assert re.search(r"^%s\s+: ok=\d+ +changed=0 +unreachable=0 +failed=1" % host, out, re.M), out


def test_firewall_rules_that_cannot_be_read_warn_and_do_not_stop(tmp_path):
    vms = [fx.gpu_instance("vm0", "a3-mega", prefix="mega")]
    hosts = {"vm0": gce_hosts.inventory_host(vms[0], "p", {})[0]}
    with harness.ThreadEmulator({"projects": {"p": {"instances": vms}}, "faults": {"unauthorized": True}}) as emu:
        env = {"GCP_COMPUTE_API_ENDPOINT": emu.url, "GCP_AUTH_KIND": "accesstoken", "GCP_ACCESS_TOKEN": "t-not-secret"}
        rc, out = run(tmp_path, hosts, {"preflight_check_firewalls": True}, env_extra=env)
    assert rc == 0, out
    assert "could not check the VPC firewall rules: cannot read the firewall rules" in out


def test_a_user_who_cannot_become_root_is_one_line_before_anything_else(tmp_path):
    # an ordinary user (id -u says 1000) whose sudo asks for a password, as the real sudo -n answers
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "id").write_text("#!/bin/sh\necho 1000\n")
    (bindir / "sudo").write_text("#!/bin/sh\necho 'sudo: a password is required' >&2\nexit 1\n")
    for name in ("id", "sudo"):
        (bindir / name).chmod(0o755)
    rc, out = run(tmp_path, {"n0": node()}, env_extra={"PATH": "%s:%s" % (bindir, os.environ["PATH"])})
    assert rc == 2, out
    assert ("n0: sudo: the SSH user (uid 1000) cannot become root without a password (sudo: a password is "
            "required); grant it passwordless sudo") in out
    assert "Read the node's facts" not in out


def test_a_driver_older_than_the_pairs_qualified_one_is_a_warning_or_refused_when_strict(tmp_path):
    """The default TCPXO plugin was qualified with driver 595.71.05 (the family table); these nodes' stand-in
    sysfs says 570.172.08."""
    driver = tmp_path / "sys" / "module" / "nvidia"
    driver.mkdir(parents=True)
    (driver / "version").write_text("570.172.08\n")
    hosts = {"n0": node(), "n1": node()}
    settings = {"gpudirect_gpu_sys_dir": str(tmp_path / "sys")}
    rc, out = run(tmp_path, hosts, settings)
    assert rc == 0, out
    line = ("driver: driver 570.172.08 is older than driver 595.71.05, which plugin v1.0.17 was qualified with "
            "[CEA PR 626; SG receive-data-path-manager-mega; TPI README] (2 of 2 node(s): n0, n1)")
    assert "preflight warning: version qualification" in out and line in out
    rc, out = run(tmp_path, hosts, dict(settings, gpudirect_strict_versions=True))
    assert rc == 2, out
    assert "preflight: " + line in out
    # judged against the release this run installs, where the node has none: v1.0.16 was qualified with
    # 580.65.06, and v1.0.15's driver is not published (nothing to compare)
    rc, out = run(tmp_path, hosts, dict(settings, gpudirect_strict_versions=True, nccl_plugin_version="v1.0.16"))
    assert rc == 2 and "older than driver 580.65.06, which plugin v1.0.16" in out, out
    rc, out = run(tmp_path, hosts, dict(settings, gpudirect_strict_versions=True, nccl_plugin_version="v1.0.15"))
    assert rc == 0 and "version qualification" not in out, out
