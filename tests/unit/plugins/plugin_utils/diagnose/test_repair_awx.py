# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Under AWX a repair names what an operator launches there: the repair job template with its limit,
tags and extra variables, or an ad hoc command on the job's inventory. Google's host repair stays a
gcloud line (nothing in AWX runs it)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.plugins.filter.diagnose import FilterModule
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import Repairs

AWX = {"template": "GPU cluster - repair", "inventory": "GPU cluster"}
REPAIRS = Repairs(args=["-i", "/runner/inventory/hosts"], pairs={"n0": {"plugin": "v1.0.15", "rxdm": "v1.0.21"}},
                  zones={"n0": "us-central1-a"}, awx=AWX)


def test_a_role_repair_names_the_template_limit_and_tags():
    assert REPAIRS.role("n1", "nic") == 'AWX job template "GPU cluster - repair": limit n1, tags gpu_network'


def test_the_nodes_pair_rides_as_extra_variables():
    assert REPAIRS.role("n0", "rxdm") == ('AWX job template "GPU cluster - repair": limit n0, tags rxdm, extra variables '
                                          '{"nccl_plugin_version": "v1.0.15", "rxdm_version": "v1.0.21"}')


def test_a_node_command_is_an_ad_hoc_command_on_the_jobs_inventory():
    assert REPAIRS.node_command("n0", "ansible.builtin.command", "nvidia-smi -r -i 0") == (
        'AWX ad hoc command on inventory "GPU cluster": limit n0, module ansible.builtin.command, '
        'arguments "nvidia-smi -r -i 0", privilege escalation on')
    assert "/runner" not in REPAIRS.node_command("n0", "ansible.builtin.reboot")


def test_googles_host_repair_stays_a_gcloud_line():
    assert REPAIRS.report_host("n0", "xid 79").startswith(
        "gcloud compute instances report-host-as-faulty n0 --zone=us-central1-a")


def test_outside_awx_the_lines_are_commands():
    for awx in (None, {}, {"template": "", "inventory": "x"}):
        repairs = Repairs(args=["-i", "inv.yml"], awx=awx)
        assert repairs.role("n1", "nic") == "ansible-playbook gpudirect.gcp.site -i inv.yml --limit n1 --tags gpu_network"


def test_the_diagnosis_spells_repairs_for_awx_when_asked():
    findings = FilterModule().filters()["_diagnose_node_findings"]
    evidence = {"n0": {"reach": {"ok": True}, "family": "a3-mega", "zone": "z",
                       "versions": {"plugin": "v1.0.15", "rxdm": "v1.0.21"},
                       "plugin": {"error": "no such file", "record": {"tag": "v1.0.15"}}}}
    lines = [f["repair"] for f in findings(evidence, ["n0"], repair_awx=AWX) if f["repair"]]
    assert lines and all(line.startswith('AWX job template "GPU cluster - repair": limit n0') for line in lines)


def test_a_malformed_awx_setting_is_one_line():
    from ansible.errors import AnsibleFilterError
    findings = FilterModule().filters()["_diagnose_node_findings"]
    with pytest.raises(AnsibleFilterError, match="repair_awx must be a mapping"):
        findings({}, ["n0"], repair_awx="GPU cluster - repair")
