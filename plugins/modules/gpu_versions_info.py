#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_versions_info
short_description: Read a node's kernel, NVIDIA driver, CUDA, NCCL, NCCL plugin and RxDM versions in one call
version_added: 1.1.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Reads every version from files only, so it changes nothing and does the same in check mode. A component
    that is not there, or whose file says nothing usable, is null.
  - The kernel from C(/proc/sys/kernel/osrelease), the driver from C(module/nvidia/version) under O(sys_dir), CUDA from
    C(/usr/local/cuda/version.json), NCCL from the C(libnccl.so.2.*) files in O(lib_dirs), the plugin from the tag
    in its install record, RxDM from the image tag or digest in its systemd unit.
options:
  lib_dirs:
    description: The directories NCCL may live in (the system's and the plugin's); those that are absent are skipped.
    type: list
    elements: path
    required: true
  plugin_record:
    description: The install record M(gpudirect.gcp.nccl_plugin_install) leaves.
    type: path
    required: true
  rxdm_unit:
    description: RxDM's systemd unit; omitted for families without RxDM.
    type: path
  rxdm_image:
    description: RxDM's image (its last path element is looked for in the unit).
    type: str
    default: ""
extends_documentation_fragment:
  - gpudirect.gcp.gpu.sys_dir
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
"""

EXAMPLES = r"""
- name: Read the node's versions
  gpudirect.gcp.gpu_versions_info:
    lib_dirs: [/usr/lib/x86_64-linux-gnu, /var/lib/tcpxo/lib64]
    plugin_record: /var/lib/tcpxo/.gpudirect-installed
    rxdm_unit: /etc/systemd/system/receive-datapath-manager.service
    rxdm_image: us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev
  register: versions
"""

RETURN = r"""
versions:
  description: The versions; null for a component that is not there.
  returned: always
  type: dict
  contains:
    kernel: {description: The running kernel's release., type: str}
    driver: {description: The loaded NVIDIA kernel module's version., type: str}
    cuda: {description: The CUDA toolkit's version., type: str}
    nccl: {description: "The NCCL releases found, joined by commas.", type: str}
    plugin: {description: The tag of the installed NCCL net plugin., type: str}
    rxdm: {description: The tag or digest of the image RxDM's unit runs., type: str}
  sample: {"kernel": "6.8.0-1015-gcp", "driver": "580.95.05", "cuda": "12.8.1", "nccl": "2.27.7",
           "plugin": "v1.0.15", "rxdm": "v1.0.21"}
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils.common.files import read_or_none
from ansible_collections.gpudirect.gcp.plugins.module_utils.host import versions as logic
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def main():
    gm = GpuModule(dict(
        lib_dirs=dict(type="list", elements="path", required=True),
        plugin_record=dict(type="path", required=True),
        rxdm_unit=dict(type="path"),
        rxdm_image=dict(type="str", default=""),
        sys_dir=dict(type="path", default="/sys"),
    ))
    p = gm.params
    unit = read_or_none(p["rxdm_unit"]) if p["rxdm_unit"] else None
    gm.exit(changed=False, versions={
        "kernel": logic.first_line(read_or_none(logic.KERNEL_FILE)),
        "driver": logic.first_line(read_or_none(logic.driver_file(p["sys_dir"]))),
        "cuda": logic.cuda(read_or_none(logic.CUDA_FILE)),
        "nccl": logic.nccl(logic.nccl_names(p["lib_dirs"])),
        "plugin": logic.plugin(read_or_none(p["plugin_record"])),
        "rxdm": logic.rxdm(unit, p["rxdm_image"]),
    })


if __name__ == "__main__":
    main()
