# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU judge against the family, on a real H100 capture made into an 8-GPU node.

The node's 8 GPUs are the real capture's GPU element repeated at an A3's bus ids,
so every value the judge reads is one a real driver printed, apart from the faults
each test writes in.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import health, nvidia_smi

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "fixtures", "gpu")
BUSES = ["0000:04:00.0", "0000:05:00.0", "0000:0a:00.0", "0000:0b:00.0",
         "0000:84:00.0", "0000:85:00.0", "0000:8a:00.0", "0000:8b:00.0"]
A3 = health.expected_for(families.FAMILIES["a3-mega"]["gpu"])
A4X = health.expected_for(families.FAMILIES["a4x"]["gpu"])


def real_gpu():
    with open(os.path.join(FIXTURES, "h100-580.159.04", "nvidia-smi-q-x.xml")) as fh:
        text = fh.read()
    head, rest = text.split("\t<gpu ", 1)
    body = "\t<gpu " + rest.rsplit("</nvidia_smi_log>", 1)[0]
    return head, body


def node_xml(count=8, edit=None):
    head, body = real_gpu()
    gpus = []
    for index, bus in enumerate(BUSES[:count]):
        domain, number, rest = bus.split(":")
        gpu = body.replace("00000000:00:06.0", "0000%s:%s:%s" % (domain, number, rest))
        if edit:
            gpu = edit(index, gpu)
        gpus.append(gpu)
    return head.replace("<attached_gpus>1<", "<attached_gpus>%d<" % count) + "".join(gpus) + "</nvidia_smi_log>\n"


def nvlink(count=8, links=18, down=None):
    out = []
    for index in range(count):
        out.append("GPU %d: NVIDIA H100 80GB HBM3 (UUID: GPU-%d)" % (index, index))
        for link in range(links):
            state = "<inactive>" if down and down.get(index, 0) > links - 1 - link else "26.562 GB/s"
            out.append("\t Link %d: %s" % (link, state))
    return "\n".join(out) + "\n"


def evidence(xml=None, kernel_log="", pci=None, nv=None, fabric_manager="active"):
    return {"driver": "580.159.04", "pci": [nvidia_smi.bus_key(b) for b in BUSES] if pci is None else pci,
            "smi": nvidia_smi.parse(xml or node_xml()), "smi_missing": False, "smi_error": None,
            "nvlink": nvidia_smi.parse_nvlink_status(nv if nv is not None else nvlink()),
            "kernel_log": kernel_log, "fabric_manager": fabric_manager}


def subjects(findings, severity="fail"):
    return sorted((f["subject"], f["rung"]) for f in findings if f["severity"] == severity)


def test_a_healthy_node_has_no_finding():
    assert health.judge(A3, evidence()) == []


def test_xid_79_names_the_gpu_that_fell_off_the_bus_once():
    xml = node_xml(edit=lambda i, g: g)
    gone = xml.replace(xml[xml.index("\t<gpu id=\"00000000:8b:00.0\">"):xml.index("</nvidia_smi_log>")], "")
    log = "[ 99.1] NVRM: Xid (PCI:0000:8b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
    found = health.judge(A3, evidence(gone, log, nv=nvlink(7)))
    assert subjects(found) == [("GPU 0000:8b:00", "reboot")]
    assert "fallen off the bus" in found[0]["cause"] and "no longer sees it" in found[0]["cause"]


def test_a_gpu_on_the_bus_the_driver_lost_without_any_log_line():
    xml = node_xml(7)
    found = health.judge(A3, evidence(xml, nv=nvlink(7)))
    assert subjects(found) == [("GPU 0000:8b:00", "reboot")]


def test_a_gpu_gone_from_the_bus_is_hardware():
    xml = node_xml(7)
    found = health.judge(A3, evidence(xml, pci=[nvidia_smi.bus_key(b) for b in BUSES[:7]], nv=nvlink(7)))
    assert subjects(found) == [("GPUs", "report_host")]


def test_row_remapping_ecc_pcie_and_clocks_each_name_their_gpu_and_rung():
    def edit(index, gpu):
        if index == 1:
            gpu = gpu.replace("<remapped_row_pending>No<", "<remapped_row_pending>Yes<")
        if index == 2:
            gpu = gpu.replace("<remapped_row_failure>No<", "<remapped_row_failure>Yes<")
        if index == 3:
            gpu = gpu.replace("<current_link_width>16x<", "<current_link_width>8x<")
        if index == 4:
            gpu = gpu.replace("<clocks_event_reason_hw_slowdown>Not Active<", "<clocks_event_reason_hw_slowdown>Active<")
        if index == 5:
            gpu = re.sub(r"(<volatile>.*?<dram_uncorrectable>)0<", r"\g<1>3<", gpu, flags=re.S)
        return gpu
    found = health.judge(A3, evidence(node_xml(edit=edit)))
    assert subjects(found) == [("GPU 1 (0000:05:00)", "reset_gpu"), ("GPU 2 (0000:0a:00)", "report_host"),
                               ("GPU 3 (0000:0b:00)", "reboot"), ("GPU 4 (0000:84:00)", "report_host"),
                               ("GPU 5 (0000:85:00)", "reset_gpu")]
    reset = [f for f in found if f["subject"].startswith("GPU 1 ")][0]
    assert reset["action"] == ["nvidia-smi", "--gpu-reset", "-i", "1"]


def test_an_idle_gpu_may_train_its_link_down_but_not_one_at_full_performance():
    def slow(index, gpu):
        return gpu.replace("<current_link_gen>5<", "<current_link_gen>3<") if index == 0 else gpu
    assert subjects(health.judge(A3, evidence(node_xml(edit=slow)))) == [("GPU 0 (0000:04:00)", "reboot")]
    idle = node_xml(edit=lambda i, g: slow(i, g).replace("<performance_state>P0<", "<performance_state>P8<"))
    assert health.judge(A3, evidence(idle)) == []


def test_nvlink_links_down_and_a_stopped_fabric_manager():
    found = health.judge(A3, evidence(nv=nvlink(down={6: 2}), fabric_manager="inactive"))
    assert subjects(found) == [("GPU 6 (0000:8a:00)", "reboot"), ("nvidia-fabricmanager", "rerun")]
    nv = [f for f in found if f["subject"].startswith("GPU 6")][0]
    assert "16, 17 inactive" in nv["cause"]
    fm = [f for f in found if f["subject"] == "nvidia-fabricmanager"][0]
    assert fm["action"] == ["systemctl", "restart", "nvidia-fabricmanager"]


def test_a_state_backed_xid_is_history_once_the_state_is_clear():
    log = "NVRM: Xid (PCI:0000:05:00): 63, pid=1, name=python, Row Remapper: New row marked for remapping\n"
    pending = node_xml(edit=lambda i, g: g.replace("<remapped_row_pending>No<", "<remapped_row_pending>Yes<")
                       if i == 1 else g)
    assert subjects(health.judge(A3, evidence(pending, log))) == [("GPU 1 (0000:05:00)", "reset_gpu")]
    after_reset = health.judge(A3, evidence(node_xml(), log))
    assert subjects(after_reset) == [] and subjects(after_reset, "warn") == [("GPU 1 (0000:05:00)", "rerun")]


def test_unknown_and_application_xids_warn():
    log = ("NVRM: Xid (PCI:0000:04:00): 13, pid=7, name=python, Graphics SM Warp Exception\n"
           "NVRM: Xid (PCI:0000:04:00): 13, pid=7, name=python, Graphics SM Warp Exception\n"
           "NVRM: Xid (PCI:0000:04:00): 9999, pid=7, name=python, something new\n")
    found = health.judge(A3, evidence(kernel_log=log))
    assert subjects(found) == []
    causes = [f["cause"] for f in found]
    assert any(c.startswith("Xid 13 (") and " x2 " in c for c in causes)
    assert any("unknown Xid" in c and "9999" in c for c in causes)


def test_a4x_fabric_state_must_be_completed_success_with_ids():
    def bad(index, gpu):
        gpu = gpu.replace("<state>N/A</state>", "<state>Completed</state>")
        gpu = gpu.replace("<status>N/A</status>", "<status>Success</status>")
        gpu = gpu.replace("<cliqueId>N/A<", "<cliqueId>%s<" % ("0" if index == 2 else "32766"))
        return gpu.replace("<clusterUuid>N/A<", "<clusterUuid>9a2b3c4d-0000-4000-8000-00000000abcd<")
    xml = node_xml(4, edit=bad).replace("H100 80GB HBM3", "GB200")
    ev = evidence(xml, pci=[nvidia_smi.bus_key(b) for b in BUSES[:4]], nv=nvlink(4))
    found = health.judge(A4X, ev)
    assert subjects(found) == [("GPU 2 (0000:0a:00)", "reboot")]
    assert "clique id 0" in found[0]["cause"]
    # the real H100's N/A fabric: outside any domain, which on A4X is a fault on every GPU
    plain = evidence(node_xml(4).replace("H100 80GB HBM3", "GB200"), pci=ev["pci"], nv=nvlink(4))
    assert len(subjects(health.judge(A4X, plain))) == 4


def test_tools_that_cannot_run_warn_and_never_fail():
    assert health.judge(A3, {"driver": "x", "smi_missing": True}) == [
        health.could_not_run("nvidia-smi", "nvidia-smi is not on PATH")]
    ev = evidence()
    ev.update({"kernel_log": None, "kernel_log_error": "dmesg exited 1: Operation not permitted",
               "nvlink": None, "nvlink_error": "nvidia-smi nvlink -s exited 3: x"})
    found = health.judge(A3, ev)
    assert subjects(found) == [] and len(found) == 2
    assert all(f["cause"].startswith("could not run: ") for f in found)


def test_no_driver_is_one_finding():
    found = health.judge(A3, {"driver": None})
    assert subjects(found) == [("driver", "reboot")]


def test_gather_reads_sysfs_and_runs_argument_lists(tmp_path):
    sys_dir = tmp_path / "sys"
    (sys_dir / "module" / "nvidia").mkdir(parents=True)
    (sys_dir / "module" / "nvidia" / "version").write_text("580.159.04\n")
    for bus in BUSES:
        dev = sys_dir / "bus" / "pci" / "devices" / bus
        dev.mkdir(parents=True)
        (dev / "vendor").write_text("0x10de\n")
        (dev / "class").write_text("0x030200\n")
    nic = sys_dir / "bus" / "pci" / "devices" / "0000:06:00.0"
    nic.mkdir()
    (nic / "vendor").write_text("0x1ae0\n")
    (nic / "class").write_text("0x020000\n")
    calls = []

    def run(argv):
        calls.append(argv)
        assert isinstance(argv, list)
        if argv[1:] == ["-q", "-x"]:
            return 0, node_xml(), ""
        if argv[1:] == ["nvlink", "-s"]:
            return 0, nvlink(), ""
        if argv[1:] == ["is-active", "nvidia-fabricmanager"]:
            return 0, "active\n", ""
        return 0, "", ""

    result = health.check(A3, run, lambda name: "/usr/bin/" + name, sys_dir=str(sys_dir))
    assert result["driver"] == "580.159.04" and len(result["gpus"]) == 8 and result["findings"] == []
    assert ["/usr/bin/dmesg"] in calls


def test_the_judge_on_the_real_capture_says_what_the_module_said_on_that_machine():
    with open(os.path.join(FIXTURES, "h100-580.159.04", "gpu_health_info-a3-high.json")) as fh:
        recorded = json.load(fh)
    with open(os.path.join(FIXTURES, "h100-580.159.04", "nvidia-smi-q-x.xml")) as fh:
        xml = fh.read()
    with open(os.path.join(FIXTURES, "h100-580.159.04", "kernel-log.txt")) as fh:
        log = fh.read()
    ev = {"driver": recorded["driver"], "pci": ["0000:00:06"], "smi": nvidia_smi.parse(xml), "nvlink": {},
          "kernel_log": log, "fabric_manager_error": "no systemctl on PATH"}
    assert health.judge(health.expected_for(families.FAMILIES["a3-high"]["gpu"]), ev) == recorded["findings"]
    # the module ran on a second machine of the same kind: another GPU, the same readings
    same = [dict(g, uuid=None) for g in recorded["gpus"]]
    # the recording predates the process list, which reads empty on that idle GPU, and the fabric
    # health, which an H100 outside any NVLink domain does not report
    parsed = [dict(g, uuid=None) for g in nvidia_smi.parse(xml)]
    assert [g.pop("processes") for g in parsed] == [[]]
    assert [g.pop("fabric_health") for g in parsed] == [None]
    for g in parsed:  # the settings read since that capture (judged in test_gpu_settings)
        for key in ("ecc_mode", "ecc_mode_pending", "mig_mode", "mig_mode_pending", "compute_mode",
                    "applications_clock_graphics_mhz", "applications_clock_memory_mhz", "not_applicable"):
            g.pop(key)
    assert same == parsed


def test_the_drivers_recovery_action_is_a_fault_with_its_rung():
    def asks(word):
        return node_xml(edit=lambda i, g: g.replace("<gpu_recovery_action>None<",
                                                    "<gpu_recovery_action>%s<" % word) if i == 0 else g)
    assert subjects(health.judge(A3, evidence(asks("Reset")))) == [("GPU 0 (0000:04:00)", "reset_gpu")]
    assert subjects(health.judge(A3, evidence(asks("Reboot")))) == [("GPU 0 (0000:04:00)", "reboot")]
    assert subjects(health.judge(A3, evidence(asks("Drain P2P")))) == [("GPU 0 (0000:04:00)", "reset_gpu")]
