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
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl import plugin_installer as pi


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
    record, record_problem = pi.read_record_checked(_under(root, record_path))
    local_dir = _under(root, files_dir)
    missing = [os.path.join(files_dir, f) for f in pi.missing_files(local_dir, plugin["files"])]
    modified = [os.path.join(files_dir, f) for f in pi.modified_files(record, local_dir)]
    return dict(record_path=record_path, record=pi.public(record), record_problem=record_problem,
                files_dir=files_dir, missing=missing, modified=modified,
                ld_so_conf=ld_so_conf_state(root, plugin) if fam["transport"] == "gib" else None)


def problems(state, transport):
    """[(subject, cause)] of a plugin state: the one rule set the node health agent and diagnose share."""
    out = []
    record = state.get("record")
    if state.get("record_problem"):
        out.append((state.get("record_path"), "install record unusable: %s; the nccl_plugin role rewrites it"
                    % state["record_problem"]))
    elif not record and transport in ("tcpx", "tcpxo"):
        out.append((state.get("record_path"), "no install record: the plugin was never installed by the "
                    "nccl_plugin role, or its record was removed"))
    what = ("installed from %s:%s" % (record.get("image"), record.get("tag"))) if record else "no install record"
    for path in state.get("missing") or []:
        out.append((path, "missing (%s); NCCL falls back to sockets or fails without it" % what))
    for path in state.get("modified") or []:
        out.append((path, "content differs from the sha256 recorded at install (%s)" % what))
    ld = state.get("ld_so_conf")
    if ld and not ld.get("registered"):
        out.append((ld.get("path"), ("does not name %s" if ld.get("present") else
                                     "missing: the linker does not know %s") % ld.get("lib_dir")))
    return out
