#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: link_mtu
short_description: Set a network link's MTU and administrative state at run time
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Reads the link's MTU and administrative state from C(/sys/class/net/<name>) and changes only what differs from
    O(mtu) and O(state), with C(ip link set dev <name> mtu <mtu>) and C(ip link set dev <name> up|down).
  - The change lasts until the next boot or until the network manager sets the link again; persisting the MTU is
    the network manager's job (see the gpu_network role).
options:
  name:
    description: The interface name (for example C(eth1)).
    type: str
    required: true
  mtu:
    description: The MTU the link must have; omitted, the MTU is left as it is.
    type: int
  state:
    description:
      - V(up) or V(down) sets the administrative state; V(present) leaves it as it is.
    type: str
    choices: [present, up, down]
    default: present
extends_documentation_fragment:
  - gpudirect.gcp.attributes
attributes:
  check_mode:
    support: full
    details: Reports what would change and the commands it would run; changes nothing.
  diff_mode:
    support: full
    details: The link's MTU and state before and after.
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: Give eth1 its VPC's MTU and bring it up
  gpudirect.gcp.link_mtu:
    name: eth1
    mtu: 8244
    state: up
"""

RETURN = r"""
before:
  description: The link before the run.
  returned: success
  type: dict
  sample: {"mtu": 1460, "admin_up": false}
after:
  description: The link after the run (in check mode, what it would be).
  returned: success
  type: dict
  sample: {"mtu": 8244, "admin_up": true}
commands:
  description: The commands run (in check mode, those that would run).
  returned: success
  type: list
  elements: list
  sample: [["/usr/sbin/ip", "link", "set", "dev", "eth1", "mtu", "8244"]]
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import link_mtu
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def main():
    gm = GpuModule(dict(
        name=dict(type="str", required=True),
        mtu=dict(type="int"),
        state=dict(type="str", choices=["present", "up", "down"], default="present"),
    ))
    p = gm.params
    bad = link_mtu.check_input(p["name"], p["mtu"])
    if bad:
        gm.fail("link_mtu: %s" % bad)
    try:
        before = link_mtu.read_link(p["name"])
    except link_mtu.LinkError as exc:
        gm.fail("link_mtu: %s" % exc)
    after = link_mtu.desired(before, p["mtu"], p["state"])
    ip_bin = gm.which("ip") or "ip"
    argv = link_mtu.commands(ip_bin, p["name"], before, after)
    result = dict(changed=bool(argv), before=before, after=after, commands=argv)
    if argv:
        result["diff"] = dict(before=link_mtu.render(p["name"], before), after=link_mtu.render(p["name"], after),
                              before_header=p["name"], after_header=p["name"])
    if argv and not gm.check_mode:
        if not gm.which("ip"):
            gm.fail("link_mtu: the ip command (iproute2) is not installed", **result)
        for command in argv:
            rc, _out, err = gm.run(command)
            if rc != 0:
                gm.fail("link_mtu: %s failed: %s" % (" ".join(command[1:]), err.strip()), **result)
        try:
            result["after"] = link_mtu.read_link(p["name"])
        except link_mtu.LinkError as exc:
            gm.fail("link_mtu: %s" % exc, **result)
    gm.exit(**result)


if __name__ == "__main__":
    main()
