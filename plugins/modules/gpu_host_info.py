#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_host_info
short_description: What the gpu_host role needs to know about a node, in one module run
version_added: 1.1.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Reads, in one pass, what decides the gpu_host role's steps - the running kernel's module directory and, for
    each kernel module of O(kernel_modules), its file there and whether it is loaded; for each udev rule of
    O(udev_rules), how many PCI functions have its vendor and device id and how many entries its target
    directory holds; whether udev runs; the package manager; which of O(engine_paths) exist; and the C(LoadState)
    of each unit of O(units) (one C(systemctl show) for all).
  - Each of these was one module run, or one for each item, before.
  - Reads only.
options:
  kernel:
    description: The running kernel's release (C(ansible_facts['kernel'])); its module directory is searched.
    type: str
    required: true
  kernel_modules:
    description: Kernel module names; C(-) and C(_) in a name are alike, as kmod treats them.
    type: list
    elements: str
    default: []
  udev_rules:
    description: The family table's udev rules - C(name), C(pci_vendor), C(pci_device) (C(0x1ae0)), C(target_dir).
    type: list
    elements: dict
    default: []
  engine_paths:
    description: Container engine paths to look for.
    type: list
    elements: path
    default: []
  units:
    description: systemd units whose C(LoadState) to read.
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
"""

EXAMPLES = r"""
- name: Look at the node
  gpudirect.gcp.gpu_host_info:
    kernel: "{{ ansible_facts['kernel'] }}"
    kernel_modules: [import-helper]
    udev_rules:
      - {name: 00-a3-megagpu.rules, pci_vendor: "0x1ae0", pci_device: "0x0084", target_dir: /dev/aperture_devices}
    engine_paths: [/usr/bin/docker, /usr/bin/podman]
    units: [nvidia-persistenced.service]
  register: node

- name: Say whether the helper module can be loaded
  ansible.builtin.debug:
    msg: "{{ node.modules['import-helper'].available }}"
"""

RETURN = r"""
module_dir:
  description: Whether the running kernel has a module directory (C(/lib/modules/KERNEL)).
  returned: always
  type: bool
modules:
  description: For each module of O(kernel_modules) - its C(file) under the module directory (or an empty string),
    whether it is C(loaded), and whether it is C(available) (it has a file or is loaded).
  returned: always
  type: dict
  sample: {"import-helper": {"file": "/lib/modules/6.8.0-1015-gcp/updates/dkms/import-helper.ko", "loaded": true,
                             "available": true}}
udev_rules:
  description: For each rule of O(udev_rules), in order - its C(name), the PCI C(functions) with its vendor and
    device id and the C(target_entries) of its target directory.
  returned: always
  type: list
  elements: dict
  sample: [{"name": "00-a3-megagpu.rules", "functions": 8, "target_entries": 8}]
udev_running:
  description: Whether udev runs on the node (C(/run/udev/control) exists).
  returned: always
  type: bool
pkg_mgr:
  description: C(dpkg), C(rpm) or C(none).
  returned: always
  type: str
  sample: dpkg
engines:
  description: The paths of O(engine_paths) that exist, in order.
  returned: always
  type: list
  elements: str
  sample: [/usr/bin/docker]
units:
  description: The C(LoadState) of each unit of O(units) (C(not-found) without systemctl).
  returned: always
  type: dict
  sample: {"nvidia-persistenced.service": "loaded"}
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import systemd_show
from ansible_collections.gpudirect.gcp.plugins.module_utils.host import gpu_host
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule

RULE_KEYS = ("name", "pci_vendor", "pci_device", "target_dir")


def main():
    gm = GpuModule(dict(
        kernel=dict(type="str", required=True),
        kernel_modules=dict(type="list", elements="str", default=[]),
        udev_rules=dict(type="list", elements="dict", default=[]),
        engine_paths=dict(type="list", elements="path", default=[]),
        units=dict(type="list", elements="str", default=[]),
    ))
    p = gm.params
    for index, rule in enumerate(p["udev_rules"]):
        missing = [key for key in RULE_KEYS if not isinstance(rule.get(key), str) or not rule.get(key)]
        if missing:
            gm.fail("gpu_host_info: udev_rules[%d] lacks %s" % (index, ", ".join(missing)))
    states = dict((unit, "not-found") for unit in p["units"])
    systemctl = gm.which("systemctl") if p["units"] else None
    if systemctl:
        rc, text, err = gm.run(systemd_show.show_argv(systemctl, p["units"], ("LoadState",)))
        if rc != 0:
            gm.fail("gpu_host_info: systemctl show failed: %s" % (err.strip() or "exit %d" % rc))
        states = gpu_host.unit_load_states(text, p["units"])
    kernel = gpu_host.kernel_modules(p["kernel_modules"], p["kernel"])
    gm.exit(changed=False, module_dir=kernel["module_dir"], modules=kernel["modules"],
            udev_rules=gpu_host.pci_rules(p["udev_rules"]),
            udev_running=bool(gpu_host.existing([gpu_host.UDEV_CONTROL])),
            pkg_mgr=gpu_host.package_manager(), engines=gpu_host.existing(p["engine_paths"]), units=states)


if __name__ == "__main__":
    main()
