# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The installed NCCL net plugin as it is now, against the record its install left.

Shared by the nccl_plugin_info module and the node health agent (plain Python, no ansible import).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils import plugin_installer as pi


def _under(root, path):
    return os.path.join(root, path.lstrip("/"))


def ld_so_conf_state(root, plugin):
    """Whether the linker configuration names the plugin's library directory."""
    path = plugin.get("ld_so_conf")
    if not path:
        return None
    state = {"path": path, "lib_dir": plugin["lib_dir"], "present": False, "registered": False}
    try:
        with open(_under(root, path)) as fh:
            lines = [line.strip() for line in fh if line.strip() and not line.strip().startswith("#")]
    except (IOError, OSError):
        return state
    state["present"] = True
    state["registered"] = plugin["lib_dir"].rstrip("/") in [line.rstrip("/") for line in lines]
    return state


def inspect(family, record_file, root="/"):
    """The plugin's install record, its expected files that are missing or differ from the record, and
    (gIB) the linker registration; paths are as on the node, root prefixes them for reading."""
    fam = families.get_family(family)
    plugin = fam["plugin"]
    record_path = os.path.join(plugin["install_dir"], record_file)
    files_dir = plugin["files_dir"]
    record = pi.read_record(_under(root, record_path))
    local_dir = _under(root, files_dir)
    missing = [os.path.join(files_dir, f) for f in pi.missing_files(local_dir, plugin["files"])]
    modified = [os.path.join(files_dir, f) for f in pi.modified_files(record, local_dir)]
    return dict(record_path=record_path, record=pi.public(record), files_dir=files_dir, missing=missing,
                modified=modified, ld_so_conf=ld_so_conf_state(root, plugin) if fam["transport"] == "gib" else None)
