# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_udev_trigger's logic: the devices whose sysfs attributes match, and their uevent files.

Writing an action to a device's uevent file is what udevadm trigger does:
the kernel sends the event again and udev applies the current rules.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpudirect.gcp.plugins.module_utils.common.sysfs import read_text

SYSFS_BUS = "/sys/bus"
ACTIONS = ("add", "change")
_NAME = re.compile(r"^[A-Za-z0-9_.:-]+$")


def check_input(subsystem, attrs):
    """One line naming the bad argument, or None."""
    if not _NAME.match(subsystem or ""):
        return "subsystem must be a bus name such as pci, got %r" % (subsystem,)
    bad = sorted(k for k in attrs if not _NAME.match(k) or k in (".", ".."))
    if bad:
        return "attrs must name sysfs attribute files, got %s" % ", ".join(repr(b) for b in bad)
    return None


def matching(subsystem, attrs, sysfs_bus=SYSFS_BUS):
    """Sorted device names of the bus whose every attribute in attrs reads as its value."""
    devices = os.path.join(sysfs_bus, subsystem, "devices")
    try:
        names = sorted(os.listdir(devices))
    except OSError:
        return []
    return [name for name in names
            if all(read_text(os.path.join(devices, name, key)) == str(value) for key, value in attrs.items())]


def uevent_path(subsystem, name, sysfs_bus=SYSFS_BUS):
    return os.path.join(sysfs_bus, subsystem, "devices", name, "uevent")
