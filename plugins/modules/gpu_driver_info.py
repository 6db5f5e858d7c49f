#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_driver_info
short_description: Find where the node's NVIDIA driver libraries are and how a container gets them
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Looks for C(libcuda.so.1) in the COS driver directory (O(cos_lib_dir)) and in the system library
    directories (O(lib_dirs)), and for the NVIDIA container toolkit (C(nvidia-container-runtime-hook) or
    C(nvidia-ctk) on PATH, or a CDI spec), which makes C(--gpus all) work.
  - Reports one source for a GPU container such as RxDM. C(cos_driver_dir) when the COS directory holds the
    driver (it is mounted); else C(container_toolkit) (the toolkit injects libraries and devices); else
    C(host_driver_dir) (the system directory is mounted and GPUs are passed as devices); else none.
  - Changes nothing.
options:
  cos_lib_dir:
    description: The COS driver directory.
    type: path
    default: /var/lib/nvidia/lib64
  lib_dirs:
    description: System library directories searched for C(libcuda.so.1), in order.
    type: list
    elements: path
    default: [/usr/lib/x86_64-linux-gnu, /usr/lib/aarch64-linux-gnu, /usr/lib64, /usr/lib]
extends_documentation_fragment:
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
"""

EXAMPLES = r"""
- name: Find the NVIDIA driver
  gpudirect.gcp.gpu_driver_info:
  register: driver

- name: Say how containers get it
  ansible.builtin.debug:
    msg: "{{ driver.summary }}"
"""

RETURN = r"""
source:
  description: C(cos_driver_dir), C(container_toolkit), C(host_driver_dir), or null when no driver was found.
  returned: always
  type: str
mount:
  description: The host directory to mount where a container looks for the driver libraries, or null.
  returned: always
  type: str
gpus_flag:
  description: Whether C(--gpus all) can work (the container toolkit is present).
  returned: always
  type: bool
container_toolkit:
  description: What provides C(--gpus) (a command path or a CDI spec), or null.
  returned: always
  type: str
cos_lib_dir:
  description: The COS driver directory when it holds C(libcuda.so.1), else null.
  returned: always
  type: str
host_lib_dir:
  description: The first system library directory that holds C(libcuda.so.1), else null.
  returned: always
  type: str
summary:
  description: One line saying how a container gets the driver.
  returned: always
  type: str
  sample: injected by the NVIDIA container toolkit (/usr/bin/nvidia-container-runtime-hook) with --gpus all
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import gpu_driver
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def main():
    gm = GpuModule(dict(
        cos_lib_dir=dict(type="path", default=gpu_driver.COS_LIB_DIR),
        lib_dirs=dict(type="list", elements="path", default=list(gpu_driver.HOST_LIB_DIRS)),
    ))
    found = gpu_driver.find(gm.which, cos_lib_dir=gm.params["cos_lib_dir"], host_lib_dirs=gm.params["lib_dirs"])
    gm.exit(changed=False, **found)


if __name__ == "__main__":
    main()
