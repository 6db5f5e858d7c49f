# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the tools' output is odd: what could not be read is said so, and is never a GPU fault.

Each case starts from output the tools really print: the real H100 and RTX A5000 captures
(tests/fixtures/gpu), the public fabric, Xid and SXid lines (tests/fixtures/gpu/public), and
dcgmi's documented JSON fields."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import dcgm, health, nvidia_smi, xid

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "fixtures", "gpu")
A3 = health.expected_for(families.FAMILIES["a3-mega"]["gpu"])
A4X = health.expected_for(families.FAMILIES["a4x"]["gpu"])


def read(*parts):
    with open(os.path.join(FIXTURES, *parts)) as fh:
        return fh.read()


RTX = read("public", "rtx-a5000-x2-590.44.01-event-reasons-fabric-v13.xml")
RTX_BUSES = [nvidia_smi.bus_key(g["pci_bus_id"]) for g in nvidia_smi.parse(RTX)]
EXPECT_2 = dict(A3, count=2, smi_name=None, nvlinks=None, fabric_manager=False)


def cut_in_second_gpu(text):
    second = text.index("<gpu ", text.index("<gpu ") + 1)
    return text[:second + 400]


def ev_of(smi_text, kernel_log=""):
    """What health.gather() makes of one nvidia-smi -q -x output on a node with the capture's GPUs."""
    answers = {("-q", "-x"): (0, smi_text, ""), ("nvlink", "-s"): (0, "", "")}
    ev = health.gather(lambda argv: answers.get(tuple(argv[1:]), (0, kernel_log, "")),
                       lambda name: "/usr/bin/" + name, sys_dir="/nonexistent")
    ev.update(driver="590.44.01", pci=list(RTX_BUSES), pci_error=None)
    return ev


def test_a_cut_capture_keeps_the_gpus_it_holds_and_says_where_it_stops():
    with pytest.raises(nvidia_smi.ParseError) as err:
        nvidia_smi.parse(cut_in_second_gpu(RTX))
    assert [g["index"] for g in err.value.gpus] == [0]
    assert err.value.gpus[0]["pci_bus_id"] == nvidia_smi.parse(RTX)[0]["pci_bus_id"]
    assert "cut" in str(err.value) and "after 1 GPU(s)" in str(err.value)


@pytest.mark.parametrize("output", ["", "   \n", "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n\t<timestamp>",
                                    cut_in_second_gpu(RTX), "NVIDIA-SMI has failed because"])
def test_output_that_cannot_be_read_is_a_could_not_check_warning_never_a_reboot(output):
    found = health.judge(EXPECT_2, ev_of(output))
    assert [f for f in found if f["severity"] == "fail"] == []
    assert [(f["subject"], f["severity"], f["rung"]) for f in found] == [("nvidia-smi", "warn", "rerun")]
    assert found[0]["cause"].startswith("could not read: nvidia-smi -q -x")


def test_a_cut_capture_still_judges_the_gpus_it_holds():
    bad = RTX.replace("<persistence_mode>Enabled</persistence_mode>", "<persistence_mode>Disabled</persistence_mode>", 1)
    found = health.judge(EXPECT_2, ev_of(cut_in_second_gpu(bad)))
    assert sorted((f["subject"].split(" (")[0], f["severity"]) for f in found) == [
        ("GPU 0", "warn"), ("nvidia-smi", "warn")]


def unhealthy_fabric(gpu_text, **values):
    """The RTX capture's v13 <fabric> block holding the values a public MNNVL node printed
    (fabric-nvidia-smi-q-text-excerpts.txt: Completed, Success, clique 2, health Unhealthy, bandwidth Full)."""
    fields = {"state": "Completed", "status": "Success", "cliqueId": "2",
              "clusterUuid": "dc6e40c4-d722-4357-9ba6-5291dd461278", "summary": "Unhealthy", "bandwidth": "Full",
              "route_recovery_in_progress": "False", "route_unhealthy": "False", "access_timeout_recovery": "False",
              "incorrect_configuration": "None"}
    fields.update(values)
    for tag, value in fields.items():
        gpu_text = gpu_text.replace("<%s>N/A</%s>" % (tag, tag), "<%s>%s</%s>" % (tag, value, tag))
    return gpu_text


def test_the_fabric_health_summary_and_bandwidth_are_read_and_judged():
    gpus = nvidia_smi.parse(unhealthy_fabric(RTX))
    assert gpus[0]["fabric_health"] == {"summary": "Unhealthy", "bandwidth": "Full", "route_recovery_in_progress": False,
                                        "route_unhealthy": False, "access_timeout_recovery": False,
                                        "incorrect_configuration": None}
    a4x_2 = dict(A4X, count=2, smi_name=None, nvlinks=None, fabric_manager=False)
    found = health.judge(a4x_2, ev_of(unhealthy_fabric(RTX)))
    assert [(f["subject"].split(" (")[0], f["severity"], f["rung"]) for f in found] == [
        ("GPU 0", "fail", "reboot"), ("GPU 1", "fail", "reboot")]
    assert "fabric health Unhealthy" in found[0]["cause"]
    degraded = health.judge(a4x_2, ev_of(unhealthy_fabric(RTX, summary="Healthy", bandwidth="Degraded")))
    assert len(degraded) == 2 and "bandwidth Degraded" in degraded[0]["cause"]
    healthy = health.judge(a4x_2, ev_of(unhealthy_fabric(RTX, summary="Healthy")))
    assert healthy == []
    recovering = health.judge(a4x_2, ev_of(unhealthy_fabric(RTX, summary="Healthy",
                                                            route_recovery_in_progress="True")))
    assert [(f["severity"], f["rung"]) for f in recovering] == [("warn", "rerun")] * 2


def test_all_links_inactive_is_an_nvlink_finding_on_that_gpu():
    # the line NVML prints under a GPU whose every link is down (nvidia-smi nvlink -s)
    text = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1a2a9fc2-8691-e53c-321d-2463973ae867)\n"
            "\t NVML: Unable to retrieve NVLink information as all links are inActive\n"
            "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-2b2a9fc2-8691-e53c-321d-2463973ae867)\n"
            + "".join("\t Link %d: 26.562 GB/s\n" % n for n in range(18)))
    status = nvidia_smi.parse_nvlink_status(text)
    assert status[0] == {"links": 0, "inactive": [], "all_inactive": True}
    assert status[1]["links"] == 18 and not status[1].get("all_inactive")
    ev = ev_of(RTX)
    ev["nvlink"] = status
    found = health.judge(dict(EXPECT_2, nvlinks=18), ev)
    assert [(f["subject"].split(" (")[0], f["severity"]) for f in found] == [("GPU 0", "fail")]
    assert "all links inactive" in found[0]["cause"]


@pytest.mark.parametrize("line", [
    # the forms with no PCI domain that older drivers and systems print
    "[12345.678] NVRM: Xid (PCI:8b:00): 79, Ch 00000001",
    "NVRM: Xid (8b:00): 79, GPU has fallen off the bus.",
    "NVRM: Xid (0000:8b:00): 79, GPU has fallen off the bus.",
    "NVRM: Xid (PCI:00000000:8b:00.0): 79, GPU has fallen off the bus."])
def test_xid_bus_ids_with_or_without_the_domain_name_the_same_gpu(line):
    assert [e["pci_bus_id"] for e in xid.events(line)] == ["0000:8b:00"]


SXID_LOG = read("public", "sxid-kernel-log.txt")


def test_nvswitch_sxid_lines_are_read_one_per_switch_and_sxid():
    found = xid.sxid_events(SXID_LOG)
    keys = [(e["switch"], e["pci_bus_id"], e["sxid"], e["fatal"]) for e in found]
    assert ("nvidia-nvswitch1", "0000:06:00", 20034, True) in keys
    assert ("nvidia-nvswitch0", "0000:05:00", 20034, True) in keys
    # continuation lines (Severity, Data) belong to the same event and do not make new ones
    groups = xid.grouped_sxids(found)
    assert [(bus, number) for (bus, number), _lines in groups] == [
        ("0000:06:00", 20034), ("0000:05:00", 20034), ("0000:07:00", 20034)]
    assert [e["links"] for e in found if e["pci_bus_id"] == "0000:05:00" and e["links"]] == [[63], [62]]


def test_a_fatal_sxid_fails_the_node_and_a_nonfatal_one_warns():
    ev = ev_of(RTX, kernel_log=SXID_LOG + "\nnvidia-nvswitch3: SXid (PCI:0000:08:00.0): 12028, Non-fatal, "
                                          "Link 32 egress non-posted PRIV error (First)\n")
    found = [f for f in health.judge(EXPECT_2, ev) if f["subject"].startswith("NVSwitch")]
    assert [(f["subject"], f["severity"], f["rung"]) for f in found] == [
        ("NVSwitch 0000:06:00 (nvidia-nvswitch1)", "fail", "reboot"),
        ("NVSwitch 0000:05:00 (nvidia-nvswitch0)", "fail", "reboot"),
        ("NVSwitch 0000:07:00 (nvidia-nvswitch2)", "fail", "reboot"),
        ("NVSwitch 0000:08:00 (nvidia-nvswitch3)", "warn", "rerun")]
    assert "SXid 20034" in found[0]["cause"] and "link(s) 48" in found[0]["cause"]


def dcgm_report(statuses):
    return json.dumps({"version": "4.2.3", "Driver Version Detected": "570.172.08", "DCGM Diagnostic": {
        "test_categories": [{"category": "Hardware", "tests": [
            {"name": name, "results": [{"status": status, "gpu_id": "0"}]} for name, status in statuses]}]}})


@pytest.mark.parametrize("statuses", [[("GPU Memory", "Skip"), ("Diagnostic", "Skip")],
                                      [("GPU Memory", "Not Run")]])
def test_a_dcgm_run_where_no_test_ran_is_not_judged_a_pass(statuses):
    ev = dcgm.gather(lambda argv: (0, dcgm_report(statuses), ""), lambda name: "/usr/bin/" + name, level=2)
    found = dcgm.judge(ev)
    assert [(f["subject"], f["severity"], f["rung"]) for f in found] == [("DCGM", "warn", "rerun")]
    assert found[0]["cause"].startswith("could not check: dcgmi diag -r 2 ran no test")
    ran = dcgm.gather(lambda argv: (0, dcgm_report(statuses + [("PCIe", "Pass")]), ""),
                      lambda name: "/usr/bin/" + name, level=2)
    assert dcgm.judge(ran) == []
