# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The repair ladder a remediation climbs: only rungs that can clear a finding of its kind, a service
restarted rather than re-applied, a GPU reset with its holders stopped, maintenance never rebooted."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import health, rdma
from ansible_collections.gpudirect.gcp.plugins.module_utils.host import maintenance
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import ladder

REMAP = {"component": "gpu", "subject": "GPU 1 (0000:05:00)", "severity": "fail", "cause": "a row remapping is pending",
         "rung": "reset_gpu", "action": ["nvidia-smi", "--gpu-reset", "-i", "0000:05:00.0"]}
RXDM = {"component": "rxdm", "subject": "receive-datapath-manager", "severity": "fail", "cause": "not running"}
PROFILE = {"component": "nccl_profile", "subject": "/etc/nccl.conf", "severity": "fail", "cause": "missing"}
MAINT = {"component": "host", "subject": "maintenance", "severity": "fail", "cause": "a maintenance event is due"}
UNITS = {"rxdm": "gpudirect-rxdm.service"}
NO_REBOOT = {"remediate_allow_reboot": False}


def rungs(out):
    return [s["rung"] for s in out["steps"]]


def test_a_gpu_fault_is_reset_with_its_holders_stopped_then_rebooted():
    out = ladder.plan([REMAP], None, {"remediate_allow_report_host": False}, UNITS, ["nvidia-dcgm.service"])
    assert rungs(out) == ["reset_gpu", "reboot"]
    assert out["steps"][0]["commands"] == [REMAP["action"]] and out["steps"][0]["stop"] == ["nvidia-dcgm.service"]
    assert out["steps"][0]["says"] == "reset GPU(s) 0000:05:00.0"


def test_a_drifted_service_is_restarted_not_re_applied():
    out = ladder.plan([RXDM], None, NO_REBOOT, UNITS)
    assert [(s["rung"], s["services"]) for s in out["steps"]] == [("restart", ["gpudirect-rxdm.service"])]
    # without the unit, there is nothing to restart, and a reboot is not allowed: no rung
    assert ladder.plan([RXDM], None, NO_REBOOT, {})["steps"] == []


def test_a_setting_is_re_applied_and_never_rebooted_for():
    out = ladder.plan([PROFILE], None, {}, UNITS)
    assert [(s["rung"], s["phases"]) for s in out["steps"]] == [("rerun", ["nccl_profile"])]


def test_maintenance_is_handed_over_and_nothing_is_climbed():
    out = ladder.plan([MAINT, REMAP], None, {}, UNITS)
    assert out["steps"] == [] and out["hand_over"][0].startswith("host maintenance: Google's host maintenance")


def test_the_guards_floor_skips_the_rungs_below_it():
    assert rungs(ladder.plan([RXDM, REMAP], "reboot", {}, UNITS)) == ["reboot", "report_host"]
    assert ladder.plan([REMAP], "report_host", {"remediate_allow_report_host": False}, UNITS)["steps"] == []
    # only a GPU reset is run from a finding's action, nothing else it might name
    odd = dict(REMAP, action=["rm", "-rf", "/"])
    assert rungs(ladder.plan([odd], None, {}, UNITS)) == ["reboot", "report_host"]


def test_every_rung_has_one_row_and_its_task_file():
    assert ladder.order() == fd.RUNGS
    assert set(ladder.RUNG_PARTS) == set(fd.RUNGS)
    assert all(set(row) == set(ladder.PARTS) | {"rung"} for row in ladder.table())
    tasks = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..", "roles", "remediate", "tasks")
    assert all(os.path.exists(os.path.join(tasks, row["tasks"])) for row in ladder.table())


def test_every_step_has_every_rungs_work_key():
    out = ladder.plan([REMAP, RXDM, PROFILE], None, {}, UNITS, ["nvidia-dcgm.service"])
    assert rungs(out) == ["rerun", "restart", "reset_gpu", "reboot", "report_host"]
    assert all(set(step) == {"rung", "tasks", "says", "phases", "services", "commands", "stop"}
               for step in out["steps"])
    assert [s["says"] for s in out["steps"]] == [
        "re-apply the phase(s) nccl_profile", "restart gpudirect-rxdm.service", "reset GPU(s) 0000:05:00.0",
        "reboot the node", "report its host to Google as faulty"]
    # the work a rung takes is only its own: a reset's holders are no other rung's to stop
    assert [s["stop"] for s in out["steps"]] == [[], [], ["nvidia-dcgm.service"], [], []]


def test_a_gpu_reset_is_taken_from_a_reset_findings_action_only():
    # the same command on a finding of another kind (a reboot's) is no work of the reset rung
    other = dict(REMAP, rung="reboot")
    assert rungs(ladder.plan([other], None, {}, UNITS)) == ["reboot", "report_host"]
    assert fd.is_gpu_reset(fd.gpu_reset("0000:05:00.0")) and fd.gpu_reset(3) == REMAP["action"][:3] + ["3"]
    for action in (["nvidia-smi", "--gpu-reset", "-i"], ["nvidia-smi", "--gpu-reset", "-i", "0", "; reboot"],
                   ["nvidia-smi", "--gpu-reset", "-i", ""], "nvidia-smi --gpu-reset -i 0", None):
        assert not fd.is_gpu_reset(action), action


@pytest.mark.parametrize("change, word", [
    (lambda parts: parts["reboot"].pop("tasks"), "rung reboot in ladder.RUNG_PARTS: lacks tasks"),
    (lambda parts: parts.pop("restart"), "rung restart has no row in ladder.RUNG_PARTS"),
    (lambda parts: parts.update(replace={}), "ladder.RUNG_PARTS holds replace, which finding.RUNGS does not name"),
    (lambda parts: parts["rerun"].update(step=None), "rung rerun in ladder.RUNG_PARTS: work, step and shows"),
])
def test_a_rung_missing_a_part_is_an_error_not_a_skip(monkeypatch, change, word):
    parts = dict((name, dict(row)) for name, row in ladder.RUNG_PARTS.items())
    change(parts)
    monkeypatch.setattr(ladder, "RUNG_PARTS", parts)
    with pytest.raises(ladder.RungTableError, match=re.escape(word)):
        ladder.plan([PROFILE], None, {}, UNITS)


def _every_failing_finding():
    """Every failing finding the node check's GPU, RDMA and maintenance rules can build, from their own
    builders (one of each rung), and the parts whose findings carry no rung."""
    out = [health.finding("GPU 0", "fail", "x", rung, ["reboot"] if rung == "reboot" else None)
           for rung in fd.RUNGS]
    out += [rdma.finding("mlx5_0", "fail", "x", rung) for rung in fd.RUNGS]
    out += maintenance.judge({"event": "MIGRATE_ON_HOST_MAINTENANCE", "upcoming": None})
    out += [fd.make(component, "x", "fail", "x") for component in fd.COMPONENTS]
    return out


@pytest.mark.parametrize("item", _every_failing_finding(), ids=lambda f: "%s-%s" % (f["component"], f.get("rung")))
def test_every_finding_kind_reaches_the_planner_with_a_rung_or_a_hand_over(item):
    out = ladder.plan([item], None, {}, UNITS)
    kind = ladder.kind_of(item)
    assert set(rungs(out)) <= set(kind["rungs"])
    assert bool(out["hand_over"]) == (not kind["rungs"])
    # maintenance and Google-only faults never reach a reboot
    if kind["kind"] in ("maintenance", "google_only"):
        assert "reboot" not in rungs(out)


def test_the_rung_above_follows_the_ladders_order_and_the_top_has_none():
    names = ladder.order()
    assert [ladder.above(rung) for rung in names] == list(names[1:]) + [None]
    assert ladder.above(None) is None and ladder.above("nope") is None
