#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: nccl_plugin_info
short_description: Check the installed NCCL net plugin against the record its install left
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Reads the install record that M(gpudirect.gcp.nccl_plugin_install) writes (image, tag, digest and the
    sha256 of every file the installer left) and reports every expected file of the family's plugin that is
    missing or whose content differs from the record.
  - For gIB families, also reports whether the dynamic linker configuration file registers the plugin's
    library directory.
  - The family table gives the files, their directory and the record's directory. Changes nothing.
options:
  family:
    description: GPU family id (see the family table).
    type: str
    required: true
  root:
    description: Prefix for every path read (tests and chroots).
    type: path
    default: /
extends_documentation_fragment:
  - gpudirect.gcp.plugin
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
"""

EXAMPLES = r"""
- name: Check the installed plugin
  gpudirect.gcp.nccl_plugin_info:
    family: "{{ gpu_family }}"
  register: plugin

- name: Name the files that are gone
  ansible.builtin.debug:
    msg: "{{ plugin.missing | join(', ') }}"
  when: plugin.missing | length > 0
"""

RETURN = r"""
record_path:
  description: Where the install record is expected.
  returned: always
  type: str
record:
  description: The record's C(image), C(tag) and C(digest), or null when there is no readable record.
  returned: always
  type: dict
record_problem:
  description: Why the record file that is there is no usable record (cut short, not JSON, a malformed
    manifest), or null.
  returned: always
  type: str
files_dir:
  description: The directory the expected files are relative to.
  returned: always
  type: str
missing:
  description: Absolute paths of expected files that do not exist.
  returned: always
  type: list
  elements: str
modified:
  description: Absolute paths of files whose sha256 differs from the record's manifest.
  returned: always
  type: list
  elements: str
ld_so_conf:
  description:
    - gIB only (null otherwise). C(path), C(lib_dir), C(present) (the file exists) and C(registered)
      (it names C(lib_dir)).
  returned: always
  type: dict
"""

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl import plugin_installer as pi
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl.plugin_state import inspect
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def main():
    gm = GpuModule(dict(
        family=dict(type="str", required=True),
        record_file=dict(type="str", default=pi.RECORD_FILE),
        root=dict(type="path", default="/"),
    ))
    p = gm.params
    if p["family"] not in families.FAMILIES:
        gm.fail("family: unknown GPU family %r; known: %s" % (p["family"], ", ".join(families.family_names())))
    if not p["record_file"] or os.sep in p["record_file"]:
        gm.fail("record_file: %r is not a plain file name" % p["record_file"])
    gm.exit(changed=False, **inspect(p["family"], p["record_file"], p["root"]))


if __name__ == "__main__":
    main()
