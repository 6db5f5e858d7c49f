#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: nccl_plugin_profile_info
short_description: Read the NCCL settings a plugin installed (nccl-env-profile.sh, set_nccl_env.sh) and its version
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Reads the C(export KEY=VALUE) lines of a plugin's shell profile, such as the TCPXO installer's
    C(nccl-env-profile.sh), resolving C($NCCL_LIB_DIR) to O(lib_dir) the way Google's scripts source it
    (C(NCCL_LIB_DIR=<dir> source <dir>/nccl-env-profile.sh)).
  - With O(source=true) the script is sourced instead, as users source gIB's C(set_nccl_env.sh), by bash in an
    empty environment (C(PATH) and C(NCCL_LIB_DIR) only), and RV(env) is every variable it set; a script that
    computes its values per machine or release is read as it really behaves. The script runs with the
    module's privileges.
  - Reports the installed plugin version from the package manager (O(package)) or the installer's record
    (O(record_path)), so the profile can say which release produced its values.
  - Changes nothing. A missing file is not an error; RV(found) says so.
options:
  path:
    description: The profile file.
    type: path
    required: true
  lib_dir:
    description: Value for C(NCCL_LIB_DIR) references in the profile.
    type: path
  source:
    description: Source the script with bash and report what it sets, instead of parsing its lines.
    type: bool
    default: false
  package:
    description: The package whose installed version is the plugin's (for example C(nccl-gib)).
    type: str
  record_path:
    description:
      - The installer record (JSON with C(image) and C(tag)) written by M(gpudirect.gcp.nccl_plugin_install).
      - Default - C(.gpudirect-installed) in O(install_dir), when that is given.
    type: path
  install_dir:
    description: The plugin's install directory, where the installer record is looked for.
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

- name: Source the installed gIB's environment script and note its release
  gpudirect.gcp.nccl_plugin_profile_info:
    path: /usr/local/gib/scripts/set_nccl_env.sh
    lib_dir: /usr/local/gib/scripts
    source: true
    package: nccl-gib
    install_dir: /usr/local/gib
  register: gib_env
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
  description: Lines that are not plain assignments (ignored; empty when sourced).
  returned: always
  type: list
  elements: str
version:
  description: The installed plugin version, or null when neither the package nor the record says.
  returned: always
  type: str
  sample: 1.1.0
version_source:
  description: Where RV(version) came from (C(package nccl-gib), C(installer record <path>)), or null.
  returned: always
  type: str
"""

import os

from ansible.module_utils.common.text.converters import to_text

from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl import plugin_installer
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl.nccl_env_file import parse_profile, sourced_env


def installed_version(gm):
    """(version, where from) of the installed plugin, or (None, None)."""
    package = gm.params["package"]
    if package and gm.which("dpkg-query"):
        rc, out, _err = gm.run(["dpkg-query", "-W", "-f=${Version}", package])
        if rc == 0 and out.strip():
            return out.strip(), "package %s" % package
    if package and gm.which("rpm"):
        rc, out, _err = gm.run(["rpm", "-q", "--qf", "%{VERSION}-%{RELEASE}", package])
        if rc == 0 and out.strip():
            return out.strip(), "package %s" % package
    record = gm.params["record_path"]
    if not record and gm.params["install_dir"]:
        record = os.path.join(gm.params["install_dir"], plugin_installer.RECORD_FILE)
    data = plugin_installer.read_record(record) if record else None
    if data and data.get("tag"):
        return "%s:%s" % (data.get("image"), data["tag"]), "installer record %s" % record
    return None, None


def main():
    gm = GpuModule(dict(
        path=dict(type="path", required=True),
        lib_dir=dict(type="path"),
        source=dict(type="bool", default=False),
        package=dict(type="str"),
        record_path=dict(type="path"),
        install_dir=dict(type="path"),
    ))
    path = gm.params["path"]
    version, version_source = installed_version(gm)
    result = dict(changed=False, found=False, env={}, skipped_lines=[], version=version,
                  version_source=version_source)
    if not os.path.exists(path):
        gm.exit(**result)
    variables = {"NCCL_LIB_DIR": gm.params["lib_dir"]} if gm.params["lib_dir"] else {}
    if gm.params["source"]:
        bash = gm.which("bash")
        if not bash:
            gm.fail("nccl_plugin_profile_info: bash is needed to source %s" % path, **result)
        try:
            env, rc = sourced_env(gm.run, bash, path, variables)
        except ValueError as exc:
            gm.fail("nccl_plugin_profile_info: %s" % exc, **result)
        if rc != 0:
            gm.fail("nccl_plugin_profile_info: sourcing %s exited %d" % (path, rc), **result)
        result.update(found=True, env=env)
        gm.exit(**result)
    try:
        with open(path, "rb") as fh:
            text = to_text(fh.read(), errors="surrogate_or_strict")
    except (IOError, OSError) as exc:
        gm.fail("cannot read plugin profile %s: %s" % (path, exc))
    env, skipped = parse_profile(text, variables)
    result.update(found=True, env=env, skipped_lines=skipped)
    gm.exit(**result)


if __name__ == "__main__":
    main()
