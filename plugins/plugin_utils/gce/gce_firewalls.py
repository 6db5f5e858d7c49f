# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Do a VPC's firewall rules let the phases' traffic through between the nodes?

VPC firewalls deny every ingress that no rule allows (the implied rule), and a
rule applies by network, direction, source and protocol; among the rules that
match, the one with the lowest priority number wins, a deny over an allow of
the same priority.  This module judges, for each network the nodes share, each
kind of traffic the phases need, from every node's address on that network.

Target and source tags or service accounts name VMs by attributes the
inventory does not carry: such a rule is taken to apply (a rule that may let
the traffic through is never reported as missing).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress

from ansible_collections.gpudirect.gcp.plugins.module_utils import families

ALL_PORTS = (0, 65535)
# What the phases send between the nodes, per kind of network.
# control: nic0's VPC, where mpirun reaches the other nodes over SSH and MPI
# and NCCL bootstrap over TCP on ports they pick at run time.
# gpu: the GPU VPCs of TCPX/TCPXO, where the readiness phase pings at full
# MTU and GPUDirect-TCPX/TCPXO carry the data over TCP.
NEEDS = {
    "control": [("tcp", (22, 22), "SSH between the nodes (mpirun)"),
                ("tcp", ALL_PORTS, "MPI and NCCL bootstrap on ports chosen at run time")],
    "gpu": [("icmp", None, "the readiness phase's full-MTU pings"),
            ("tcp", ALL_PORTS, "GPUDirect data over TCP")],
}


def _name(url):
    return (url or "").rstrip("/").rsplit("/", 1)[-1]


def _ports(spec):
    """'22' or '1000-2000' -> (low, high)."""
    low, _sep, high = str(spec).partition("-")
    return int(low), int(high or low)


def _covers(entry, protocol, ports):
    """(covers fully, overlaps) of one allowed/denied entry for a protocol and port range."""
    proto = str(entry.get("IPProtocol", "")).lower()
    if proto not in ("all", protocol):
        return False, False
    if ports is None or proto == "all" or not entry.get("ports"):
        return True, True
    ranges = [_ports(p) for p in entry["ports"]]
    overlaps = any(lo <= ports[1] and hi >= ports[0] for lo, hi in ranges)
    merged, covered_to = sorted(ranges), ports[0] - 1
    for lo, hi in merged:
        if lo > covered_to + 1:
            break
        covered_to = max(covered_to, hi)
    return covered_to >= ports[1], overlaps


def _from(rule, address):
    if rule.get("sourceTags") or rule.get("sourceServiceAccounts"):
        return True
    for cidr in rule.get("sourceRanges") or []:
        try:
            if ipaddress.ip_address(address) in ipaddress.ip_network(cidr, strict=False):
                return True
        except ValueError:
            continue
    return False


def verdict(rules, network, address, protocol, ports):
    """The rule that decides this traffic from address, or None (the implied deny)."""
    best = None
    for rule in rules:
        if rule.get("disabled") or (rule.get("direction") or "INGRESS") != "INGRESS":
            continue
        if _name(rule.get("network")) != network or not _from(rule, address):
            continue
        allow = any(_covers(e, protocol, ports)[0] for e in rule.get("allowed") or [])
        deny = any(_covers(e, protocol, ports)[1] for e in rule.get("denied") or [])
        if not (allow or deny):
            continue
        key = (int(rule.get("priority", 1000)), 0 if deny else 1)
        if best is None or key < best[0]:
            best = (key, rule, deny)
    return None if best is None else {"rule": best[1].get("name"), "allowed": not best[2]}


def _what(protocol, ports):
    if ports is None:
        return protocol.upper()
    if ports == ALL_PORTS:
        return "all %s ports" % protocol.upper()
    return "%s %s" % (protocol.upper(), ports[0] if ports[0] == ports[1] else "%d-%d" % ports)


def networks_of(family, nodes):
    """{network name: {"kind": control|gpu, "addresses": [...]}} from the inventory's NIC records.

    nodes: [{"nics": [{name, network, ip}], "gpu_nics": [...]}]; RDMA VPCs (gIB) are not judged:
    their traffic is RoCE on the RDMA NICs, which the phases do not ping.
    """
    transport = families.FAMILIES[family]["transport"]
    out = {}
    for node in nodes:
        nics = node.get("nics") or []
        gpu = set(_name(n.get("network")) for n in node.get("gpu_nics") or [])
        for index, nic in enumerate(nics):
            net = _name(nic.get("network"))
            if not net or not nic.get("ip"):
                continue
            if index == 0:
                kind = "control"
            elif net in gpu and transport in ("tcpx", "tcpxo"):
                kind = "gpu"
            else:
                continue
            entry = out.setdefault(net, {"kind": kind, "addresses": []})
            entry["addresses"].append(nic["ip"])
    return out


def judge(family, nodes, rules):
    """One line per network and kind of traffic its rules do not let through between the nodes."""
    lines = []
    for net, entry in sorted(networks_of(family, nodes).items()):
        for protocol, ports, why in NEEDS[entry["kind"]]:
            blocked = {}
            for address in entry["addresses"]:
                found = verdict(rules, net, address, protocol, ports)
                if not (found and found["allowed"]):
                    blocked.setdefault(found["rule"] if found else None, []).append(address)
            for rule, addresses in sorted(blocked.items(), key=lambda kv: kv[0] or ""):
                cause = ("denied by rule %s" % rule) if rule else "no ingress rule allows it"
                shown = ", ".join(addresses[:4]) + (" and %d more" % (len(addresses) - 4) if len(addresses) > 4 else "")
                lines.append("firewall of network %s: %s from the nodes' addresses (%s) is blocked, %s; %s needs it: "
                             "add an ingress rule on %s allowing %s from the network's subnet ranges"
                             % (net, _what(protocol, ports), shown, cause, why, net, _what(protocol, ports)))
    return lines
