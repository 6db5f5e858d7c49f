#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: nccl_env_check
short_description: Check an NCCL environment against the node before it is written
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Fails, one line per problem, when an interface a variable names does not exist on the node, when
    C(LD_LIBRARY_PATH) does not start with the installed plugin's directory (or it lacks the plugin library),
    when a C(*_CONFIG_PATH)/C(*_CONFIG_FILE) variable names a missing file (a missing tuner config aborts
    TCPXO jobs), or when a value holds a line break.
  - O(problems) found earlier (for example variables the plugin's guest config checker rejects) are reported
    together with these.
  - With O(path) it checks the env file a node already has (C(KEY=VALUE) lines) and returns what it holds.
  - Changes nothing.
options:
  env:
    description: The NCCL environment to check. One of O(env) and O(path) is required.
    type: dict
  path:
    description: An env file on the node to read and check instead of O(env); a missing file fails.
    type: path
  plugin_missing_ok:
    description:
      - Skip the checks of the plugin's own files when O(plugin_lib_dir) does not exist yet (check mode before the
        plugin is installed).
    type: bool
    default: false
  problems:
    description: Problems already known, reported with the ones found here.
    type: list
    elements: str
    default: []
  sysfs_net:
    description: Directory listing the node's interfaces.
    type: path
    default: /sys/class/net
extends_documentation_fragment:
  - gpudirect.gcp.profile
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
"""

EXAMPLES = r"""
- name: Check the env file the node has now
  gpudirect.gcp.nccl_env_check:
    path: /etc/nccl/nccl.env
    iface_vars: [NCCL_SOCKET_IFNAME, NCCL_FASTRAK_CTRL_DEV, NCCL_FASTRAK_IFNAME]
    plugin_lib_dir: /var/lib/tcpxo/lib64
  register: env_file

- name: Check the env
  gpudirect.gcp.nccl_env_check:
    env: "{{ nccl_env.env }}"
    iface_vars: [NCCL_SOCKET_IFNAME, NCCL_FASTRAK_CTRL_DEV, NCCL_FASTRAK_IFNAME]
    plugin_lib_dir: /var/lib/tcpxo/lib64
    plugin_library: libnccl-net.so
    problems: "{{ nccl_env.problems }}"
"""

RETURN = r"""
interfaces:
  description: Interfaces found on the node.
  returned: always
  type: list
  elements: str
problems:
  description: Every problem found (empty on success).
  returned: always
  type: list
  elements: str
present:
  description: Whether O(path) could be read (only with O(path)).
  returned: when O(path) is given
  type: bool
read_error:
  description: Why O(path) could not be read.
  returned: when O(path) is given and could not be read
  type: str
env:
  description: The variables O(path) holds (only with O(path)).
  returned: when O(path) is given and the file could be read
  type: dict
"""

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule
from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl.nccl_env_file import check_env, parse_profile


def shown_env(env):
    """An environment as the result shows it: secret names' values and credentials masked, one line each."""
    return dict((safe_text.one_line(k), safe_text.one_line(v)) for k, v in safe_text.mask_env(env or {}).items())


def shown(problems):
    return [safe_text.one_line(safe_text.mask_text(p)) for p in problems]


def main():
    gm = GpuModule(
        dict(
            env=dict(type="dict"),
            path=dict(type="path"),
            iface_vars=dict(type="list", elements="str", default=[]),
            binding_vars=dict(type="list", elements="str", default=[]),
            plugin_lib_dir=dict(type="path"),
            plugin_library=dict(type="str"),
            plugin_missing_ok=dict(type="bool", default=False),
            problems=dict(type="list", elements="str", default=[]),
            sysfs_net=dict(type="path", default="/sys/class/net"),
        ),
        mutually_exclusive=[["env", "path"]],
        required_one_of=[["env", "path"]],
    )
    p = gm.params
    # the arguments as the result echoes them (ansible-core before 2.19 adds them to every result)
    extra = {"invocation": {"module_args": dict(p, env=shown_env(p["env"]) if p["env"] else p["env"],
                                                problems=shown(p["problems"]))}}
    if p["path"]:
        try:
            with open(p["path"]) as fh:
                p["env"] = parse_profile(fh.read())[0]
        except (IOError, OSError) as exc:
            gm.fail("cannot read the NCCL env file %s: %s" % (p["path"], exc.strerror or exc),
                    problems=["%s: %s" % (p["path"], exc.strerror or exc)], present=False,
                    read_error=exc.strerror or str(exc))
        extra.update(env=shown_env(p["env"]), present=True)
    try:
        interfaces = sorted(os.listdir(p["sysfs_net"]))
    except OSError as exc:
        gm.fail("cannot list interfaces in %s: %s" % (p["sysfs_net"], exc), **extra)
    problems = list(p["problems"]) + check_env(p["env"], p["iface_vars"], p["binding_vars"], interfaces,
                                               p["plugin_lib_dir"], p["plugin_library"],
                                               plugin_missing_ok=p["plugin_missing_ok"])
    if problems:
        problems = shown(problems)
        what = p["path"] or "NCCL environment not written"
        gm.fail("%s: %s" % (what, "; ".join(problems)), problems=problems, interfaces=interfaces, **extra)
    gm.exit(changed=False, problems=[], interfaces=interfaces, **extra)


if __name__ == "__main__":
    main()
