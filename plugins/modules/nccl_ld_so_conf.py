#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: nccl_ld_so_conf
short_description: Register (or remove) the NCCL plugin's library directory with the dynamic linker
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Writes (C(present)) or removes (C(absent)) an C(/etc/ld.so.conf.d) entry naming the plugin's library
    directory, then runs C(ldconfig) when the linker cache is older than the entry, its directory or the
    library directory, so the cache always matches; a second run changes nothing.
options:
  path:
    description: The entry file, for example C(/etc/ld.so.conf.d/gib.conf).
    type: path
    required: true
  lib_dir:
    description: The library directory the entry names. Required with I(state=present).
    type: path
  state:
    description: Whether the entry is there.
    type: str
    choices: [present, absent]
    default: present
  cache:
    description: The linker cache ldconfig writes.
    type: path
    default: /etc/ld.so.cache
extends_documentation_fragment:
  - gpudirect.gcp.attributes
attributes:
  check_mode:
    support: full
    details: Reports whether the entry or the cache would change; changes nothing.
  diff_mode:
    support: full
    details: The entry's content before and after.
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: Register the gIB libraries with the dynamic linker
  gpudirect.gcp.nccl_ld_so_conf:
    path: /etc/ld.so.conf.d/gib.conf
    lib_dir: /usr/local/gib/lib64

- name: Remove the entry and refresh the cache
  gpudirect.gcp.nccl_ld_so_conf:
    path: /etc/ld.so.conf.d/gib.conf
    state: absent
"""

RETURN = r"""
entry_changed:
  description: True when the entry was (or would be) written or removed.
  returned: success
  type: bool
cache_refreshed:
  description: True when ldconfig ran (or in check mode would run).
  returned: success
  type: bool
"""

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl import nccl_ld_so_conf as logic
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule
from ansible_collections.gpudirect.gcp.plugins.module_utils.common.files import destination_problem, read_own


def main():
    gm = GpuModule(dict(path=dict(type="path", required=True), lib_dir=dict(type="path"),
                        state=dict(type="str", default="present", choices=["present", "absent"]),
                        cache=dict(type="path", default="/etc/ld.so.cache")),
                   required_if=[("state", "present", ["lib_dir"])])
    p = gm.params
    problem = destination_problem("path", p["path"])
    if problem:
        gm.fail("nccl_ld_so_conf: %s" % problem)
    before = read_own(p["path"])
    after = logic.conf_text(p["lib_dir"]) if p["state"] == "present" else None
    entry_changed = before != after
    sources = [p["path"], os.path.dirname(p["path"])] + ([p["lib_dir"]] if p["lib_dir"] else [])
    refresh = entry_changed or logic.cache_stale(p["cache"], sources)
    result = dict(changed=entry_changed or refresh, entry_changed=entry_changed, cache_refreshed=refresh)
    if entry_changed:
        result["diff"] = gm.diff(before, after, p["path"])
    if gm.check_mode:
        gm.exit(**result)
    if entry_changed and after is not None:
        error = gm.write_file(p["path"], after, 0o644)
        if error:
            gm.fail("nccl_ld_so_conf: %s" % error)
    elif entry_changed:
        try:
            os.remove(p["path"])
        except OSError as exc:
            gm.fail("nccl_ld_so_conf: cannot remove %s: %s" % (p["path"], exc))
    if refresh:
        ldconfig = gm.module.get_bin_path("ldconfig", opt_dirs=["/sbin", "/usr/sbin"])
        if not ldconfig:
            gm.fail("nccl_ld_so_conf: ldconfig not found on the node (looked in PATH, /sbin, /usr/sbin)")
        rc, out, err = gm.run([ldconfig])
        if rc != 0:
            gm.fail("nccl_ld_so_conf: ldconfig failed (rc=%d): %s" % (rc, (err or out).strip()[-300:]))
    gm.exit(**result)


if __name__ == "__main__":
    main()
