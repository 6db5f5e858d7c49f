#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_nic_facts
short_description: Read a GPU node's interfaces, RDMA devices and A3 Mega devices, and map its GPU NICs
version_added: 1.0.0
description:
  - Reads every Ethernet interface of the node from C(/sys/class/net) (name, MAC, MTU, state, IPv4
    addresses, driver, PCI address, speed when known).
  - When C(/sys/class/infiniband) exists, reads every RDMA device with its netdev, port state and GID table.
  - Reports the A3 Mega devices C(/dev/aperture_devices) (its entries) and C(/dev/dmabuf_import_helper).
  - Maps the NICs the VM should have to the guest's interfaces by MAC address, else by IPv4 address, so
    later steps use the node's real interface names instead of guessing them from the image.
    The expected NICs come from O(gpu_nics) (the C(gpu_nics) host variable of the inventory), or, when
    that is not given, from the GCE metadata server.
  - Never changes the node.
author:
  - gpudirect.gcp contributors (@gpudirect)
extends_documentation_fragment:
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
attributes:
  facts:
    support: full
    description: Sets C(ansible_facts.gpu_nic_facts).
options:
  gpu_nics:
    description:
      - The GPU NICs the VM should have, in GPU-NIC order, as in the C(gpu_nics) inventory host variable.
      - Each item needs C(mac), C(ip) or C(ipv6) (an IPv6-only NIC), and C(mtu) between 576 and 9216 (a GPU NIC
        without its VPC MTU is an error naming the item, the node and the network); C(name) (C(nic1)...), C(mtu)
        and C(network) are carried into the result.
      - When omitted, the NICs are read from the metadata server (see O(use_metadata)).
    type: list
    elements: dict
  all_nics:
    description:
      - Every NIC of the VM in API order, as in the C(gce_nics) inventory host variable.
      - The ones not in O(gpu_nics) (matched by C(name)) are mapped too and returned as RV(ansible_facts.gpu_nic_facts.host_ifaces).
    type: list
    elements: dict
  family:
    description:
      - The GPU machine family (C(gpu_family) host variable). With the metadata server as source it says
        which NICs carry GPU traffic; without it every NIC but nic0 counts as a GPU NIC.
    type: str
  use_metadata:
    description: Ask the metadata server for the NICs when O(gpu_nics) is not given.
    type: bool
    default: true
  metadata_url:
    description: The metadata server's recursive C(network-interfaces) URL.
    type: str
    default: http://metadata.google.internal/computeMetadata/v1/instance/network-interfaces/?recursive=true
  metadata_timeout:
    description: Seconds to wait for the metadata server.
    type: int
    default: 3
notes:
  - IP addresses are not in sysfs; they are read with C(ip -j addr show) (iproute2).
seealso:
  - module: gpudirect.gcp.gpu_nic_ready
"""

EXAMPLES = r"""
- name: Read the node's NICs and map the inventory's GPU NICs to interfaces
  gpudirect.gcp.gpu_nic_facts:
    gpu_nics: "{{ gpu_nics }}"
    all_nics: "{{ gce_nics }}"
    family: "{{ gpu_family }}"

- name: Show the GPU interfaces in GPU-NIC order
  ansible.builtin.debug:
    msg: "{{ ansible_facts.gpu_nic_facts.gpu_ifaces }}"

- name: Without an inventory, ask the metadata server
  gpudirect.gcp.gpu_nic_facts:
    family: a3-mega
"""

RETURN = r"""
ansible_facts:
  description:
    - Facts about the node's GPU NICs, which later tasks and roles read. Only the mapping is a fact, since
      Ansible copies a host's facts into the variables of every later task on it; what was read to make the
      mapping is returned beside it (RV(interfaces), RV(rdma_devices)...).
  returned: always
  type: dict
  contains:
    gpu_nic_facts:
      description: The expected NICs and the interfaces they mapped to.
      returned: always
      type: dict
      contains:
        source:
          description: Where the expected NICs came from, C(inventory), C(metadata) or C(none).
          type: str
        gpu_nics:
          description: One entry per expected GPU NIC, with C(nic), C(network), C(mac), C(ip), C(ipv6),
            C(expected_mtu), C(iface) (null when not found), C(matched_by) (C(mac), C(ip), C(ipv6) or null) and
            C(mtu).
          type: list
          elements: dict
        gpu_ifaces:
          description: The guest interface names of the GPU NICs that were found, in GPU-NIC order.
          type: list
          elements: str
          sample: ["eth1", "eth2"]
        host_nics:
          description: Like C(gpu_nics) for the other NICs of O(all_nics).
          type: list
          elements: dict
        host_ifaces:
          description: The guest interface names of the host (non-GPU) NICs, control NIC first.
          type: list
          elements: str
        unmatched:
          description: Names of expected NICs no interface matched.
          type: list
          elements: str
interfaces:
  description:
    - Ethernet interfaces keyed by name, each with C(name), C(mac), C(mtu), C(operstate), C(admin_up),
      C(carrier), C(ipv4) (addresses), C(ipv4_cidrs), C(ipv6) (global addresses), C(driver), C(pci_address) and
      C(speed_mbps) (null when unknown).
    - C(ipv6_link_local) lists the interface's IPv6 link-local (C(fe80::/10)) addresses; C(address_states) maps
      each address that is not ready yet to C(tentative) (IPv6 duplicate address detection has not finished)
      or C(dadfailed) (another host holds it), and is empty when every address is ready.
  returned: always
  type: dict
  sample: {"eth1": {"name": "eth1", "mac": "42:01:0a:00:01:02", "mtu": 8244, "operstate": "up",
           "admin_up": true, "carrier": true, "ipv4": ["10.0.1.2"], "ipv4_cidrs": ["10.0.1.2/24"], "ipv6": [],
           "ipv6_link_local": ["fe80::4001:aff:fe00:102"], "address_states": {},
           "driver": "gve", "pci_address": "0000:06:00.0", "speed_mbps": 200000, "type": 1}}
  version_added: 1.1.0
rdma_present:
  description: Whether C(/sys/class/infiniband) holds any device.
  returned: always
  type: bool
  version_added: 1.1.0
rdma_devices:
  description: RDMA devices keyed by name with C(netdevs) and C(ports) (C(state), C(gids) list of
    C(index), C(gid), C(ipv4), C(type), C(netdev)).
  returned: always
  type: dict
  version_added: 1.1.0
aperture_devices:
  description: Entries of C(/dev/aperture_devices) (A3 Mega).
  returned: always
  type: list
  elements: str
  version_added: 1.1.0
dmabuf_import_helper:
  description: Whether C(/dev/dmabuf_import_helper) exists (A3 Mega).
  returned: always
  type: bool
  version_added: 1.1.0
"""

import json
import socket

from ansible.module_utils.urls import fetch_url
from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule, ModuleInputError
from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import nic_map
from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import nic_sysfs


def argument_spec():
    return dict(
        gpu_nics=dict(type="list", elements="dict"),
        all_nics=dict(type="list", elements="dict"),
        family=dict(type="str"),
        use_metadata=dict(type="bool", default=True),
        metadata_url=dict(type="str", default=nic_map.METADATA_NICS_URL),
        metadata_timeout=dict(type="int", default=3),
    )


def fetch_metadata_nics(gm):
    resp, info = fetch_url(gm.module, gm.params["metadata_url"], headers={"Metadata-Flavor": "Google"},
                           timeout=gm.params["metadata_timeout"])
    if resp is None or info.get("status") != 200:
        return None, "metadata server %s: %s" % (gm.params["metadata_url"], info.get("msg", "no answer"))
    try:
        return nic_map.metadata_nics(json.loads(resp.read())), None
    except ValueError as exc:
        return None, "metadata server answer: %s" % exc


def check_family(name):
    if name and name not in families.FAMILIES:
        raise ModuleInputError("family: unknown GPU family %r; known: %s" % (name, ", ".join(families.family_names())))


def expected_nics(gm):
    """(gpu_nics, host_nics, source) from the options or the metadata server."""
    p = gm.params
    check_family(p["family"])
    for opt in ("gpu_nics", "all_nics"):
        for index, nic in enumerate(p[opt] or []):
            if not (nic.get("mac") or nic.get("ip") or nic.get("ipv6")):
                raise ModuleInputError("%s[%d] (%s) has neither mac nor ip nor ipv6, so it cannot be matched"
                                       % (opt, index, nic.get("name", "unnamed")))
    for index, nic in enumerate(p["gpu_nics"] or []):
        problem = nic_map.mtu_problem(nic)
        if problem:
            # an MTU the templates would render as "MTUBytes=" stops here, naming the record
            raise ModuleInputError("gpu_nics[%d] (%s) on %s: %s; the inventory knows no VPC MTU for network %s "
                                   "(can the inventory read that network?)"
                                   % (index, nic.get("name", "unnamed"), socket.gethostname(), problem,
                                      nic.get("network") or "?"))
    if p["gpu_nics"] is not None:
        gpu_names = set(n.get("name") for n in p["gpu_nics"])
        host = [n for n in (p["all_nics"] or []) if n.get("name") not in gpu_names]
        return list(p["gpu_nics"]), host, "inventory"
    if not p["use_metadata"]:
        return [], [], "none"
    nics, err = fetch_metadata_nics(gm)
    if nics is None:
        gm.warn("gpu_nics not given and the metadata server did not answer, so no NIC is mapped (%s)" % err)
        return [], [], "none"
    if p["family"]:
        fam = families.FAMILIES[p["family"]]["nics"]
        return (nic_map.select(nics, fam["gpu_indexes"]), nic_map.select(nics, fam["host_indexes"]), "metadata")
    return nics[1:], nics[:1], "metadata"


def gather(gm, root="/"):
    reader = nic_sysfs.SysfsReader(root)
    try:
        interfaces = nic_sysfs.read_interfaces(reader, gm.run, gm.which("ip"))
    except ValueError as exc:
        raise ModuleInputError(str(exc))
    gpu, host, source = expected_nics(gm)
    gpu_map = nic_map.map_nics(gpu, interfaces)
    # host NICs may not take an interface a GPU NIC already matched
    free = dict((k, v) for k, v in interfaces.items() if k not in set(m["iface"] for m in gpu_map))
    host_map = nic_map.map_nics(host, free)
    return {
        "interfaces": interfaces,
        "rdma_present": reader.rdma_present(),
        "rdma_devices": reader.rdma_devices(),
        "aperture_devices": reader.aperture_devices(),
        "dmabuf_import_helper": reader.device_exists("/dev/dmabuf_import_helper"),
        "source": source,
        "gpu_nics": gpu_map,
        "gpu_ifaces": [m["iface"] for m in gpu_map if m["iface"]],
        "host_nics": host_map,
        "host_ifaces": [m["iface"] for m in host_map if m["iface"]],
        "unmatched": [m["nic"] or m["mac"] or m["ip"] or m["ipv6"] for m in gpu_map + host_map if not m["iface"]],
    }


# what the module read, returned beside the mapping rather than kept as a host fact (see RETURN)
READ_ONLY_KEYS = ("interfaces", "rdma_present", "rdma_devices", "aperture_devices", "dmabuf_import_helper")


def run_module(root="/"):
    gm = GpuModule(argument_spec())
    try:
        facts = gather(gm, root)
    except ModuleInputError as exc:
        gm.fail(str(exc))
    read = dict((key, facts.pop(key)) for key in READ_ONLY_KEYS)
    gm.exit(changed=False, ansible_facts={"gpu_nic_facts": facts}, **read)


def main():
    run_module()


if __name__ == "__main__":
    main()
