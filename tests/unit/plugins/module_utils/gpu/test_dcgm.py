# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""DCGM's diagnostic: its JSON read per test and GPU; a failed test is a finding with the repair its error
severity asks for; DCGM that cannot run is a warning, never a GPU fault; no dcgmi, no check.

The reports are built to the fields dcgmi diag -j prints (and cluster-health-scanner reads)."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import dcgm


def report(results, key="DCGM Diagnostic"):
    return json.dumps({"version": "3.3.9", "Driver Version Detected": "570.172.08", "GPU Device IDs": ["2330"] * 8,
                       key: {"test_categories": [{"category": "Deployment", "tests": [
                           {"name": "Denylist", "results": [{"status": "Pass"}]}]},
                           {"category": "Hardware", "tests": [{"name": "GPU Memory", "results": results}]}]}})


def run_with(rc, out, err=""):
    calls = []

    def run(argv):
        calls.append(argv)
        return rc, out, err
    return run, calls


def which(name):
    return "/usr/bin/" + name


def check(rc, out, err="", labels=None, level=1):
    run, calls = run_with(rc, out, err)
    ev = dcgm.gather(run, which, level=level, timeout_s=90)
    return calls, dcgm.judge(ev, labels)


def test_a_clean_report_is_no_finding_and_the_run_is_bounded():
    calls, found = check(0, report([{"status": "Pass", "gpu_id": str(i)} for i in range(8)]))
    assert found == []
    assert calls == [["/usr/bin/timeout", "--kill-after=10", "90", "/usr/bin/dcgmi", "diag", "-r", "1", "-j"]]


@pytest.mark.parametrize("severity, rung, action", [
    (6, "reset_gpu", ["nvidia-smi", "--gpu-reset", "-i", "3"]), (2, "report_host", None),
    (5, "rerun", None), (4, "reboot", ["reboot"]), (None, "reboot", ["reboot"])])
def test_a_failed_test_is_a_finding_on_its_gpu_with_the_rung_its_severity_asks(severity, rung, action):
    warning = {"warning": "Found 1 uncorrectable memory error(s) on GPU 3", "error_id": 95}
    if severity is not None:
        warning.update(error_severity=severity, error_category=2)
    _calls, found = check(226, report([{"status": "Pass", "gpu_id": "0"},
                                       {"status": "Fail", "gpu_id": "3", "warnings": [warning]}]),
                          labels={"3": "GPU 3 (0000:0b:00)"})
    assert found == [{"component": "gpu", "subject": "GPU 3 (0000:0b:00)", "severity": "fail",
                      "cause": "DCGM Hardware GPU Memory failed: Found 1 uncorrectable memory error(s) on GPU 3",
                      "rung": rung, "action": action, "phase": None}]


def test_the_older_key_and_a_warning_result_are_read():
    _calls, found = check(0, report([{"status": "Warn", "gpu_id": "1", "info": ["slow copy", "retry"]}],
                                    key="DCGM GPU Diagnostic"))
    assert [(f["subject"], f["severity"], f["cause"]) for f in found] == [
        ("GPU 1", "warn", "DCGM Hardware GPU Memory warns: slow copy; retry")]


@pytest.mark.parametrize("rc, out, err, why", [
    (124, "", "", "dcgmi diag -r 1 did not finish in 90s"),
    (255, "", "Error: unable to establish a connection to the specified host: localhost\n"
     "Error: Unable to connect to host engine. Host engine connection invalid/disconnected. (DCGM_ST_CONNECTION_NOT_VALID)",
     "dcgmi diag -r 1 exited 255: DCGM_ST_CONNECTION_NOT_VALID"),
    (1, "Error: Unable to complete diagnostic", "", "dcgmi diag -r 1 exited 1: Error: Unable to complete diagnostic"),
    (0, "{\"version\": \"3\"}", "", "dcgmi diag -r 1 exited 0: dcgmi's JSON has no test_categories")])
def test_dcgm_that_cannot_run_is_a_warning_never_a_gpu_fault(rc, out, err, why):
    _calls, found = check(rc, out, err)
    assert [(f["subject"], f["severity"], f["cause"]) for f in found] == [("DCGM", "warn", "could not run: " + why)]


def test_no_dcgmi_or_level_0_is_no_check():
    run, calls = run_with(0, "")
    assert dcgm.gather(run, lambda name: None) is None
    assert dcgm.gather(run, which, level=0) is None
    assert calls == [] and dcgm.judge(None) == []
