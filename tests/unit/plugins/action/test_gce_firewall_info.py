# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gce_firewall_info run by real ansible-playbook against the Compute API emulator over HTTP."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import pytest
import yaml

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_hosts

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))

import compute_fleet as fx  # noqa: E402
import compute_harness as harness  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _playbook_result  # noqa: E402

pytestmark = pytest.mark.emulator
TOKEN = "firewall-test-token-not-a-secret"
PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Read the rules
      gpudirect.gcp.gce_firewall_info:
        hosts: "{{ groups['gpu_nodes'] }}"
        family: a3-mega
      register: out
    - name: Show
      ansible.builtin.debug:
        msg: "RESULT={{ out | to_json }}"
"""
VMS = [fx.gpu_instance("mega-%d" % i, "a3-mega", prefix="mega", index=i) for i in range(2)]
NETS = fx.gpu_networks("mega", "a3-mega")


def open_rules(skip_icmp_on=None):
    rules = []
    for net in NETS:
        allowed = [{"IPProtocol": "tcp"}] + ([] if net == skip_icmp_on else [{"IPProtocol": "icmp"}])
        rules.append({"name": "%s-internal" % net, "network": net, "sourceRanges": ["10.0.0.0/8"],
                      "allowed": allowed})
    return rules


def play(tmp_path, rules, faults=None):
    fleet = {"projects": {"proj-a": {"instances": VMS, "firewalls": rules}}, "faults": faults or {}}
    hosts = dict((vm["name"], gce_hosts.inventory_host(vm, "proj-a", {})[0]) for vm in VMS)
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(
        {"all": {"hosts": {"localhost": {"ansible_connection": "local",
                                         "ansible_python_interpreter": sys.executable}},
                 "children": {"gpu_nodes": {"hosts": hosts}}}}))
    (tmp_path / "play.yml").write_text(PLAY)
    with harness.ThreadEmulator(fleet) as emu:
        return _playbook_result.run(
            ["-i", tmp_path / "inventory.yml", tmp_path / "play.yml"],
            dict(GCP_COMPUTE_API_ENDPOINT=emu.url, GCP_AUTH_KIND="accesstoken", GCP_ACCESS_TOKEN=TOKEN,
                 ANSIBLE_INVENTORY_ENABLED="ansible.builtin.yaml"))


def test_open_rules_give_no_problem(tmp_path):
    rc, out, result = play(tmp_path, open_rules())
    assert rc == 0, out
    assert result["problems"] == [] and result["rules"] == len(NETS) and result["could_not_check"] is None
    assert result["changed"] is False and TOKEN not in out


def test_a_gpu_vpc_without_icmp_is_exactly_one_line(tmp_path):
    rc, out, result = play(tmp_path, open_rules(skip_icmp_on=NETS[3]))
    assert rc == 0, out
    assert len(result["problems"]) == 1, result
    assert result["problems"][0].startswith("firewall of network %s: ICMP from the nodes' addresses" % NETS[3])


def test_rules_that_cannot_be_read_are_said_not_reported(tmp_path):
    rc, out, result = play(tmp_path, open_rules(), faults={"unauthorized": True})
    assert rc == 0, out
    assert result["problems"] == []
    assert "cannot read the firewall rules" in result["could_not_check"] and "401" in result["could_not_check"]
    assert TOKEN not in out
