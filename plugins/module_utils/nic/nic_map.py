# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Map the NICs a VM should have (inventory or metadata server) to guest interfaces.

Guest interface names differ by image (eth1 on COS, enp6s0 on Ubuntu, eth1 in
the sandbox), so names are never guessed: a NIC is found by its MAC address,
and when the MAC is unknown, by its IPv4 address, or its IPv6 address where the
NIC has no IPv4 (A4X Max's IPv6-only RDMA NICs).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress

METADATA_NICS_URL = ("http://metadata.google.internal/computeMetadata/v1/instance/"
                     "network-interfaces/?recursive=true")


def norm_mac(mac):
    return mac.strip().lower() if mac else None


def metadata_nics(data):
    """The metadata server's network-interfaces list -> gce_nics-like entries.

    The metadata server lists NICs in API order (nic0 first), with ``mac``,
    ``ip``, ``mtu`` and ``network`` (projects/N/networks/NAME).
    """
    if not isinstance(data, list):
        raise ValueError("metadata network-interfaces is not a list")
    out = []
    for index, item in enumerate(data):
        if not isinstance(item, dict):
            raise ValueError("metadata network-interfaces entry %d is not an object" % index)
        network = item.get("network") or ""
        out.append({
            "name": "nic%d" % index,
            "mac": norm_mac(item.get("mac")),
            "ip": item.get("ip"),
            "mtu": item.get("mtu"),
            "network": network.rstrip("/").rsplit("/", 1)[-1] or None,
        })
    return out


def select(nics, indexes):
    """The entries at the given API indexes (e.g. the family's GPU NICs)."""
    return [nics[i] for i in indexes if i < len(nics)]


def norm_ipv6(address):
    """An IPv6 address in its one canonical text form (fd20:0:0::1 and fd20::1 are one), or None."""
    if not address:
        return None
    try:
        return str(ipaddress.IPv6Address(str(address).split("/", 1)[0].strip()))
    except ValueError:
        return None


def map_nics(expected, interfaces):
    """Match expected NICs to guest interfaces: MAC first, else IPv4, else IPv6.

    expected: list of {name (nic1..), mac, ip, ipv6, mtu, ...}
    interfaces: SysfsReader.interfaces() output.
    Returns one entry per expected NIC, in the given order, with ``iface``
    (None when nothing matched) and ``matched_by`` (mac, ip, ipv6 or None).
    """
    by_mac = dict((i["mac"], n) for n, i in interfaces.items() if i.get("mac"))
    by_ip = {}
    by_ipv6 = {}
    for name, info in interfaces.items():
        for addr in info.get("ipv4", []):
            by_ip.setdefault(addr, name)
        for addr in info.get("ipv6", []):
            by_ipv6.setdefault(norm_ipv6(addr), name)
    out = []
    taken = set()
    for nic in expected:
        mac = norm_mac(nic.get("mac"))
        ip = nic.get("ip")
        ipv6 = norm_ipv6(nic.get("ipv6"))
        iface, how = None, None
        if mac and by_mac.get(mac) and by_mac[mac] not in taken:
            iface, how = by_mac[mac], "mac"
        elif ip and by_ip.get(ip) and by_ip[ip] not in taken:
            iface, how = by_ip[ip], "ip"
        elif ipv6 and by_ipv6.get(ipv6) and by_ipv6[ipv6] not in taken:
            iface, how = by_ipv6[ipv6], "ipv6"
        if iface:
            taken.add(iface)
        cur = interfaces.get(iface) or {}
        out.append({
            "nic": nic.get("name"),
            "network": nic.get("network"),
            "mac": mac or cur.get("mac"),
            "ip": ip,
            "ipv6": ipv6,
            "expected_mtu": nic.get("mtu"),
            "iface": iface,
            "matched_by": how,
            "mtu": cur.get("mtu"),
        })
    return out


# what a NIC's MTU can be (IPv4's minimum, GCE's jumbo frames with headroom)
MTU_RANGE = (576, 9216)


def mtu_problem(nic):
    """Why a GPU NIC record's mtu cannot be configured, or None. The value is shown as given."""
    mtu = nic.get("mtu")
    if mtu is None:
        return "mtu is null"
    try:
        value = int(mtu)
    except (TypeError, ValueError):
        return "mtu is %r" % (mtu,)
    if isinstance(mtu, bool) or not MTU_RANGE[0] <= value <= MTU_RANGE[1]:
        return "mtu %s is outside %d-%d" % (mtu, MTU_RANGE[0], MTU_RANGE[1])
    return None
