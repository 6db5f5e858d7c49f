# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Xid lines from real kernel logs (tests/fixtures/gpu/public/SOURCES.md) and the catalogue's reading."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import xid
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu.xid_catalogue import XIDS
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings.finding import RUNGS, rung_order

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "fixtures", "gpu")


def read(*parts):
    with open(os.path.join(FIXTURES, *parts)) as fh:
        return fh.read()


def test_every_xid_line_of_the_real_logs_is_found():
    text = read("public", "xid-kernel-log.txt")
    lines = [line for line in text.splitlines() if "NVRM: Xid" in line and not line.startswith("#")]
    found = xid.events(text)
    assert len(found) == len(lines) and len(found) >= 40
    numbers = [int(re.search(r"\): (\d+)", line).group(1)) for line in lines]
    assert [e["xid"] for e in found] == numbers
    for event in found:
        assert re.match(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}$", event["pci_bus_id"]), event


def test_pid_name_and_message_are_split():
    line = ("[Mon Mar  6 21:37:31 2023] NVRM: Xid (PCI:0000:61:00): 119, pid=905052, name=python, "
            "Timeout waiting for RPC from GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801702 0x4).")
    assert xid.events(line) == [{"pci_bus_id": "0000:61:00", "xid": 119, "pid": 905052,
                                 "message": "Timeout waiting for RPC from GSP! Expected function 76 (GSP_RM_CONTROL) "
                                            "(0x20801702 0x4)."}]
    unknown = "NVRM: Xid (PCI:0000:9b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
    assert xid.events(unknown)[0]["pid"] is None
    assert xid.events(unknown)[0]["message"] == "GPU has fallen off the bus."


def test_a_healthy_real_kernel_log_has_no_xid():
    text = read("h100-580.159.04", "kernel-log.txt")
    assert "NVRM" in text
    assert xid.events(text) == [] and xid.fallen_off(text) == []


def test_fallen_off_the_bus_without_an_xid_line_both_forms():
    text = read("public", "xid-kernel-log.txt")
    assert "0000:b3:00" in xid.fallen_off(text)  # the driver's three-line report
    assert xid.fallen_off("NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.") == ["0000:2b:00"]
    assert xid.fallen_off("NVRM: The NVIDIA GPU 0000:b3:00.0\nNVRM: probe routine failed") == []


def test_the_catalogue_is_complete_and_its_rungs_are_known():
    for number in (13, 31, 43, 45, 48, 63, 64, 74, 79, 92, 94, 95, 119, 154):
        assert number in XIDS, number
    for number, entry in XIDS.items():
        assert entry["severity"] in ("fail", "warn"), number
        assert entry["repair"] in RUNGS, number
        assert entry["meaning"] and "\n" not in entry["meaning"] and entry["source"], number
    assert xid.describe(79)["repair"] in ("reboot", "report_host") and xid.describe(79)["severity"] == "fail"
    assert xid.describe(13)["severity"] == "warn"


def test_an_xid_the_catalogue_lacks_is_named_never_dropped():
    info = xid.describe(9999)
    assert info["known"] is False and info["severity"] == "warn" and info["repair"] in RUNGS


def test_a_nonfatal_nvlink_xid_is_a_warning():
    fatal = xid.describe(145, "NVLink: RLW_TX (Fatal) ...")
    nonfatal = xid.describe(145, "NVLink: RLW_TX (Nonfatal) ...")
    assert nonfatal["severity"] == "warn" and nonfatal["repair"] == "rerun"
    assert fatal["severity"] == XIDS[145]["severity"]


def test_rungs_are_ordered_least_disruptive_first():
    assert [rung_order(r) for r in RUNGS] == list(range(len(RUNGS)))
    assert rung_order("nonsense") == len(RUNGS)
