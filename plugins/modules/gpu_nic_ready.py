#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gpu_nic_ready
short_description: Prove that every GPU NIC of a node is present, up, addressed and at the VPC MTU
version_added: 1.0.0
description:
  - Checks each NIC in O(nics) exists, is up, holds its expected IPv4 address (IPv6 address on an IPv6-only
    NIC) and has exactly the expected MTU.
  - An address the kernel still marks C(tentative) (IPv6 duplicate address detection has not finished), or
    marks C(dadfailed) (another host holds it), leaves its NIC not ready; a NIC that holds only its IPv6
    link-local address where an IPv6 address is expected is named as missing its IPv6 address.
  - With O(peers), also sends a full-size don't-fragment ping (C(ping -M do -s MTU-28)) out of the NIC to
    every peer address, which proves the whole path carries the MTU.
  - On the families whose transport is gIB it also checks that each NIC's RDMA device is ACTIVE and that its
    GID table holds the NIC's address (see O(rdma)). With O(rdma=auto), a node without RDMA devices gets
    C(no RDMA devices on this node) in RV(rdma) and a warning, not a failure.
  - "Fails with one message that names every bad NIC and why, for example C(eth3: mtu 1460, expected 8244)."
  - Never changes the node.
author:
  - gpudirect.gcp contributors (@gpudirect)
extends_documentation_fragment:
  - gpudirect.gcp.nics
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
options:
  nic_map:
    description:
      - The NICs to check as the NIC map records M(gpudirect.gcp.gpu_nic_facts) returns them
        (C(ansible_facts.gpu_nic_facts.gpu_nics)), passed as they come; the module reads C(iface) (else C(mac))
        to find each interface, C(expected_mtu), C(ip), C(ipv6) and C(nic), and ignores the record's other keys.
      - Exactly one of O(nic_map) and O(nics) is required.
    type: list
    elements: dict
    version_added: 1.1.0
  nics:
    description:
      - The NICs to check, one item each. Each needs O(nics[].name) or O(nics[].mac).
    type: list
    elements: dict
    suboptions:
      name:
        description: Guest interface name, for example C(eth1) or C(enp6s0).
        type: str
      mac:
        description: MAC address; used to find the interface when O(nics[].name) is not given.
        type: str
      mtu:
        description: The exact MTU the interface must have (the VPC MTU).
        type: int
      ip:
        description: An IPv4 address the interface must hold.
        type: str
      ipv6:
        description: An IPv6 address the interface must hold (an IPv6-only NIC, such as A4X Max's RDMA NICs).
        type: str
        version_added: 1.1.0
      nic:
        description: The NIC's API name (C(nic1)...), carried into the result.
        type: str
  peers:
    description:
      - Per NIC, addresses of other nodes on the same VPC to ping at full size with don't-fragment set.
      - Keys are interface names, NIC API names or MAC addresses as given in O(nic_map) or O(nics).
    type: dict
  timeout:
    description:
      - Seconds to keep checking until every NIC is ready. C(0) checks once.
    type: int
    default: 0
  poll_interval:
    description: Seconds between checks while O(timeout) has not run out.
    type: float
    default: 1.0
  family:
    description:
      - The GPU machine family (C(gpu_family) host variable). RDMA checks apply to gIB families only.
    type: str
notes:
  - Peer pings need C(ping) from iputils. Keep the peer lists short on large clusters (the
    readiness phase plans a bounded set); a node that cannot send a ping retries it.
  - IP addresses are read with C(ip -j addr show).
seealso:
  - module: gpudirect.gcp.gpu_nic_facts
"""

EXAMPLES = r"""
- name: Every GPU NIC at the VPC MTU with its address
  gpudirect.gcp.gpu_nic_ready:
    nics:
      - name: eth1
        mtu: 8244
        ip: 10.0.1.2
      - mac: "42:01:0a:00:02:02"
        mtu: 8244
    timeout: 60

- name: Map the inventory's GPU NICs, then check them and ping the other nodes on each VPC
  gpudirect.gcp.gpu_nic_facts:
    gpu_nics: "{{ gpu_nics }}"

- name: Check at the VPC MTU, pinging peers at full size
  gpudirect.gcp.gpu_nic_ready:
    nics:
      - name: eth1
        mtu: 8244
      - name: eth2
        mtu: 8244
    peers:
      eth1: [10.0.1.3]
      eth2: [10.0.2.3]
    family: a3-mega
    timeout: 30
"""

RETURN = r"""
ready:
  description: Whether every NIC passed every check.
  returned: always
  type: bool
nics:
  description: One result per NIC in O(nics) order.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: The interface name, or what O(nics) gave when no interface matched.
      type: str
    iface:
      description: The guest interface, null when none matched.
      type: str
    ready:
      description: Whether this NIC passed every check.
      type: bool
    problems:
      description: What is wrong, for example C(mtu 1460, expected 8244) or C(down (operstate down)).
      type: list
      elements: str
    local_problems:
      description:
        - The part of C(problems) the NIC's own state shows (missing, down, address, MTU, RDMA, pings it could
          not send), without the failed pings. The pings run only when this is empty, so a failed path to a peer whose own NIC is
          healthy can be told apart from a NIC that is itself wrong.
      type: list
      elements: str
    up:
      description: Whether the interface is up (administratively up, with carrier); false when none matched.
      type: bool
      version_added: 1.0.0
    mtu:
      description: The interface's MTU.
      type: int
    expected_mtu:
      description: The MTU it must have.
      type: int
    ipv4:
      description: The interface's IPv4 addresses.
      type: list
      elements: str
    ipv6:
      description: The interface's global IPv6 addresses.
      type: list
      elements: str
      version_added: 1.1.0
    peers:
      description:
        - Each ping with C(address), C(ok), C(argv) and C(tries).
        - A ping this node could not send (C(No buffer space available) and the like) is retried; if it never
          left, C(ok) is null and C(local_error) says why, since it proves nothing about the path.
      type: list
      elements: dict
  sample: [{"name": "eth1", "iface": "eth1", "ready": false, "problems": ["mtu 1460, expected 8244"],
            "mtu": 1460, "expected_mtu": 8244, "ipv4": ["10.0.1.2"], "peers": []}]
rdma:
  description: The RDMA check. C(checked) false with a C(reason) says why it did not run
    (for example C(no RDMA devices on this node)).
  returned: always
  type: dict
  sample: {"checked": false, "reason": "no RDMA devices on this node", "devices": []}
elapsed:
  description: Seconds spent checking.
  returned: always
  type: float
"""

import socket
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule, ModuleInputError
from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import nic_ready
from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import nic_sysfs
from ansible_collections.gpudirect.gcp.plugins.module_utils.nic.nic_map import norm_mac


def argument_spec():
    return dict(
        nic_map=dict(type="list", elements="dict"),
        nics=dict(type="list", elements="dict", options=dict(
            name=dict(type="str"), mac=dict(type="str"), mtu=dict(type="int"),
            ip=dict(type="str"), ipv6=dict(type="str"), nic=dict(type="str"))),
        peers=dict(type="dict"),
        timeout=dict(type="int", default=0),
        poll_interval=dict(type="float", default=1.0),
        family=dict(type="str"),
        rdma=dict(type="str", choices=["auto", "required", "skip"], default="auto"),
    )


def validate(params):
    params["peers"] = params["peers"] or {}
    if params["family"] and params["family"] not in families.FAMILIES:
        raise ModuleInputError("family: unknown GPU family %r; known: %s"
                               % (params["family"], ", ".join(families.family_names())))
    if params["nic_map"] is not None:
        records = [dict(item) for item in params["nic_map"]]
        for index, item in enumerate(records):
            if not (item.get("iface") or item.get("mac")):
                raise ModuleInputError("nic_map[%d] (%s) has neither iface nor mac"
                                       % (index, item.get("nic") or "no nic name"))
    else:
        records = []
        for index, item in enumerate(params["nics"]):
            if not (item.get("name") or item.get("mac")):
                raise ModuleInputError("nics[%d] has neither name nor mac" % index)
            records.append(nic_ready.from_item(item))
    # one shape from here on: the NIC map's record
    params["records"] = records
    if params["timeout"] < 0:
        raise ModuleInputError("timeout must be 0 or more, got %d" % params["timeout"])
    for key, addrs in params["peers"].items():
        if not isinstance(addrs, list) or not all(isinstance(a, str) for a in addrs):
            raise ModuleInputError("peers[%s] must be a list of addresses" % key)
    if params["peers"] and not any(i.get("expected_mtu") for i in records):
        raise ModuleInputError("peers need the NICs' mtu to size the ping")


def peers_for(item, result, peers):
    for key in (result["iface"], item.get("iface"), item.get("nic"), norm_mac(item.get("mac"))):
        if key and key in peers:
            return peers[key]
    for key, value in peers.items():
        if norm_mac(key) and norm_mac(key) == result["mac"]:
            return value
    return []


def check_once(gm, reader, ping, sleep=time.sleep):
    params = gm.params
    interfaces = nic_sysfs.read_interfaces(reader, gm.run, gm.which("ip"))
    return nic_ready.check_node(params["records"], interfaces, reader.rdma_devices(),
                                nic_ready.rdma_mode(params["rdma"], params["family"]), gm.run, ping,
                                lambda item, res: peers_for(item, res, params["peers"]), sleep=sleep)


def run_module(root="/", sleep=time.sleep, clock=time.time):
    gm = GpuModule(argument_spec(), required_one_of=[("nic_map", "nics")], mutually_exclusive=[("nic_map", "nics")])
    try:
        validate(gm.params)
        reader = nic_sysfs.SysfsReader(root)
        ping = gm.which("ping") if gm.params["peers"] else None
        start = clock()
        while True:
            results, rdma = check_once(gm, reader, ping, sleep)
            if all(r["ready"] for r in results) or clock() - start >= gm.params["timeout"]:
                break
            sleep(gm.params["poll_interval"])
    except (ModuleInputError, ValueError) as exc:
        gm.fail(str(exc))
    elapsed = round(clock() - start, 2)
    if rdma["reason"] == nic_ready.NO_RDMA and not rdma["checked"]:
        gm.warn("RDMA check skipped: %s" % nic_ready.NO_RDMA)
    msg = nic_ready.summary(results, socket.gethostname())
    out = dict(changed=False, ready=msg is None, nics=results, rdma=rdma, elapsed=elapsed)
    if msg:
        gm.fail(msg, **out)
    gm.exit(msg="%d GPU NICs ready" % len(results), **out)


def main():
    run_module()


if __name__ == "__main__":
    main()
