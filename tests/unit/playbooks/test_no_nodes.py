# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every entry playbook, run by ansible-playbook on an inventory that matches no node (or fewer than
preflight_expected_nodes), stops in one line that names the inventory source and what it matched, before
any node is touched; gpudirect_allow_empty=true lets an intentionally empty run through."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLAYBOOKS = ["site.yml", "configure.yml", "fabric.yml", "diagnose.yml", "diagnose_job.yml", "validate.yml", "upgrade_plugin.yml",
             "add_nodes.yml", "teardown.yml", "node_health.yml", "slurm_hooks.yml", "slurm_topology.yml"]


def _play(tmp_path, playbook, hosts, *extra):
    inv = {"gpu_nodes": {"hosts": dict((h, {"ansible_connection": "local", "gpu_family": "a3-mega",
                                            "ansible_python_interpreter": sys.executable}) for h in hosts)},
           "others": {"hosts": {"bastion": {"ansible_connection": "local"}}}}
    path = tmp_path / "cluster.yml"
    path.write_text(yaml.safe_dump(inv))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(path),
            os.path.join(ROOT, "playbooks", playbook)] + list(extra)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_INVENTORY_ENABLED="ansible.builtin.yaml", GPUDIRECT_REPORT_DIR=str(tmp_path / "reports"),
               ANSIBLE_CALLBACK_RESULT_FORMAT="json")
    proc = subprocess.run(argv, cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    return proc, str(path)


def _error_lines(out):
    """The one fatal line; ansible-core 2.19+ repeats its message in an [ERROR] block above it, which may
    say nothing else."""
    assert "Traceback" not in out and "exception" not in out.lower(), out[-3000:]
    fatal = [line for line in out.splitlines() if line.startswith(("fatal:", "ERROR!"))]
    for line in out.splitlines():
        if line.startswith("[ERROR]"):
            assert fatal and line.split("Action failed: ", 1)[-1] in fatal[0], out[-3000:]
    return fatal


@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_an_inventory_that_matches_no_node_fails_every_entry_playbook_in_one_line(tmp_path, playbook):
    proc, source = _play(tmp_path, playbook, [])
    assert proc.returncode != 0, proc.stdout[-3000:]
    errors = _error_lines(proc.stdout)
    assert len(errors) == 1, proc.stdout[-3000:]
    assert "matched 0 node(s)" in errors[0] and source in errors[0] and "gpu_nodes" in errors[0], errors[0]
    assert "gpudirect_allow_empty" in errors[0]
    # nothing was judged: no report was written
    assert not (tmp_path / "reports").exists()


@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_a_limit_that_keeps_no_node_fails_every_entry_playbook_in_one_line(tmp_path, playbook):
    # the limit matches a host of the inventory, none of the GPU nodes: every play would be skipped
    proc, source = _play(tmp_path, playbook, ["n0", "n1"], "--limit", "bastion")
    assert proc.returncode != 0, proc.stdout[-3000:]
    errors = _error_lines(proc.stdout)
    assert len(errors) == 1, proc.stdout[-3000:]
    assert "matched 0 node(s) in 'gpu_nodes' within --limit bastion" in errors[0] and source in errors[0], errors[0]
    assert "gpudirect_allow_empty" in errors[0]
    assert not (tmp_path / "reports").exists()


def test_fewer_nodes_than_expected_fail_before_any_node_is_touched(tmp_path):
    proc, _source = _play(tmp_path, "diagnose.yml", ["n0", "n1"], "-e", "preflight_expected_nodes=64")
    assert proc.returncode != 0
    errors = _error_lines(proc.stdout)
    assert len(errors) == 1 and "matched 2 node(s)" in errors[0] and "64" in errors[0], proc.stdout[-3000:]
    # the node checks never started
    assert "Diagnose - check every node" not in proc.stdout


def test_a_configure_slice_holds_part_of_the_cluster_by_design_and_is_not_refused_for_it(tmp_path):
    # an AWX slice of a 64-node bring-up sees a quarter of the nodes, with the survey's expected count;
    # only the always-tagged tasks run (no tag matches), enough to pass or stop at the target check
    proc, _source = _play(tmp_path, "configure.yml", ["n0", "n1"], "-e", "preflight_expected_nodes=64",
                          "--tags", "gpudirect_no_such_tag")
    assert "matched 2 node(s)" not in proc.stdout, proc.stdout[-3000:]
    assert "PLAY [Targets" in proc.stdout
    proc, _source = _play(tmp_path, "configure.yml", [], "-e", "preflight_expected_nodes=64")
    assert proc.returncode != 0 and "matched 0 node(s)" in proc.stdout


def test_an_intentionally_empty_run_passes_and_says_so(tmp_path):
    proc, _source = _play(tmp_path, "site.yml", [], "-e", "gpudirect_allow_empty=true")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "no node in this run (gpudirect_allow_empty)" in proc.stdout


def test_an_intentionally_empty_diagnosis_is_not_judged_and_not_a_pass(tmp_path):
    proc, _source = _play(tmp_path, "diagnose.yml", [], "-e", "gpudirect_allow_empty=true")
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert "diagnosis: not_judged" in proc.stdout
    assert "pass" not in [w.strip(",") for w in proc.stdout.split("diagnosis:", 1)[-1].split()[:1]]


def test_gpu_vms_of_no_gpudirect_family_are_named_once_and_left_out(tmp_path):
    """G4 VMs in the inventory (class_g4, as the gce_gpu plugin groups them): the run says so in one line and
    acts on the GPUDirect nodes only; here there are none, so it stops as an empty run does."""
    inv = {"class_g4": {"hosts": {"render-0": {"ansible_connection": "local"},
                                  "render-1": {"ansible_connection": "local"}}}}
    path = tmp_path / "cluster.yml"
    path.write_text(yaml.safe_dump(inv))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(path),
            os.path.join(ROOT, "playbooks", "validate.yml"), "-e", "gpudirect_allow_empty=true"]
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_INVENTORY_ENABLED="ansible.builtin.yaml", GPUDIRECT_REPORT_DIR=str(tmp_path / "reports"))
    proc = subprocess.run(argv, cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    lines = [line for line in proc.stdout.splitlines() if "g4 VM(s) left out" in line]
    assert len(lines) == 1 and "(render-0, render-1)" in lines[0], proc.stdout[-3000:]
    assert "render-0 " not in proc.stdout.split("PLAY RECAP")[-1], proc.stdout[-2000:]
