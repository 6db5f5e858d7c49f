#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: host_prereqs_info
short_description: Name every prerequisite a GPU node lacks before anything is configured
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Checks what the configuration and validation phases need from the node and cannot install themselves, and
    returns one line per missing prerequisite, with what to do.
  - A guest OS the phases can configure (Container-Optimized OS, read-only with an C(/etc) reset at boot, is
    refused alone); the NVIDIA driver loaded (its version); on A3 Mega the dmabuf import helper device; on TCPX and TCPXO
    families a container engine; the nccl-tests programs, or the CUDA compiler and make to build them; on gIB
    families the package repository C(nccl-gib) comes from; the host software the family table names for the
    family and no phase installs (A4X Max - DOCA-OFED, C(openibd) and C(asapd-lite) enabled); each registry of
    O(registries) taking a TCP connection from the node.
  - Reads files, looks up commands and opens a TCP connection to each registry (closed at once); changes nothing.
options:
  family:
    description: Machine family of the node (the inventory's C(gpu_family)).
    type: str
    required: true
  pkg_mgr:
    description: The node's package manager (C(ansible_facts['pkg_mgr'])), for the gIB repository check.
    type: str
  nccl_tests_binary_dir:
    description: Where the nccl-tests programs are; empty means they are to be built on the node.
    type: path
  gib_repository:
    description: Check for gIB's package repository (gIB families; false when gIB is installed from its image).
    type: bool
    default: true
  registries:
    description:
      - Registries the phases pull images from, as C(host[:port][/path]) (port 443 unless given).
    type: list
    elements: str
    default: []
  path_sources:
    description:
      - Paths read from somewhere else, for stand-ins that cannot be at the real path (a test cluster without
        GPUs). Maps the real path (C(/sys/module/nvidia/version), C(/dev/dmabuf_import_helper)) to the one read.
    type: dict
    default: {}
extends_documentation_fragment:
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
"""

EXAMPLES = r"""
- name: Check the node's prerequisites
  gpudirect.gcp.host_prereqs_info:
    family: "{{ gpu_family }}"
    pkg_mgr: "{{ ansible_facts['pkg_mgr'] }}"
  register: prereqs

- name: Stop on the first missing one
  ansible.builtin.fail:
    msg: "{{ prereqs.problems | map(attribute='line') | join(' | ') }}"
  when: prereqs.problems | length > 0
"""

RETURN = r"""
driver_version:
  description: The loaded NVIDIA kernel driver's version, or null.
  returned: always
  type: str
  sample: 570.172.08
problems:
  description: One entry per missing prerequisite.
  returned: always
  type: list
  elements: dict
  contains:
    what:
      description: The prerequisite.
      type: str
      sample: dmabuf import helper
    message:
      description: What is missing.
      type: str
    fix:
      description: What to do.
      type: str
    line:
      description: C(what), C(message) and C(fix) in one line.
      type: str
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.host import host_prereqs
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def main():
    gm = GpuModule(dict(
        family=dict(type="str", required=True),
        pkg_mgr=dict(type="str"),
        nccl_tests_binary_dir=dict(type="path"),
        gib_repository=dict(type="bool", default=True),
        path_sources=dict(type="dict", default={}),
        registries=dict(type="list", elements="str", default=[]),
    ))
    family = gm.params["family"]
    if family not in families.FAMILIES:
        gm.fail("family: unknown GPU family %r; known: %s" % (family, ", ".join(families.family_names())))
    result = host_prereqs.check(family, gm.which, pkg_mgr=gm.params["pkg_mgr"],
                                path_sources=gm.params["path_sources"],
                                nccl_tests_binary_dir=gm.params["nccl_tests_binary_dir"],
                                gib_repository_check=gm.params["gib_repository"],
                                registry_names=gm.params["registries"])
    gm.exit(changed=False, **result)


if __name__ == "__main__":
    main()
