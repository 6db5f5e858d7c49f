# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU module's findings in a diagnosis: one per subject, each repair spelled for this cluster."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import node_checks
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import Repairs

REPAIRS = Repairs(args=["-i", "inv.yml"], zones={"n0": "us-central1-a"})


def item(subject, severity, cause, rung, action=None, phase=None, component="gpu"):
    return {"component": component, "subject": subject, "severity": severity, "cause": cause, "rung": rung,
            "action": action, "phase": phase}


def repairs_of(items):
    return [(f["component"], f["subject"], f["repair"]) for f in node_checks.gpu("n0", {"gpu": {"findings": items}},
                                                                                 REPAIRS)]


def test_each_rung_becomes_its_command():
    assert repairs_of([
        item("GPU 1 (0000:05:00)", "fail", "remap pending", "reset_gpu", ["nvidia-smi", "--gpu-reset", "-i", "1"]),
        item("GPU 0000:8b:00", "fail", "Xid 79", "reboot", ["reboot"]),
        item("nvidia-fabricmanager", "fail", "inactive", "rerun", ["systemctl", "restart", "nvidia-fabricmanager"]),
        item("nvidia-imex", "fail", "inactive", "rerun", phase="host", component="imex"),
        item("GPU 3 (0000:0b:00)", "warn", "Xid 13", "rerun"),
    ]) == [
        ("gpu", "GPU 1 (0000:05:00)",
         "ansible n0 -i inv.yml --become -m ansible.builtin.command -a 'nvidia-smi --gpu-reset -i 1'"),
        ("gpu", "GPU 0000:8b:00", "ansible n0 -i inv.yml --become -m ansible.builtin.reboot"),
        ("gpu", "nvidia-fabricmanager",
         "ansible n0 -i inv.yml --become -m ansible.builtin.command -a 'systemctl restart nvidia-fabricmanager'"),
        ("imex", "nvidia-imex", "ansible-playbook gpudirect.gcp.site -i inv.yml --limit n0 --tags gpu_host"),
        ("gpu", "GPU 3 (0000:0b:00)", None),
    ]


def test_hardware_goes_to_google_with_the_cause():
    [(component, subject, fix)] = repairs_of([item("GPU 2 (0000:0a:00)", "fail", "no spare rows", "report_host")])
    assert fix.startswith("gcloud compute instances report-host-as-faulty n0 --zone=us-central1-a ")
    assert "description=gpu GPU 2 (0000:0a:00): no spare rows" in fix


def test_two_faults_of_one_gpu_are_one_finding_with_the_stronger_repair():
    found = node_checks.gpu("n0", {"gpu": {"findings": [
        item("GPU 2 (0000:0a:00)", "warn", "Xid 13", "rerun"),
        item("GPU 2 (0000:0a:00)", "fail", "PCIe x8 of x16", "reboot", ["reboot"]),
        item("GPU 2 (0000:0a:00)", "fail", "a row remap pending", "reset_gpu", ["nvidia-smi", "--gpu-reset", "-i", "2"]),
    ]}}, REPAIRS)
    assert len(found) == 1 and found[0]["severity"] == "fail"
    assert found[0]["cause"] == "PCIe x8 of x16; Xid 13; a row remap pending"
    assert found[0]["repair"].endswith("-m ansible.builtin.reboot")


def test_a_module_that_failed_could_not_run():
    found = node_checks.gpu("n0", {"gpu": {"error": "MODULE FAILURE", "findings": []}}, REPAIRS)
    assert [(f["severity"], f["cause"]) for f in found] == [("warn", "could not run: MODULE FAILURE")]


def nccl(family, plugin, seen, strict=False, **versions):
    return node_checks.qualified("n0", {"family": family, "versions": dict(versions, plugin=plugin, nccl=seen)},
                                 REPAIRS, strict=strict)


def test_nccl_jobs_see_against_the_release_the_plugin_was_qualified_with():
    # TCPXO v1.0.15 was published with NCCL 2.28.7
    [found] = nccl("a3-mega", "v1.0.15", "2.21.5")
    assert found["severity"] == "warn" and found["subject"] == "NCCL"
    assert "jobs can load NCCL 2.21.5, but plugin v1.0.15 was qualified with NCCL 2.28.7" in found["cause"]
    assert found["repair"].endswith("--limit n0 --tags nccl_plugin")
    assert nccl("a3-mega", "v1.0.15", "2.21.5,2.28.7") == []
    # no published NCCL for the pair, or nothing seen on the node: nothing to compare
    assert nccl("a3-mega", "v1.0.16", "2.21.5") == [] and nccl("a3-mega", "v1.0.15", None) == []


def test_a_driver_older_than_the_qualified_one_is_named_and_fails_under_strict_versions():
    [found] = nccl("a3-mega", "v1.0.17", None, driver="580.65.06")
    assert (found["subject"], found["severity"], found["repair"]) == ("driver", "warn", None)
    assert "older than driver 595.71.05" in found["cause"]
    [strict] = nccl("a3-mega", "v1.0.17", None, strict=True, driver="580.65.06")
    assert strict["severity"] == "fail"
