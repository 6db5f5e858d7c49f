#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: file_set
short_description: Write a set of files in one run, each only where its content or mode differs
version_added: 1.1.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Makes each file of O(files) hold its content with its mode, creating the directories it needs (mode
    O(dir_mode)). A file that already holds its content gets only its mode put right, if that differs; the
    others are left alone.
  - One module run for what would be a directory task and a copy task each (a copy is two or three SSH
    operations a file), for installs of many small files such as the node health agent's check code.
  - Files are owned by the user the module runs as (root, with C(become)).
options:
  files:
    description: The files.
    type: list
    elements: dict
    required: true
    suboptions:
      path:
        description: Absolute path of the file.
        type: path
        required: true
      content:
        description: What the file holds, as text.
        type: str
        required: true
      mode:
        description: The file's mode, in octal (V(0644)).
        type: raw
        default: "0644"
  dir_mode:
    description: The mode of a directory made for a file; a directory that exists keeps its own.
    type: raw
    default: "0755"
extends_documentation_fragment:
  - gpudirect.gcp.attributes
attributes:
  check_mode:
    support: full
    details: Reports which files would be written; changes nothing.
  diff_mode:
    support: full
    details: The before and after of each file whose content changes.
  idempotent:
    support: full
notes:
  - Each file is written through a temporary file and a rename, so a reader never sees half of one.
"""

EXAMPLES = r"""
- name: Install a helper and its configuration
  gpudirect.gcp.file_set:
    files:
      - path: /usr/local/lib/example/helper.py
        content: "{{ lookup('ansible.builtin.file', 'helper.py') }}"
      - path: /usr/local/bin/example-helper
        content: "#!/bin/sh\nexec python3 /usr/local/lib/example/helper.py \"$@\"\n"
        mode: "0755"
"""

RETURN = r"""
written:
  description: The files whose content was (or in check mode would be) written, in the order given.
  returned: success
  type: list
  elements: str
mode_fixed:
  description: The files that held their content and got only their mode put right (or would).
  returned: success
  type: list
  elements: str
"""

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule
from ansible_collections.gpudirect.gcp.plugins.module_utils.common import file_set
from ansible_collections.gpudirect.gcp.plugins.module_utils.common.files import destination_problem, mode_of, read_own


def main():
    gm = GpuModule(dict(files=dict(type="list", elements="dict", required=True,
                                   options=dict(path=dict(type="path", required=True),
                                                content=dict(type="str", required=True),
                                                mode=dict(type="raw", default="0644"))),
                        dir_mode=dict(type="raw", default="0755")))
    try:
        wanted = file_set.entries(gm.params["files"])
        dir_mode = file_set.parse_mode(gm.params["dir_mode"], "dir_mode")
    except file_set.FileSetError as exc:
        gm.fail("file_set: %s" % exc)
    for path, _content, _mode in wanted:
        problem = destination_problem("files", path)
        if problem:
            gm.fail("file_set: %s" % problem)
    changes = file_set.plan(wanted, read_own, mode_of)
    result = dict(changed=bool(changes), written=[c[0] for c in changes if c[4] == "content"],
                  mode_fixed=[c[0] for c in changes if c[4] == "mode"])
    if gm.diff_mode:
        result["diff"] = [gm.diff(before, content, path) for path, before, content, _mode, why in changes
                          if why == "content"]
    if not gm.check_mode:
        for path, _before, content, mode, why in changes:
            if why == "content":
                error = gm.write_file(path, content, mode, dir_mode=dir_mode)
            else:
                try:
                    os.chmod(path, mode)
                    error = None
                except OSError as exc:
                    error = "cannot set the mode of %s: %s" % (path, exc)
            if error:
                gm.fail("file_set: %s" % error, **result)
    gm.exit(**result)


if __name__ == "__main__":
    main()
