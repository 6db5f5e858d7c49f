#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: network_backend_info
short_description: What manages a node's network - NetworkManager, systemd-networkd, netplan
version_added: 1.1.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Reads, in one module run, what the gpu_network role needs to choose the tool that persists the GPU NIC MTU -
    whether C(NetworkManager.service) and C(systemd-networkd.service) are running (one C(systemctl show) for
    both), the netplan configuration files and the netplan command, and where C(systemd-networkd-wait-online) is.
  - Reads only. A node without C(systemctl) has neither unit running.
options:
  netplan_dir:
    description: The netplan configuration directory; its C(*.yaml) and C(*.yml) files are listed.
    type: path
    default: /etc/netplan
  exclude:
    description: File names in O(netplan_dir) to leave out (the role's own file).
    type: list
    elements: str
    default: []
  netplan_command:
    description: The netplan command's path.
    type: path
    default: /usr/sbin/netplan
  wait_online_paths:
    description: Where to look for C(systemd-networkd-wait-online), in order.
    type: list
    elements: path
    default: [/usr/lib/systemd/systemd-networkd-wait-online, /lib/systemd/systemd-networkd-wait-online]
extends_documentation_fragment:
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
"""

EXAMPLES = r"""
- name: Find what manages the network
  gpudirect.gcp.network_backend_info:
    exclude: [90-gpudirect-gpu-mtu.yaml]
  register: found

- name: Say whether NetworkManager runs
  ansible.builtin.debug:
    msg: "{{ found.running.networkmanager }}"
"""

RETURN = r"""
units:
  description: The C(LoadState), C(ActiveState) and C(SubState) of each unit, by key (C(networkmanager), C(networkd)).
  returned: always
  type: dict
  sample: {"networkmanager": {"LoadState": "not-found", "ActiveState": "inactive", "SubState": "dead"},
           "networkd": {"LoadState": "loaded", "ActiveState": "active", "SubState": "running"}}
running:
  description: Whether each unit is active and running.
  returned: always
  type: dict
  sample: {"networkmanager": false, "networkd": true}
netplan_files:
  description: The netplan configuration files, sorted, without those in O(exclude).
  returned: always
  type: list
  elements: str
  sample: [/etc/netplan/50-cloud-init.yaml]
netplan_command:
  description: O(netplan_command) when it exists, else an empty string.
  returned: always
  type: str
  sample: /usr/sbin/netplan
wait_online:
  description: The first of O(wait_online_paths) that exists, else an empty string.
  returned: always
  type: str
  sample: /usr/lib/systemd/systemd-networkd-wait-online
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import network_backend
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def main():
    gm = GpuModule(dict(
        netplan_dir=dict(type="path", default="/etc/netplan"),
        exclude=dict(type="list", elements="str", default=[]),
        netplan_command=dict(type="path", default="/usr/sbin/netplan"),
        wait_online_paths=dict(type="list", elements="path",
                               default=["/usr/lib/systemd/systemd-networkd-wait-online",
                                        "/lib/systemd/systemd-networkd-wait-online"]),
    ))
    p = gm.params
    systemctl = gm.which("systemctl")
    text = ""
    if systemctl:
        rc, text, err = gm.run(network_backend.show_argv(systemctl))
        if rc != 0:
            gm.fail("network_backend_info: systemctl show failed: %s" % (err.strip() or "exit %d" % rc))
    states = network_backend.parse_show(text)
    gm.exit(changed=False, units=states, running=network_backend.running(states),
            netplan_files=network_backend.netplan_files(p["netplan_dir"], p["exclude"]),
            netplan_command=network_backend.first_existing([p["netplan_command"]]),
            wait_online=network_backend.first_existing(p["wait_online_paths"]))


if __name__ == "__main__":
    main()
