# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The repair ladder a remediation climbs, from a node's failing findings."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import ladder

REMAP = {"component": "gpu", "subject": "GPU 1 (0000:05:00)", "severity": "fail", "cause": "a row remapping is pending",
         "rung": "reset_gpu", "action": ["nvidia-smi", "--gpu-reset", "-i", "1"]}
RXDM = {"component": "rxdm", "subject": "receive-datapath-manager", "severity": "fail", "cause": "not running"}
ALL = ["rerun", "reset_gpu", "reboot", "report_host"]


def test_a_gpu_fault_starts_at_its_reset_and_climbs_to_what_is_allowed():
    steps = ladder.plan([REMAP], None, ["rerun", "reset_gpu", "reboot"])
    assert [s["rung"] for s in steps] == ["reset_gpu", "reboot"]
    assert steps[0]["commands"] == [["nvidia-smi", "--gpu-reset", "-i", "1"]]


def test_a_configuration_fault_starts_by_re_applying_its_phase():
    steps = ladder.plan([RXDM, REMAP], None, ALL)
    assert [(s["rung"], s["phases"]) for s in steps][:2] == [("rerun", ["rxdm"]), ("reset_gpu", [])]


def test_the_guards_floor_skips_the_rungs_below_it_and_a_rung_with_nothing_to_do_is_left_out():
    assert [s["rung"] for s in ladder.plan([RXDM, REMAP], "reboot", ALL)] == ["reboot", "report_host"]
    assert [s["rung"] for s in ladder.plan([RXDM], "reset_gpu", ALL)] == ["reboot", "report_host"]
    assert ladder.plan([REMAP], "report_host", ["rerun", "reset_gpu", "reboot"]) == []
    # only a GPU reset is run from a finding's action, nothing else it might name
    odd = dict(REMAP, action=["rm", "-rf", "/"])
    assert [s["rung"] for s in ladder.plan([odd], None, ALL)] == ["reboot", "report_host"]
