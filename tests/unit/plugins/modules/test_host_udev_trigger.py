# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_udev_trigger: only matching devices get the event, check mode writes nothing, bad input is one line."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import host_udev
from ansible_collections.gpudirect.gcp.plugins.modules import host_udev_trigger
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run as run_module


@pytest.fixture
def bus(tmp_path, monkeypatch):
    root = tmp_path / "bus"
    for name, vendor, device in [("0000:06:00.1", "0x1ae0", "0x0084"), ("0000:0c:00.1", "0x1ae0", "0x0084"),
                                 ("0000:00:04.0", "0x1ae0", "0x0042"), ("0000:07:00.0", "0x10de", "0x2330")]:
        dev = root / "pci" / "devices" / name
        dev.mkdir(parents=True)
        (dev / "vendor").write_text(vendor + "\n")
        (dev / "device").write_text(device + "\n")
        (dev / "uevent").write_text("")
    monkeypatch.setattr(host_udev.matching, "__defaults__", (str(root),))
    monkeypatch.setattr(host_udev.uevent_path, "__defaults__", (str(root),))
    return root / "pci" / "devices"


def uevents(bus):
    return dict((d.name, (d / "uevent").read_text()) for d in bus.iterdir() if (d / "uevent").read_text())


def test_triggers_only_the_matching_devices(bus, capsys):
    out = run_module(host_udev_trigger, {"attrs": {"vendor": "0x1ae0", "device": "0x0084"}}, capsys)
    assert out["changed"] and out["devices"] == ["0000:06:00.1", "0000:0c:00.1"]
    assert uevents(bus) == {"0000:06:00.1": "add", "0000:0c:00.1": "add"}


def test_check_mode_writes_nothing_and_no_match_is_no_change(bus, capsys):
    out = run_module(host_udev_trigger, {"attrs": {"vendor": "0x1ae0", "device": "0x0084"}}, capsys, check_mode=True)
    assert out["changed"] and len(out["devices"]) == 2 and uevents(bus) == {}
    out = run_module(host_udev_trigger, {"attrs": {"vendor": "0x8086"}}, capsys)
    assert out["changed"] is False and out["devices"] == []


@pytest.mark.parametrize("args, msg", [
    ({"attrs": {"../uevent": "x"}}, "host_udev_trigger: attrs must name sysfs attribute files, got '../uevent'"),
    ({"subsystem": "pci/../..", "attrs": {}}, "host_udev_trigger: subsystem must be a bus name such as pci"),
])
def test_bad_input_is_one_line(bus, capsys, args, msg):
    out = run_module(host_udev_trigger, args, capsys)
    assert out["failed"] and out["msg"].startswith(msg)
