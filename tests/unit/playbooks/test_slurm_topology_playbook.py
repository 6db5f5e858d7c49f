# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/slurm_topology.yml run by ansible-playbook on local hosts, writing into a temporary directory:
check mode writes nothing, a real run writes what the filter renders, a second run changes nothing, and the
reconfigure handler runs only when asked to."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import subprocess
import sys

import yaml

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import slurm_topology

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLAYBOOK = os.path.join(ROOT, "playbooks", "slurm_topology.yml")
LOCAL = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
HOSTS = {
    "n0": {"gce_name": "a3-mega-009", "gce_topology": {"cluster": "c1", "block": "b1", "subblock": "s0", "host": "h0"}},
    "n1": {"gce_name": "a3-mega-010", "gce_topology": {"cluster": "c1", "block": "b1", "subblock": "s0", "host": "h1"}},
    "n2": {"gce_name": "a3-mega-011", "gce_topology": {"cluster": "c1", "block": "b1", "subBlock": "s1"}},
    "n3": {"gce_name": "a3-mega-012", "gce_topology": {"cluster": "c1", "block": "b0", "subblock": "s0"}},
    "n4": {"gce_name": "a3-mega-013"},
}


def run(tmp_path, extra_vars, *args, hosts=None):
    inv = {"gpu_nodes": {"vars": dict(LOCAL), "hosts": hosts or HOSTS},
           "slurm_controllers": {"hosts": {"ctl0": dict(LOCAL)}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inv))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
            PLAYBOOK, "-e", json.dumps(extra_vars)] + list(args)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_INVENTORY_ENABLED="ansible.builtin.yaml")
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def recap(out):
    match = re.search(r"^n0\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=0\s+failed=(\d+)", out, re.M)
    assert match, out
    return {"ok": int(match.group(1)), "changed": int(match.group(2)), "failed": int(match.group(3))}


def expected(hosts, name_var, **kwargs):
    return slurm_topology.render(dict((vars_[name_var] if name_var else host, vars_.get("gce_topology", {}))
                                      for host, vars_ in hosts.items()), **kwargs)


def test_check_mode_then_real_runs_write_the_file_once(tmp_path):
    dest = tmp_path / "etc" / "slurm" / "topology.conf"
    dest.parent.mkdir(parents=True)
    evars = {"slurm_topology_path": str(dest), "slurm_topology_name_var": "gce_name"}

    rc, out = run(tmp_path, evars, "--check", "--diff")
    assert rc == 0, out
    assert recap(out)["changed"] == 1
    assert not dest.exists()
    assert "+SwitchName=s0_1_0 Nodes=a3-mega-[009-010]" in out
    assert "would change: run `scontrol reconfigure` there" in out

    rc, out = run(tmp_path, evars)
    assert rc == 0, out
    assert recap(out)["changed"] == 1
    text = dest.read_text()
    assert text == expected(HOSTS, "gce_name")
    assert "SwitchName=s0 Switches=s0_[0-1],unplaced\n" in text
    assert "SwitchName=s0_0_0 Nodes=a3-mega-012\n" in text
    assert "SwitchName=unplaced Nodes=a3-mega-013\n" in text
    assert oct(dest.stat().st_mode & 0o777) == "0o644"

    rc, out = run(tmp_path, evars)
    assert rc == 0, out
    assert recap(out) == {"ok": 3, "changed": 0, "failed": 0}
    assert "scontrol reconfigure" not in out
    assert dest.read_text() == text

    rc, out = run(tmp_path, evars, "--check", "--diff")
    assert rc == 0, out
    assert recap(out)["changed"] == 0


def test_delegated_controller_two_levels_backup_and_reconfigure(tmp_path):
    dest = tmp_path / "topology.conf"
    dest.write_text("# an older file\n")
    log = tmp_path / "scontrol.log"
    scontrol = tmp_path / "scontrol"
    scontrol.write_text("#!/bin/sh\necho \"$@\" >> %s\n" % log)
    scontrol.chmod(0o755)
    evars = {"slurm_topology_path": str(dest), "slurm_topology_controller": "ctl0", "slurm_topology_levels": "block",
             "slurm_topology_backup": True, "slurm_topology_reconfigure": True, "slurm_topology_scontrol": str(scontrol)}

    rc, out = run(tmp_path, evars)
    assert rc == 0, out
    assert "changed: [n0 -> ctl0]" in out
    assert recap(out)["changed"] == 2
    assert dest.read_text() == expected(HOSTS, None, levels=("block",))
    assert "SwitchName=s0_1 Nodes=n[0-2]\n" in dest.read_text()
    assert log.read_text() == "reconfigure\n"
    backups = [p for p in tmp_path.iterdir() if p.name.startswith("topology.conf.") and p.name.endswith("~")]
    assert len(backups) == 1 and backups[0].read_text() == "# an older file\n"

    rc, out = run(tmp_path, evars)
    assert rc == 0, out
    assert recap(out)["changed"] == 0
    assert log.read_text() == "reconfigure\n"


def test_a_limited_run_is_refused(tmp_path):
    dest = tmp_path / "topology.conf"
    rc, out = run(tmp_path, {"slurm_topology_path": str(dest)}, "--limit", "n0,n1")
    assert rc == 2, out
    assert "--limit n0,n1 would leave the other nodes out of %s" % dest in out
    assert not dest.exists()
    rc, out = run(tmp_path, {"slurm_topology_path": str(dest), "slurm_topology_allow_limit": True}, "--limit", "n0,n1")
    assert rc == 0, out
    assert "Nodes=n[0-1]" in dest.read_text() and "n2" not in dest.read_text()


def test_missing_and_shared_names_are_named(tmp_path):
    dest = tmp_path / "topology.conf"
    hosts = dict(HOSTS, n5={"gce_name": "a3-mega-009"}, n6={"gce_name": "a3-mega-013"})
    rc, out = run(tmp_path, {"slurm_topology_path": str(dest), "slurm_topology_name_var": "gce_name"}, hosts=hosts)
    assert rc == 2, out
    assert "nodes share a Slurm node name (gce_name): a3-mega-009 is n0 and n5; a3-mega-013 is n4 and n6" in out

    hosts = dict(HOSTS, n5={})
    rc, out = run(tmp_path, {"slurm_topology_path": str(dest), "slurm_topology_name_var": "gce_name"}, hosts=hosts)
    assert rc == 2, out
    assert "no gce_name (slurm_topology_name_var) for n5" in out
    assert not dest.exists()


def test_bad_placement_is_one_line_naming_the_node(tmp_path):
    dest = tmp_path / "topology.conf"
    hosts = dict(HOSTS, n5={"gce_topology": "/b1/s0/h9"})
    rc, out = run(tmp_path, {"slurm_topology_path": str(dest)}, hosts=hosts)
    assert rc == 2, out
    assert "slurm_topology_conf: node 'n5': topology must be a mapping (cluster, block, subblock, host), got a string" in out
    assert "Traceback" not in out
    assert not dest.exists()
