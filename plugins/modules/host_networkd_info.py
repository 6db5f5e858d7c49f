#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: host_networkd_info
short_description: Which .network file systemd-networkd applies to each interface
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Asks C(networkctl --json=short status) (systemd 250 and later) which C(.network) file configures each interface
    in O(interfaces); where networkctl has no JSON output, asks C(networkctl status <interface>) one by one.
  - Reads only. An interface no file configures, or one networkd does not know, gets an empty string.
options:
  interfaces:
    description: The interface names.
    type: list
    elements: str
    required: true
extends_documentation_fragment:
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
"""

EXAMPLES = r"""
- name: Find the .network files of the GPU NICs
  gpudirect.gcp.host_networkd_info:
    interfaces: [eth1, eth2]
  register: networkd
"""

RETURN = r"""
network_files:
  description: Each interface and the .network file that configures it (empty when none).
  returned: success
  type: dict
  sample: {"eth1": "/run/systemd/network/10-netplan-eth1.network", "eth2": ""}
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import host_networkd
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def main():
    gm = GpuModule(dict(interfaces=dict(type="list", elements="str", required=True)))
    names = gm.params["interfaces"]
    bad = [n for n in names if not n or "/" in n or n.strip() != n]
    if bad:
        gm.fail("host_networkd_info: interfaces must be interface names, got %s" % ", ".join(repr(b) for b in bad))
    networkctl = gm.which("networkctl")
    if not networkctl:
        gm.fail("host_networkd_info: networkctl (systemd-networkd) is not installed")
    rc, out, _err = gm.run([networkctl, "--json=short", "status"])
    files = None
    if rc == 0:
        try:
            known = host_networkd.parse_json_status(out)
            files = dict((n, known.get(n, "")) for n in names)
        except host_networkd.NetworkctlError as exc:
            gm.warn("host_networkd_info: %s; asking interface by interface" % exc)
    if files is None:
        files = {}
        for name in names:
            # rc is not 0 for an interface networkd does not know: that is "no file"
            _rc, out, _err = gm.run([networkctl, "status", "--no-pager", name])
            files[name] = host_networkd.parse_text_status(out)
    gm.exit(changed=False, network_files=files)


if __name__ == "__main__":
    main()
