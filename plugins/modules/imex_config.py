#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: imex_config
short_description: Configure IMEX for the node's NVLink domain (A4X)
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Writes IMEX's C(nodes_config.cfg) with the addresses of every VM of the node's NVLink domain (one a line,
    sorted), creates the IMEX channel devices jobs use, and has the driver create channel 0 at every load
    (a C(modprobe.d) option), since channel devices do not survive a reboot otherwise.
  - The paths and the channel count come from the family table's C(imex) entry; the family must have one.
  - Starting or restarting the C(nvidia-imex) service is left to the caller (it must restart when
    RV(nodes_changed) is true).
options:
  family:
    description: The node's machine family.
    type: str
    required: true
  nodes:
    description: IPv4 addresses of the VMs of this node's NVLink domain, this node's own included.
    type: list
    elements: str
    required: true
  proc_devices:
    description: Where the driver's character device majors are listed. Only a test bed without GPUs points it
      elsewhere.
    type: path
    default: /proc/devices
  modprobe_file:
    description: The C(modprobe.d) file that makes the driver create channel 0 when it loads.
    type: path
    default: /etc/modprobe.d/gpudirect-imex.conf
extends_documentation_fragment:
  - gpudirect.gcp.attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details: The diff shows C(nodes_config.cfg) and the C(modprobe.d) file before and after.
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: Configure IMEX for the domain
  gpudirect.gcp.imex_config:
    family: a4x
    nodes: [10.0.0.2, 10.0.0.3]
  become: true
  register: imex
"""

RETURN = r"""
nodes_config:
  description: The path of C(nodes_config.cfg).
  returned: always
  type: str
nodes_changed:
  description: Whether C(nodes_config.cfg) was (or would be) rewritten; IMEX reads it only when it starts.
  returned: always
  type: bool
channels:
  description: The channel devices created (or that would be).
  returned: always
  type: list
  elements: str
"""

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule
from ansible_collections.gpudirect.gcp.plugins.module_utils.common.files import destination_problem, read_or_none, read_own
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import imex


def main():
    gm = GpuModule(dict(
        family=dict(type="str", required=True),
        nodes=dict(type="list", elements="str", required=True),
        proc_devices=dict(type="path", default="/proc/devices"),
        modprobe_file=dict(type="path", default="/etc/modprobe.d/gpudirect-imex.conf"),
    ))
    p = gm.params
    fam = families.FAMILIES.get(p["family"])
    if fam is None:
        gm.fail("family: unknown family %r (known: %s)" % (p["family"], ", ".join(families.family_names())))
    conf = fam.get("imex")
    if not conf:
        gm.fail("family: %s has no multi-node NVLink domain, so no IMEX to configure" % p["family"])
    try:
        text = imex.nodes_config_text(p["nodes"])
    except imex.ImexError as exc:
        gm.fail("nodes: %s" % exc)
    changed = False
    diffs = []
    modprobe = "# written by gpudirect.gcp: the driver creates IMEX channel 0 when it loads\n%s\n" % \
        imex.MODPROBE_OPTION
    nodes_changed = False
    for option, path, want in (("nodes_config", conf["nodes_config"], text),
                               ("modprobe_file", p["modprobe_file"], modprobe)):
        problem = destination_problem(option, path)
        if problem:
            gm.fail(problem)
        have = read_own(path)
        if have == want:
            continue
        changed = True
        nodes_changed = nodes_changed or path == conf["nodes_config"]
        diffs.append(gm.diff(have, want, path))
        if not gm.check_mode:
            err = gm.write_file(path, want, 0o644)
            if err:
                gm.fail(err)
    major = imex.channel_major(read_or_none(p["proc_devices"]))
    created = []
    for channel in imex.channel_state(conf["channel_dir"], conf.get("channels", 1), major):
        if channel["ok"]:
            continue
        if major is None:
            gm.fail("%s: the driver registers no %s device (is the NVIDIA driver loaded, and new enough for "
                    "IMEX?)" % (p["proc_devices"], imex.CHANNEL_MAJOR_NAME))
        if channel["problem"] != "missing":
            gm.fail("%s: %s; remove it and run again" % (channel["path"], channel["problem"]))
        created.append(channel["path"])
        changed = True
        if not gm.check_mode:
            number = int(os.path.basename(channel["path"])[len("channel"):])
            try:
                if not os.path.isdir(conf["channel_dir"]):
                    os.makedirs(conf["channel_dir"], 0o755)
                os.mknod(channel["path"], 0o666 | 0o020000, os.makedev(major, number))
                os.chmod(channel["path"], 0o666)
            except OSError as exc:
                gm.fail("cannot create %s: %s" % (channel["path"], exc.strerror or exc))
    result = dict(changed=changed, nodes_config=conf["nodes_config"], nodes_changed=nodes_changed,
                  channels=created)
    if gm.diff_mode and diffs:
        result["diff"] = diffs
    gm.exit(**result)


if __name__ == "__main__":
    main()
