# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU settings (persistence, ECC, MIG, compute mode, application clocks) judged against what is expected.

A setting the driver reports as not applicable to the GPU (N/A, Not Supported, with or without brackets, or
"Requested functionality has been deprecated" for application clocks on R590) is no drift; only a value
that differs is. The captures are real (tests/fixtures/gpu/*/SOURCE*.md)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import health, nvidia_smi

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "fixtures", "gpu")
H100 = os.path.join(FIXTURES, "h100-580.159.04", "nvidia-smi-q-x.xml")
A10G = os.path.join(FIXTURES, "public", "a10g-515.105.01-throttle-reasons-v11.xml")
A100_MIG = os.path.join(FIXTURES, "public", "a100-sxm4-80gb-535.54.03-event-reasons-mig-v12.xml")
RTX = os.path.join(FIXTURES, "public", "rtx-a5000-x2-590.44.01-event-reasons-fabric-v13.xml")
NOT_APPLICABLE = os.path.join(FIXTURES, "settings-not-applicable", "nvidia-smi-q-x.xml")


def read(path):
    with open(path) as fh:
        return fh.read()


def settings_findings(path, settings):
    gpus = nvidia_smi.parse(read(path))
    expected = dict(health.expected_for({"settings": settings}))
    ev = {"driver": "580.159.04", "smi": gpus, "pci": [nvidia_smi.bus_key(g["pci_bus_id"]) for g in gpus],
          "nvlink": {}, "kernel_log": ""}
    found = [f for f in health.judge(expected, ev) if "mode" in f["cause"] or "clock" in f["cause"]
             or "setting" in f["cause"]]
    # persistence is judged on every GPU; leave it out unless the test names it
    return [f for f in found if "persistence_mode" in settings or "persistence" not in f["cause"]]


def test_the_settings_of_a_real_capture_are_read():
    gpu = nvidia_smi.parse(read(H100))[0]
    assert (gpu["persistence_mode"], gpu["ecc_mode"], gpu["ecc_mode_pending"]) == (True, True, True)
    assert (gpu["mig_mode"], gpu["mig_mode_pending"], gpu["compute_mode"]) == (False, False, "Default")
    assert (gpu["applications_clock_graphics_mhz"], gpu["applications_clock_memory_mhz"]) == (1980, 2619)
    assert gpu["not_applicable"] == []


def test_settings_a_gpu_does_not_have_are_named_not_applicable():
    a10g = nvidia_smi.parse(read(A10G))[0]
    assert a10g["mig_mode"] is None and a10g["not_applicable"] == ["mig_mode", "mig_mode_pending"]
    rtx = nvidia_smi.parse(read(RTX))[0]
    # R590 says application clocks are gone rather than N/A
    assert rtx["applications_clock_graphics_mhz"] is None
    assert "applications_clock_graphics_mhz" in rtx["not_applicable"] and "mig_mode" in rtx["not_applicable"]


def test_every_spelling_of_not_applicable_is_no_drift():
    gpus = nvidia_smi.parse(read(NOT_APPLICABLE))
    assert [sorted(g["not_applicable"]) for g in gpus] == [
        ["compute_mode", "ecc_mode", "ecc_mode_pending", "mig_mode", "mig_mode_pending", "persistence_mode"],
        ["compute_mode", "ecc_mode", "ecc_mode_pending", "mig_mode", "mig_mode_pending", "persistence_mode"]]
    assert settings_findings(NOT_APPLICABLE, {"persistence_mode": True, "ecc_mode": True, "mig_mode": False,
                                              "compute_mode": "Default"}) == []


def test_mig_not_applicable_on_a_gpu_without_mig_is_no_drift():
    assert settings_findings(A10G, {"mig_mode": False, "ecc_mode": True, "compute_mode": "Default"}) == []


@pytest.mark.parametrize("path, settings, cause", [
    (A100_MIG, {"mig_mode": False}, "MIG mode is enabled; expected disabled"),
    (RTX, {"ecc_mode": True}, "ECC mode is disabled; expected enabled"),
    (H100, {"compute_mode": "Exclusive_Process"}, "compute mode is Default; expected Exclusive_Process"),
    (H100, {"applications_clock_graphics_mhz": 1755}, "application graphics clock is 1980 MHz; expected 1755 MHz"),
])
def test_a_setting_that_really_differs_is_drift(path, settings, cause):
    found = settings_findings(path, settings)
    assert found and all(f["severity"] == "warn" for f in found)
    assert all(cause in f["cause"] for f in found), [f["cause"] for f in found]


def test_a_setting_pending_the_expected_value_says_so():
    text = read(RTX).replace("<pending_ecc>Disabled</pending_ecc>", "<pending_ecc>Enabled</pending_ecc>", 1)
    gpus = nvidia_smi.parse(text)
    expected = health.expected_for({"settings": {"ecc_mode": True}})
    found = [f for f in health.judge(expected, {"driver": "590.44.01", "smi": gpus, "nvlink": {}, "kernel_log": ""})
             if "ECC" in f["cause"]]
    assert "pending enabled at the next GPU reset" in found[0]["cause"] and found[0]["rung"] == "reset_gpu"
    assert "pending" not in found[1]["cause"]


def test_persistence_off_is_still_drift_and_persistence_not_applicable_is_not():
    text = read(H100).replace("<persistence_mode>Enabled</persistence_mode>",
                              "<persistence_mode>Disabled</persistence_mode>")
    gpus = nvidia_smi.parse(text)
    found = health.judge(health.expected_for({}), {"driver": "580", "smi": gpus, "nvlink": {}, "kernel_log": ""})
    assert [f["cause"] for f in found if "persistence" in f["cause"]] == [
        "persistence mode is off: every job start pays the driver's initialisation"]
    text = read(H100).replace("<persistence_mode>Enabled</persistence_mode>",
                              "<persistence_mode>[Not Supported]</persistence_mode>")
    found = health.judge(health.expected_for({}), {"driver": "580", "smi": nvidia_smi.parse(text), "nvlink": {},
                                                   "kernel_log": ""})
    assert not [f for f in found if "persistence" in f["cause"]]


def test_an_expected_setting_the_collection_does_not_know_is_one_line_not_a_traceback():
    found = settings_findings(H100, {"fan_mode": "auto", "ecc_mode": True})
    assert [f["cause"] for f in found] == [
        "the expected GPU setting fan_mode is not one this collection reads; ignored"]
