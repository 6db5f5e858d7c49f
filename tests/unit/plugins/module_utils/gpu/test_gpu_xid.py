# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Xid lines from real kernel logs (tests/fixtures/gpu/public/SOURCES.md) and the catalogue's reading."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
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
    # every line is read, each into the one fault it reports
    assert sum(e["lines"] for e in found) == len(lines) and len(found) >= 30
    numbers = [int(re.search(r"\): (\d+)", line).group(1)) for line in lines]
    assert [e["xid"] for e in found for _line in range(e["lines"])] == numbers
    for event in found:
        assert re.match(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}$", event["pci_bus_id"]), event


def test_pid_name_and_message_are_split():
    line = ("[Mon Mar  6 21:37:31 2023] NVRM: Xid (PCI:0000:61:00): 119, pid=905052, name=python, "
            "Timeout waiting for RPC from GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801702 0x4).")
    assert xid.events(line) == [{"pci_bus_id": "0000:61:00", "xid": 119, "pid": 905052,
                                 "message": "Timeout waiting for RPC from GSP! Expected function 76 (GSP_RM_CONTROL) "
                                            "(0x20801702 0x4).", "lines": 1,
                                 "time": float(calendar.timegm((2023, 3, 6, 21, 37, 31, 0, 0, 0)))}]
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


def lines_of(text, *needles):
    return "\n".join(line for line in text.splitlines() if any(n in line for n in needles)) + "\n"


def test_an_sm_exception_dump_is_one_fault_per_gpu():
    text = read("public", "xid-multiline-kernel-log.txt")
    found = xid.events(text)
    assert [(e["pci_bus_id"], e["xid"], e["lines"]) for e in found] == [("0000:41:00", 13, 8), ("0000:05:00", 13, 9)]
    assert found[0]["time"] == 82659.755847
    # the public log's triplet (lines 6-8) is one fault, then its Xid 109 another
    public = xid.events(lines_of(read("public", "xid-kernel-log.txt"), "PCI:0000:cb:00"))
    assert [(e["xid"], e["lines"]) for e in public] == [(13, 3), (109, 1)]


def test_an_xid_79_and_its_fallen_off_lines_are_one_event():
    # journalctl: "GPU at PCI:...", the Xid 79 line, then the driver's own "GPU ... has fallen off the bus"
    text = lines_of(read("public", "xid-kernel-log.txt"), "PCI:0000:2b:00", "GPU 0000:2b:00")
    assert len(text.splitlines()) == 3
    assert [e["xid"] for e in xid.events(text)] == [79]
    assert xid.fallen_off(text) == []
    hgx = read("public", "sxid-kernel-log.txt")
    assert [e["xid"] for e in xid.events(hgx)] == [79] and xid.fallen_off(hgx) == []
    # a GPU gone without its Xid line is still named
    assert xid.fallen_off(text + "[ 5.0] NVRM: GPU 0000:04:00.0: GPU has fallen off the bus.\n") == ["0000:04:00"]


def test_separate_faults_still_count_separately():
    public = read("public", "xid-kernel-log.txt")
    # five GSP timeouts 45 s apart (dmesg -T)
    assert [e["lines"] for e in xid.events(lines_of(public, "PCI:0000:61:00): 119"))] == [1, 1, 1, 1, 1]
    # three channel cleanups seconds apart (dmesg)
    assert [e["lines"] for e in xid.events(lines_of(public, "PCI:0000:0a:00): 45"))] == [1, 1, 1]
    # the same SM dump twice, a minute apart, is two faults
    dump = read("public", "xid-multiline-kernel-log.txt")
    later = "\n".join(line.replace("[139600.", "[139660.") for line in lines_of(dump, "[139600.").splitlines())
    assert [e["lines"] for e in xid.events(lines_of(dump, "[139600.") + later)] == [9, 9]
    # a line repeated word for word, with no time to tell, is a second report, never a detail of the first
    line = "NVRM: Xid (PCI:0000:04:00): 13, pid=7, name=python, Graphics SM Warp Exception\n"
    assert len(xid.events(line * 2)) == 2
    # another Xid of the same GPU in between ends the fault; single-line Xids never fold
    assert [e["xid"] for e in xid.events(
        "NVRM: Xid (PCI:0008:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)\n"
        "NVRM: Xid (PCI:0008:01:00): 154, GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)\n"
    )] == [154, 154]


def test_an_sxid_and_its_continuation_lines_are_one_event():
    found = xid.sxid_events(read("public", "sxid-kernel-log.txt"))
    per_switch = {}
    for event in found:
        per_switch[event["switch"]] = per_switch.get(event["switch"], 0) + 1
    # nvswitch0: Link 63 (+ Data) and Link 62 (+ Severity); nvswitch2: a continuation whose first line is not in
    # the log (kept, never dropped) and Link 37 (+ Severity)
    assert per_switch == {"nvidia-nvswitch1": 1, "nvidia-nvswitch0": 2, "nvidia-nvswitch2": 2}
    assert [e["lines"] for e in found if e["switch"] == "nvidia-nvswitch0"] == [2, 2]
