# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The repair lines diagnose prints (ansible-playbook gpudirect.gcp.site --limit <node> --tags <phase>), run by
ansible-playbook on local hosts: every one keeps preflight's checks, and one limited to part of a cluster of
preflight_expected_nodes runs its phase on the node it names instead of stopping at the count."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shlex
import subprocess
import sys

import pytest
import yaml

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import REPAIR_TAGS, Repairs
from ansible_collections.gpudirect.gcp.tests.unit.playbooks import _ansible_output as ansible_output
from ansible_collections.gpudirect.gcp.tests.unit.playbooks.test_preflight_role import node

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
COMPONENTS = sorted(REPAIR_TAGS)
# site.yml's first two plays as they are, then a stand-in for each phase a repair line names: the real
# phases would configure this machine
PLAYBOOK = """
- name: Targets
  ansible.builtin.import_playbook: %(root)s/playbooks/phases/targets.yml
  vars:
    gpudirect_entry: site
- name: Preflight
  ansible.builtin.import_playbook: %(root)s/playbooks/phases/preflight.yml
""" % {"root": ROOT} + "".join("""
- name: Stand-in for the %(tag)s phase
  hosts: gpu_nodes
  gather_facts: false
  tags: [%(tag)s]
  tasks:
    - name: Say where it runs
      ansible.builtin.debug:
        msg: "phase %(tag)s ran on {{ inventory_hostname }}"
""" % {"tag": tag} for tag in sorted(set(REPAIR_TAGS.values())))


def _repair_options(component, host="n0"):
    """--limit and --tags of the line diagnose prints to repair component on host."""
    argv = shlex.split(Repairs().role(host, component))
    assert argv[:2] == ["ansible-playbook", "gpudirect.gcp.site"], argv
    return argv[2:]


def _run(tmp_path, playbook, hosts, options, extra_vars=None):
    inv = {"gpu_nodes": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                                  # the play escalates; this machine's tests run without sudo
                                  "ansible_become": False},
                         "hosts": hosts}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inv))
    extra = dict({"preflight_check_prerequisites": False, "preflight_check_firewalls": False}, **(extra_vars or {}))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
            playbook, "-e", yaml.safe_dump(extra, default_flow_style=True).strip()] + list(options)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_INVENTORY_ENABLED="ansible.builtin.yaml")
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    return proc.returncode, ansible_output.text(proc.stdout)


@pytest.mark.parametrize("component", COMPONENTS)
def test_every_repair_line_keeps_preflights_checks_in_site(tmp_path, component):
    rc, out = _run(tmp_path, os.path.join(ROOT, "playbooks", "site.yml"), {"n0": node(), "n1": node()},
                   _repair_options(component) + ["--list-tasks"])
    assert rc == 0, out
    for task in ("Stop when the inventory gives this run no node, or fewer than the cluster has",
                 "gpudirect.gcp.preflight : Check that the inventory describes this node",
                 "gpudirect.gcp.preflight : Stop when the nodes cannot be treated as one cluster"):
        assert task in out, out


@pytest.mark.parametrize("component", COMPONENTS)
def test_a_repair_line_on_one_node_of_a_counted_cluster_runs_its_phase_there_after_preflight(tmp_path, component):
    tag = REPAIR_TAGS[component]
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    hosts = {"n0": node(), "n1": node(), "n2": node("a3-high")}
    rc, out = _run(tmp_path, str(tmp_path / "play.yml"), hosts, _repair_options(component),
                   {"preflight_expected_nodes": 3})
    assert rc == 0, out
    lines = [line for line in out.splitlines() if "node count not checked" in line]
    assert len(lines) == 1 and "this run is limited to 1 of 3 node(s) (--limit n0)" in lines[0], out
    assert "TASK [gpudirect.gcp.preflight : Check that the inventory describes this node]" in out
    assert "phase %s ran on n0" % tag in out
    assert "ran on n1" not in out and "ran on n2" not in out
    assert not [t for t in set(REPAIR_TAGS.values()) if t != tag and "phase %s ran" % t in out], out
    # the checks across the nodes of the run still stop it before the phase
    rc, out = _run(tmp_path, str(tmp_path / "play.yml"), hosts, ["--limit", "n0,n2", "--tags", tag],
                   {"preflight_expected_nodes": 3})
    assert rc == 2, out
    assert "machine family (gpu_family) differs across nodes" in out
    assert "phase %s ran" % tag not in out
