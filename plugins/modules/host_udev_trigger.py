#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: host_udev_trigger
short_description: Replay a udev event for the devices whose sysfs attributes match
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Finds the devices of a bus (C(/sys/bus/<subsystem>/devices)) whose attribute files read as O(attrs) and writes
    O(action) to each one's C(uevent) file, as C(udevadm trigger --subsystem-match --attr-match) does, so that
    udev applies rules that were installed or changed after the devices appeared.
  - Changed when at least one device matched. Call it when a rule changed; with no udev daemon the event is lost and
    the rule applies at the next boot.
options:
  subsystem:
    description: The bus (C(pci)).
    type: str
    default: pci
  attrs:
    description: Attribute files and the values they must read (C(vendor), C(device)), as sysfs prints them.
    type: dict
    required: true
  action:
    description: The event to replay.
    type: str
    choices: [add, change]
    default: add
extends_documentation_fragment:
  - gpudirect.gcp.attributes
attributes:
  check_mode:
    support: full
    details: Lists the devices it would trigger; writes nothing.
  diff_mode:
    support: none
  idempotent:
    support: none
    details: Each run replays the event for every matching device; call it only when a rule changed.
"""

EXAMPLES = r"""
- name: Apply a changed rule to the aperture PCI functions
  gpudirect.gcp.host_udev_trigger:
    attrs:
      vendor: "0x1ae0"
      device: "0x0084"
"""

RETURN = r"""
devices:
  description: The devices that matched and were triggered (in check mode, would be).
  returned: success
  type: list
  elements: str
  sample: ["0000:06:00.1", "0000:0c:00.1"]
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import host_udev
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def main():
    gm = GpuModule(dict(
        subsystem=dict(type="str", default="pci"),
        attrs=dict(type="dict", required=True),
        action=dict(type="str", choices=list(host_udev.ACTIONS), default="add"),
    ))
    p = gm.params
    bad = host_udev.check_input(p["subsystem"], p["attrs"])
    if bad:
        gm.fail("host_udev_trigger: %s" % bad)
    devices = host_udev.matching(p["subsystem"], p["attrs"])
    if devices and not gm.check_mode:
        for name in devices:
            path = host_udev.uevent_path(p["subsystem"], name)
            try:
                with open(path, "w") as fh:
                    fh.write(p["action"])
            except (IOError, OSError) as exc:
                gm.fail("host_udev_trigger: cannot write %s: %s" % (path, exc), devices=devices)
    gm.exit(changed=bool(devices), devices=devices)


if __name__ == "__main__":
    main()
