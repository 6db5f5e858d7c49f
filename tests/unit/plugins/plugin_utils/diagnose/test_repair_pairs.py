# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A repair line for the plugin or RxDM carries the pair the node has, so running it never moves the node to
another pair (a node with no pair known gets the plain line)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.filter.diagnose import FilterModule
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import Repairs

REPAIRS = Repairs(args=["-i", "inv.yml"], pairs={"n0": {"plugin": "v1.0.15", "rxdm": "v1.0.21"},
                                                 "n1": {"plugin": None, "rxdm": None}})


def test_plugin_and_rxdm_repairs_carry_the_nodes_pair():
    expected = ("ansible-playbook gpudirect.gcp.site -i inv.yml -e nccl_plugin_version=v1.0.15 -e rxdm_version=v1.0.21 "
                "--limit n0 --tags %s")
    assert REPAIRS.role("n0", "nccl_plugin") == expected % "nccl_plugin"
    assert REPAIRS.role("n0", "rxdm") == expected % "rxdm"


def test_other_repairs_and_nodes_without_a_pair_get_the_plain_line():
    assert REPAIRS.role("n0", "nic") == "ansible-playbook gpudirect.gcp.site -i inv.yml --limit n0 --tags gpu_network"
    assert REPAIRS.role("n1", "rxdm") == "ansible-playbook gpudirect.gcp.site -i inv.yml --limit n1 --tags rxdm"
    assert REPAIRS.role("n9", "nccl_plugin").endswith("-i inv.yml --limit n9 --tags nccl_plugin")


def test_a_gib_node_carries_its_plugin_only():
    repairs = Repairs(pairs={"n0": {"plugin": "v1.1.1", "rxdm": None}})
    assert repairs.role("n0", "nccl_plugin") == ("ansible-playbook gpudirect.gcp.site -e nccl_plugin_version=v1.1.1 "
                                                 "--limit n0 --tags nccl_plugin")


def test_the_diagnosis_takes_the_pair_from_each_nodes_versions():
    findings = FilterModule().filters()["_diagnose_node_findings"]
    evidence = {"n0": {"reach": {"ok": True}, "family": "a3-mega", "zone": "z",
                       "versions": {"plugin": "v1.0.15", "rxdm": "v1.0.21"},
                       "plugin": {"error": "no such file", "record": {"tag": "v1.0.15"}}}}
    out = findings(evidence, ["n0"])
    lines = [f["repair"] for f in out if f["component"] == "nccl_plugin" and f["repair"]]
    assert lines and all("-e nccl_plugin_version=v1.0.15 -e rxdm_version=v1.0.21" in line for line in lines), out
