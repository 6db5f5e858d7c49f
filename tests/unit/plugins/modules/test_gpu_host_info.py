# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_host_info as a module: one systemctl call for every unit, one line for a bad rule."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.module_utils import basic

from ansible_collections.gpudirect.gcp.plugins.modules import gpu_host_info
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run as run_module

RULE = {"name": "00-a3-megagpu.rules", "pci_vendor": "0x1ae0", "pci_device": "0x0084",
        "target_dir": "/nonexistent/aperture_devices"}


def test_units_are_read_with_one_systemctl_call_in_check_mode_too(monkeypatch, capsys):
    calls = []

    def fake(self, argv, **kw):
        calls.append(argv)
        return 0, "LoadState=loaded\n", ""
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **kw: "/usr/bin/" + name)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", fake)
    out = run_module(gpu_host_info, {"kernel": "0.0-none", "kernel_modules": ["import-helper"], "udev_rules": [RULE],
                                     "units": ["nvidia-persistenced.service"]}, capsys, check_mode=True)
    assert calls == [["/usr/bin/systemctl", "show", "-p", "LoadState", "--", "nvidia-persistenced.service"]]
    assert out["changed"] is False and out["units"] == {"nvidia-persistenced.service": "loaded"}
    assert out["modules"]["import-helper"]["available"] is False and out["module_dir"] is False
    assert out["udev_rules"] == [{"name": "00-a3-megagpu.rules", "functions": 0, "target_entries": 0}]
    assert out["pkg_mgr"] in ("dpkg", "rpm", "none")


def test_a_failing_systemctl_and_a_rule_without_its_fields_are_one_line(monkeypatch, capsys):
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **kw: "/usr/bin/" + name)
    monkeypatch.setattr(basic.AnsibleModule, "run_command",
                        lambda self, argv, **kw: (1, "", "Failed to connect to bus: No such file or directory\n"))
    out = run_module(gpu_host_info, {"kernel": "x", "units": ["a.service"]}, capsys)
    assert out["failed"] and out["msg"] == (
        "gpu_host_info: systemctl show failed: Failed to connect to bus: No such file or directory")
    out = run_module(gpu_host_info, {"kernel": "x", "udev_rules": [RULE, {"name": "r", "pci_vendor": 5}]}, capsys)
    assert out["failed"] and out["msg"] == "gpu_host_info: udev_rules[1] lacks pci_vendor, pci_device, target_dir"


def test_without_systemctl_every_unit_is_not_found(monkeypatch, capsys):
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **kw: None)
    out = run_module(gpu_host_info, {"kernel": "x", "units": ["nvidia-persistenced.service"]}, capsys)
    assert out["units"] == {"nvidia-persistenced.service": "not-found"}
