#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: nccl_plugin_profile_info
short_description: Read the NCCL settings a plugin installer wrote (nccl-env-profile.sh)
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Reads the C(export KEY=VALUE) lines of a plugin's shell profile, such as the TCPXO installer's
    C(nccl-env-profile.sh), resolving C($NCCL_LIB_DIR) to O(lib_dir) the way Google's scripts source it
    (C(NCCL_LIB_DIR=<dir> source <dir>/nccl-env-profile.sh)).
  - Changes nothing. A missing file is not an error; RV(found) says so.
options:
  path:
    description: The profile file.
    type: path
    required: true
  lib_dir:
    description: Value for C(NCCL_LIB_DIR) references in the profile.
    type: path
extends_documentation_fragment:
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
"""

EXAMPLES = r"""
- name: Read the TCPXO plugin's profile
  gpudirect.gcp.nccl_plugin_profile_info:
    path: /var/lib/tcpxo/lib64/nccl-env-profile.sh
    lib_dir: /var/lib/tcpxo/lib64
  register: plugin_profile
"""

RETURN = r"""
found:
  description: Whether the file exists.
  returned: always
  type: bool
env:
  description: Variables the profile sets, with C(NCCL_LIB_DIR) resolved.
  returned: always
  type: dict
skipped_lines:
  description: Lines that are not plain assignments (ignored).
  returned: always
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_env_file import parse_profile


def main():
    module = AnsibleModule(
        argument_spec=dict(path=dict(type="path", required=True), lib_dir=dict(type="path")),
        supports_check_mode=True,
    )
    path = module.params["path"]
    if not os.path.exists(path):
        module.exit_json(changed=False, found=False, env={}, skipped_lines=[])
    try:
        with open(path, "rb") as fh:
            text = to_text(fh.read(), errors="surrogate_or_strict")
    except (IOError, OSError) as exc:
        module.fail_json(msg="cannot read plugin profile %s: %s" % (path, exc))
    variables = {"NCCL_LIB_DIR": module.params["lib_dir"]} if module.params["lib_dir"] else {}
    env, skipped = parse_profile(text, variables)
    module.exit_json(changed=False, found=True, env=env, skipped_lines=skipped)


if __name__ == "__main__":
    main()
