# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that order nodes, plan their pings and group their NVLink domains by where they sit
(plugins/plugin_utils/plays/peer_plan.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from jinja2 import Undefined

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.host import topology
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import peer_plan


def _mapping(value, what):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise AnsibleFilterError("%s must be a mapping (a gce_topology), got %r" % (what, value))
    return value


def topology_sort(items, key="topology"):
    """Sort a list of mappings by the placement under ``key`` (cluster, block, sub-block, host, then name)."""
    if isinstance(items, Undefined):  # ansible-core < 2.19 hands an undefined value in: it stays undefined
        return items
    if not isinstance(items, (list, tuple)):
        raise AnsibleFilterError("topology_sort: expects a list of mappings, got %s" % type(items).__name__)
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise AnsibleFilterError("topology_sort: item %d is not a mapping: %r" % (i, item))
        _mapping(item.get(key), "topology_sort: item %d's %s" % (i, key))
    return sorted(items, key=lambda item: topology.sort_key(topology.normalize(item.get(key)), item.get("name", "")))


def nic_peer_plan(hosts, host, hostvars, sampled=2):
    """{nic: [addresses]} the host pings from each GPU NIC: ring neighbours plus ``sampled`` peers."""
    if not isinstance(hosts, (list, tuple)):
        raise AnsibleFilterError("_nic_peer_plan: expects the list of play hosts, got %s" % type(hosts).__name__)
    try:
        sampled = int(sampled)
    except (TypeError, ValueError):
        raise AnsibleFilterError("_nic_peer_plan: sampled must be a whole number, got %r" % (sampled,))
    if sampled < 0:
        raise AnsibleFilterError("_nic_peer_plan: sampled must be 0 or more, got %d" % sampled)
    hosts = [str(h) for h in hosts]
    placement, nics = {}, {}
    for name in hosts:
        hvars = hostvars[name] if name in hostvars else {}
        placement[name] = topology.normalize(_mapping(hvars.get("gce_topology"), "%s's gce_topology" % name))
        records = hvars.get("gpu_nics") or []
        if not isinstance(records, (list, tuple)) or not all(isinstance(r, dict) for r in records):
            raise AnsibleFilterError("_nic_peer_plan: %s's gpu_nics must be a list of NIC records" % name)
        nics[name] = [{"name": r.get("name"), "network": r.get("network"), "ip": r.get("ip"), "ipv6": r.get("ipv6")}
                      for r in records]
    return peer_plan.nic_peers(str(host), hosts, nics, placement, sampled)


def nvlink_domain_peers(hosts, host, hostvars):
    """The primary addresses (nic0) of the hosts in host's multi-node NVLink domain, host's own included,
    sorted; [] when host's family has no such domain or its placement is not known."""
    if not isinstance(hosts, (list, tuple)):
        raise AnsibleFilterError("nvlink_domain_peers: expects a list of hosts, got %s" % type(hosts).__name__)

    def domain(name):
        hvars = hostvars[name] if name in hostvars else {}
        family = hvars.get("gpu_family")
        if family not in families.FAMILIES:
            return None, None
        place = topology.normalize(_mapping(hvars.get("gce_topology"), "%s's gce_topology" % name))
        nics = hvars.get("gce_nics") or []
        address = nics[0].get("ip") if nics and isinstance(nics[0], dict) else None
        return families.nvlink_domain(family, place), address

    mine, _address = domain(str(host))
    if not mine:
        return []
    out = []
    for name in hosts:
        theirs, address = domain(str(name))
        if theirs == mine:
            if not address:
                raise AnsibleFilterError("nvlink_domain_peers: %s shares %s's NVLink domain but has no primary "
                                         "address (gce_nics[0].ip)" % (name, host))
            out.append(str(address))
    return sorted(set(out))


class FilterModule(object):
    def filters(self):
        return {"topology_sort": topology_sort, "_nic_peer_plan": nic_peer_plan,
                "nvlink_domain_peers": nvlink_domain_peers}
