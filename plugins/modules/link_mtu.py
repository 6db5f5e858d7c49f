#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: link_mtu
short_description: Set network links' MTU and administrative state at run time
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Reads each link's MTU and administrative state from C(/sys/class/net/<name>) and changes only what differs
    from the requested MTU and state, with C(ip link set dev <name> mtu <mtu>) and C(ip link set dev <name> up|down).
  - One link with O(name), or several in one call with O(links), so that a node's GPU NICs cost one module run.
    With O(links), a link that cannot be read or changed does not stop the others; the module fails afterwards,
    naming each such link.
  - The change lasts until the next boot or until the network manager sets the link again; persisting the MTU is
    the network manager's job (see the gpu_network role).
options:
  name:
    description:
      - The interface name (for example C(eth1)).
      - One of O(name) and O(links) is required.
    type: str
  mtu:
    description: The MTU the link O(name) must have; omitted, the MTU is left as it is.
    type: int
  state:
    description:
      - V(up) or V(down) sets the administrative state of the link O(name); V(present) leaves it as it is.
    type: str
    choices: [present, up, down]
    default: present
  links:
    description:
      - Several links, each with the same keys as the single form, handled in order in one call.
    type: list
    elements: dict
    suboptions:
      name:
        description: The interface name.
        type: str
        required: true
      mtu:
        description: The MTU the link must have; omitted, the MTU is left as it is.
        type: int
      state:
        description: V(up) or V(down) sets the administrative state; V(present) leaves it as it is.
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
    details: Each changed link's MTU and state before and after.
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: Give eth1 its VPC's MTU and bring it up
  gpudirect.gcp.link_mtu:
    name: eth1
    mtu: 8244
    state: up

- name: Give two GPU NICs their MTU in one call
  gpudirect.gcp.link_mtu:
    links:
      - {name: eth1, mtu: 8244, state: up}
      - {name: eth2, mtu: 8244, state: up}
"""

RETURN = r"""
before:
  description: The link before the run (with O(name)).
  returned: success and O(name) given
  type: dict
  sample: {"mtu": 1460, "admin_up": false}
after:
  description: The link after the run (in check mode, what it would be; with O(name)).
  returned: success and O(name) given
  type: dict
  sample: {"mtu": 8244, "admin_up": true}
links:
  description:
    - With O(links), each link in order - C(name), C(before), C(after) and C(commands), or C(msg), one line on why
      the link could not be read or changed.
  returned: O(links) given
  type: list
  elements: dict
  sample: [{"name": "eth1", "before": {"mtu": 1460, "admin_up": true}, "after": {"mtu": 8244, "admin_up": true},
            "commands": [["/usr/sbin/ip", "link", "set", "dev", "eth1", "mtu", "8244"]]}]
commands:
  description: The commands run (in check mode, those that would run), every link's in order.
  returned: success
  type: list
  elements: list
  sample: [["/usr/sbin/ip", "link", "set", "dev", "eth1", "mtu", "8244"]]
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import link_mtu
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule

STATES = ["present", "up", "down"]


def main():
    gm = GpuModule(dict(
        name=dict(type="str"),
        mtu=dict(type="int"),
        state=dict(type="str", choices=STATES, default="present"),
        links=dict(type="list", elements="dict", options=dict(
            name=dict(type="str", required=True),
            mtu=dict(type="int"),
            state=dict(type="str", choices=STATES, default="present"),
        )),
    ), mutually_exclusive=[["name", "links"], ["mtu", "links"]], required_one_of=[["name", "links"]])
    p = gm.params
    several = p["links"] is not None
    wanted = p["links"] if several else [dict(name=p["name"], mtu=p["mtu"], state=p["state"])]
    ip_found = gm.which("ip")
    plan = link_mtu.plan_links(wanted, ip_found or "ip")
    argv = [command for entry in plan for command in entry.get("commands", [])]
    if argv and not gm.check_mode and not ip_found:
        gm.fail("link_mtu: the ip command (iproute2) is not installed", changed=False, commands=argv)
    if not gm.check_mode:
        for entry in plan:
            for command in entry.get("commands", []):
                rc, _out, err = gm.run(command)
                if rc != 0:
                    entry["msg"] = "%s failed: %s" % (" ".join(command[1:]), err.strip())
                    break
            else:
                if entry.get("commands"):
                    try:
                        entry["after"] = link_mtu.read_link(entry["name"])
                    except link_mtu.LinkError as exc:
                        entry["msg"] = str(exc)
    changed = [entry for entry in plan if entry.get("commands")]
    result = dict(changed=bool(changed), commands=argv)
    if several:
        result["links"] = plan
    elif "before" in plan[0]:
        result.update(before=plan[0]["before"], after=plan[0]["after"])
    if changed:
        header = ", ".join(entry["name"] for entry in changed)
        result["diff"] = dict(before="".join(link_mtu.render(e["name"], e["before"]) for e in changed),
                              after="".join(link_mtu.render(e["name"], e["after"]) for e in changed),
                              before_header=header, after_header=header)
    failed = [entry["msg"] for entry in plan if "msg" in entry]
    if failed:
        gm.fail("link_mtu: %s" % "; ".join(failed), **result)
    gm.exit(**result)


if __name__ == "__main__":
    main()
