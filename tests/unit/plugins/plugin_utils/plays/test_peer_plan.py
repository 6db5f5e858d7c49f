# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.filter import topology as topo_filter
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import peer_plan


def cluster(n, per_sub=4, subs_per_block=2, placed=True):
    hosts = ["node%03d" % i for i in range(n)]
    placement = {}
    for i, h in enumerate(hosts):
        sub = i // per_sub
        placement[h] = {"cluster": "c", "block": "b%d" % (sub // subs_per_block), "subblock": "s%d" % sub,
                        "host": "h%d" % i} if placed else {}
    return hosts, placement


@pytest.mark.parametrize("n", [2, 3, 4, 16, 64, 1024])
def test_every_node_pings_a_bounded_set_and_is_pinged_by_a_few(n):
    hosts, placement = cluster(n)
    plan = dict((h, peer_plan.peers_of(h, hosts, placement)) for h in hosts)
    incoming = dict((h, 0) for h in hosts)
    for h, peers in plan.items():
        assert h not in peers and len(peers) == len(set(peers)) <= 4
        assert len(peers) == min(4, n - 1)
        for p in peers:
            incoming[p] += 1
    # the NIC blame rules need two or more healthy peers on each NIC's paths
    assert all(len(set(plan[h]) | set(p for p in hosts if h in plan[p])) >= min(2, n - 1) for h in hosts)
    assert max(incoming.values()) <= 12


def test_samples_cross_the_sub_block_and_the_block_and_are_stable():
    hosts, placement = cluster(32)
    peers = peer_plan.peers_of("node005", hosts, placement)
    assert peers[:2] == ["node006", "node004"]
    subs = [placement[p]["subblock"] for p in peers[2:]]
    blocks = [placement[p]["block"] for p in peers[2:]]
    assert placement["node005"]["subblock"] not in subs
    assert blocks[0] == "b0" and blocks[1] != "b0"
    assert peers == peer_plan.peers_of("node005", list(reversed(hosts)), placement)


def test_ring_follows_topology_not_inventory_order():
    hosts = ["z", "a", "m"]
    placement = {"z": {"block": "b1", "subblock": "s1"}, "a": {"block": "b2", "subblock": "s1"}, "m": {}}
    assert peer_plan.order(hosts, placement) == ["z", "a", "m"]


def test_nic_peers_by_nic_and_filter_checks_input():
    hostvars = dict(("n%d" % i, {"gpu_nics": [{"name": "nic1", "network": "net-1", "ip": "10.1.0.%d" % i},
                                              {"name": "nic2", "network": "net-2", "ip": "10.2.0.%d" % i}],
                                 "gce_topology": {}}) for i in range(6))
    plan = topo_filter.nic_peer_plan(sorted(hostvars), "n0", hostvars, sampled=1)
    assert sorted(plan) == ["nic1", "nic2"] and len(plan["nic1"]) == 3
    assert all(a.startswith("10.2.") for a in plan["nic2"])
    assert "10.1.0.0" not in plan["nic1"]
    with pytest.raises(AnsibleFilterError, match="n1's gce_topology must be a mapping"):
        topo_filter.nic_peer_plan(["n0", "n1"], "n0", {"n0": {}, "n1": {"gce_topology": "b1/s1"}})
    with pytest.raises(AnsibleFilterError, match="sampled must be 0 or more"):
        topo_filter.nic_peer_plan(["n0"], "n0", {}, sampled=-1)


def test_topology_sort_orders_by_placement_then_name():
    items = [{"name": "c", "topology": {}}, {"name": "b", "topology": {"block": "b2", "subBlock": "s"}},
             {"name": "a", "topology": {"block": "b1", "subblock": "s"}}]
    assert [i["name"] for i in topo_filter.topology_sort(items)] == ["a", "b", "c"]
    with pytest.raises(AnsibleFilterError, match="item 0's topology must be a mapping"):
        topo_filter.topology_sort([{"name": "x", "topology": "b1"}])


def test_topology_sort_leaves_an_undefined_value_undefined():
    """ansible-core before 2.19 calls a filter with an undefined value: it must stay an undefined-variable
    error (which names the variable), not become a type error of the filter."""
    from jinja2 import StrictUndefined, UndefinedError
    out = topo_filter.topology_sort(StrictUndefined(name="_placed"))
    with pytest.raises(UndefinedError, match="_placed"):
        list(out)


def test_nics_that_share_one_subnet_each_ping_their_own_rail_on_the_peers():
    # A4X Max: eight IPv6-only RDMA NICs on one subnet of the RoCE VPC
    def nics(i):
        return [{"name": "nic%d" % (2 + k), "network": "rdma-net", "ip": None, "ipv6": "fd20::%d:%d" % (i, k)}
                for k in range(8)]
    hostvars = dict(("n%d" % i, {"gpu_nics": nics(i), "gce_topology": {}}) for i in range(3))
    plan = topo_filter.nic_peer_plan(sorted(hostvars), "n0", hostvars, sampled=0)
    assert sorted(plan) == ["nic%d" % k for k in range(2, 10)]
    assert plan["nic2"] == ["fd20::1:0", "fd20::2:0"] and plan["nic9"] == ["fd20::1:7", "fd20::2:7"]
