# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which peers each node pings from each GPU NIC: a bounded set, whatever the cluster's size.

Every node pinging every peer on every NIC at full MTU at once is N x (N-1) x
NICs pings; at 16 nodes of 8 NICs that overruns the nodes' send queues
(ENOBUFS) and every NIC looks broken.  Instead each node pings its two ring
neighbours in topology order (cluster, block, sub-block, host; nodes without
placement after them, by name) plus a few sampled peers: with topology, one in
another sub-block of its block and one in another block first, so every uplink
is crossed; the rest spread over the ring.  Samples come from a hash of the
node's name, so a plan is the same on every run.  Each node is then pinged by
about as many peers as it pings, which is what the NIC blame rules need (two or
more healthy peers per NIC).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import topology


def _hash(text):
    return int(hashlib.sha256(str(text).encode("utf-8")).hexdigest()[:12], 16)


def order(hosts, placement):
    """Host names in topology order."""
    return sorted(hosts, key=lambda h: topology.sort_key(placement.get(h) or {}, h))


def peers_of(host, hosts, placement, sampled=2):
    """The peers one host pings: ring neighbours, then up to ``sampled`` more, nearest levels first."""
    ring = order(list(dict.fromkeys(hosts)), placement)
    if host not in ring or len(ring) < 2:
        return []
    i = ring.index(host)
    chosen = []
    for peer in (ring[(i + 1) % len(ring)], ring[(i - 1) % len(ring)]):
        if peer != host and peer not in chosen:
            chosen.append(peer)
    others = [h for h in ring if h != host and h not in chosen]
    seed = _hash(host)
    mine = topology.normalize(placement.get(host))
    pools = []
    if mine:
        # one beyond the sub-block (inside the block), one beyond the block, then anywhere
        pools.append([h for h in others if topology.locality(mine, placement.get(h)) == topology.SAME_BLOCK])
        pools.append([h for h in others if topology.locality(mine, placement.get(h)) in (
            topology.SAME_CLUSTER, topology.FAR)])
    pools.append(others)
    for pool in pools:
        if len(chosen) >= 2 + sampled:
            break
        pool = [h for h in pool if h not in chosen]
        if pool:
            chosen.append(pool[seed % len(pool)])
    # fill what is left by spreading over the rest of the ring
    rest = [h for h in others if h not in chosen]
    step = 0
    while len(chosen) < 2 + sampled and rest:
        pick = rest[(seed + step * max(1, len(rest) // (sampled + 1))) % len(rest)]
        chosen.append(pick)
        rest.remove(pick)
        step += 1
    return chosen


def nic_peers(host, hosts, nics_of, placement, sampled=2):
    """{nic: [peer addresses]} for one host: for each of its GPU NICs (by API name, nic1..), the same NIC
    of its planned peers, on the same network.

    By NIC, not by network: A4X Max's eight RDMA NICs share one subnet, and each pings its own rail on the
    peers, not all eight. nics_of: host -> list of the inventory's gpu_nics records (name, network, ip, or
    ipv6 on an IPv6-only NIC)."""
    peers = peers_of(host, hosts, placement, sampled)
    out = {}
    for nic in nics_of.get(host) or []:
        name, network = nic.get("name"), nic.get("network")
        if not name or not network:
            continue
        addrs = []
        for peer in peers:
            for other in nics_of.get(peer) or []:
                address = other.get("ip") or other.get("ipv6")
                if other.get("name") == name and other.get("network") == network and address \
                        and address not in addrs:
                    addrs.append(address)
        out[name] = addrs
    return out
