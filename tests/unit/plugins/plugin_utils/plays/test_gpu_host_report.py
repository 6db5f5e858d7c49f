# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_host role's report of a full run: the same lines each step used to add in a task of its own."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.filter import gpu_host_report as report_filter
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import gpu_host_report

VM = {"family": "a3-mega", "kernel": "6.8.0-1015-gcp", "container": False, "container_kind": "",
      "check_mode": False, "no_modules": False}
PODMAN = dict(VM, container=True, container_kind="podman")
RULE = {"name": "90-dmabuf.rules", "target_dir": "/dev/aperture_devices", "pci_vendor": "0x1ae0",
        "pci_device": "0x0084"}


def steps_of_a_vm():
    return {
        "modules": {"wanted": ["import-helper"], "state": {"import-helper": {"available": True, "loaded": True}}},
        "devices": {"rules": [RULE], "seen": [{"functions": 8, "target_entries": 8}], "udev_running": True,
                    "aperture_count": 8},
        "limits": {"limits": {"memlock": "unlimited", "nofile": 1048576}, "file": "/etc/security/limits.d/99-gpu.conf"},
        "sysctl": {"results": [{"item": {"key": "net.core.rmem_max", "value": 134217728}, "changed": True},
                               {"item": {"key": "net.ipv4.tcp_mtu_probing", "value": "0"}, "changed": False}]},
        "persistenced": {"loaded": True, "args": ["--persistence-mode"]},
        "imex": {"enabled": False},
        "holds": {"enabled": True, "held": ["nvidia-utils-570-server"], "not_installed": ["libnccl2"]},
        "engine": {"required": True, "engines": ["/usr/bin/docker"], "package": "docker.io"},
        "registry": {"enabled": True, "registries": ["us-docker.pkg.dev"]},
    }


def test_a_full_run_on_a_vm_says_each_step_in_order():
    result = gpu_host_report.report(steps_of_a_vm(), VM)
    assert result["done"] == [
        "kernel module import-helper loaded and loaded at boot",
        "udev rule 90-dmabuf.rules installed",
        "limits memlock/nofile in /etc/security/limits.d/99-gpu.conf (new sessions)",
        "net.core.rmem_max=134217728 persisted and applied",
        "net.ipv4.tcp_mtu_probing=0 persisted (already set)",
        "nvidia-persistenced override --persistence-mode",
        "held package nvidia-utils-570-server",
        "container engine /usr/bin/docker",
        "registry credentials for us-docker.pkg.dev from the service account (docker-credential-gce-metadata)",
    ]
    assert result["skipped"] == [
        {"step": "IMEX", "reason": "a3-mega has no multi-node NVLink domain"},
        {"step": "hold package libnccl2", "reason": "libnccl2 is not installed"},
    ]


def test_in_a_container_what_needs_the_host_kernel_or_udev_is_skipped_with_its_reason():
    steps = steps_of_a_vm()
    steps["modules"] = {"wanted": ["import-helper", "gve"],
                        "state": {"import-helper": {"available": True, "loaded": False},
                                  "gve": {"available": False, "loaded": False}}}
    steps["devices"] = dict(steps["devices"], udev_running=False, seen=[{"functions": 0, "target_entries": 0}])
    steps["sysctl"] = {"results": [{"item": {"key": "net.core.rmem_max", "value": 1},
                                    "msg": "setting net.core.rmem_max failed: read-only file system\n"}]}
    result = gpu_host_report.report(steps, PODMAN)
    assert result["done"][:2] == ["kernel module import-helper persisted and loaded at boot",
                                  "udev rule 90-dmabuf.rules installed"]
    assert "net.core.rmem_max=1 persisted" in result["done"]
    assert result["skipped"][:5] == [
        {"step": "load kernel module import-helper now",
         "reason": "modules cannot be loaded from inside a container (in a podman container the host kernel is used)"},
        {"step": "load kernel module gve",
         "reason": "no gve module for kernel 6.8.0-1015-gcp (the dmabuf-import-helper DKMS package is not installed)"
                   " (in a podman container the host kernel is used)"},
        {"step": "apply udev rule 90-dmabuf.rules now",
         "reason": "udev does not run here (podman container); the rule applies at the next boot"},
        {"step": "aperture devices in /dev/aperture_devices",
         "reason": "no 0x1ae0:0x0084 PCI functions on this node, found 0 of 8 devices"},
        {"step": "apply net.core.rmem_max now",
         "reason": "sysctl -w failed: setting net.core.rmem_max failed: read-only file system; the value applies at"
                   " the next boot"},
    ]


def test_check_mode_says_what_would_apply():
    result = gpu_host_report.report({"sysctl": steps_of_a_vm()["sysctl"]}, dict(VM, check_mode=True))
    assert result["done"][0] == "net.core.rmem_max=134217728 persisted (check mode: would apply now)"


def test_steps_left_out_by_tags_add_nothing_and_a_family_without_modules_says_so():
    assert gpu_host_report.report({"limits": None, "sysctl": ""}, dict(VM, family="a3-high", no_modules=True)) == {
        "done": ["kernel modules: none needed for a3-high"], "skipped": []}


def test_what_a_family_does_not_have_is_a_skipped_step_with_its_reason():
    steps = {"limits": {"limits": {}, "file": "/x"}, "persistenced": {"loaded": False, "args": ["-x"]},
             "engine": {"required": False}, "registry": {"enabled": False}, "holds": {"enabled": False},
             "imex": {"enabled": True, "nodes": ["a4x-0", "a4x-1"]}}
    result = gpu_host_report.report(steps, dict(VM, family="a4"))
    assert result["done"] == ["IMEX for the NVLink domain of a4x-0, a4x-1"]
    assert [entry["step"] for entry in result["skipped"]] == [
        "limits", "nvidia-persistenced override", "container engine", "registry credentials"]
    assert result["skipped"][1]["reason"] == "nvidia-persistenced.service is not installed (no NVIDIA driver on this node)"


@pytest.mark.parametrize("steps, message", [
    ({"kernel": {}}, "unknown step(s): kernel"),
    ({"limits": "yes"}, "limits: expected a mapping"),
    ({"devices": {"rules": [RULE], "seen": []}}, "devices: 1 udev rule(s) but 0 device count(s)"),
])
def test_input_the_role_never_registers_is_one_line(steps, message):
    with pytest.raises(AnsibleFilterError, match=r"^_gpu_host_report: .*" + message.replace("(", r"\(").replace(")", r"\)")):
        report_filter.report(steps, VM)
