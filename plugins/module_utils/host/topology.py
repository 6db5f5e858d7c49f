# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a VM sits: cluster, block, sub-block and host.

One shape for every source: the Compute API's resourceStatus (the inventory),
the metadata server's physical_host attributes (on the node), and whatever a
static inventory gives.  Pure functions, so the inventory, the modules and the
controller-side planners all read topology the same way.

Facts: the structured field is resourceStatus.physicalHostTopology{cluster,
block, subblock, host}; Google's docs spell the sub-block key subBlock and the
generated clients subblock, so keys are read without regard to case.  The flat
form resourceStatus.physicalHost / metadata physical_host is /block/sub-block/host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

LEVELS = ("cluster", "block", "subblock", "host")
# how two VMs relate, nearest first
SAME_HOST, SAME_SUBBLOCK, SAME_BLOCK, SAME_CLUSTER, FAR, UNKNOWN = (
    "host", "subblock", "block", "cluster", "far", "unknown")
_ALIASES = {"cluster": "cluster", "block": "block", "subblock": "subblock", "sub_block": "subblock",
            "host": "host"}


def _text(value):
    if value is None or isinstance(value, (dict, list, bool)):
        return None
    text = str(value).strip()
    return text or None


def normalize(raw):
    """A topology mapping with the four levels as non-empty strings; {} when it places nothing.

    Keys are matched without regard to case (subBlock, subblock, sub_block); a
    mapping with a cluster only places nothing below it, so it counts as empty."""
    if not isinstance(raw, dict):
        return {}
    out = {}
    for key, value in raw.items():
        level = _ALIASES.get(str(key).lower())
        text = _text(value)
        if level and text and level not in out:
            out[level] = text
    if not any(out.get(k) for k in ("block", "subblock", "host")):
        return {}
    return out


def parse_physical_host(value):
    """'/block/sub-block/host' (also with a leading cluster: four parts) -> topology; {} if not that shape."""
    text = _text(value)
    if not text or not text.startswith("/"):
        return {}
    parts = text.strip("/").split("/")
    if any(not p for p in parts):
        return {}
    if len(parts) == 3:
        return dict(zip(("block", "subblock", "host"), parts))
    if len(parts) == 4:
        return dict(zip(LEVELS, parts))
    return {}


def from_resource_status(status):
    """Topology of an instance resource's resourceStatus: the structured field, else physicalHost."""
    if not isinstance(status, dict):
        return {}
    structured = normalize(status.get("physicalHostTopology"))
    if structured:
        return structured
    return parse_physical_host(status.get("physicalHost"))


def from_metadata(physical_host=None, physical_host_topology=None):
    """Topology from the metadata server's attributes (the JSON one first, else the /x/y/z one).

    Raises ValueError naming the attribute when physical_host_topology is not a JSON object."""
    if physical_host_topology not in (None, ""):
        try:
            data = json.loads(physical_host_topology)
        except ValueError:
            raise ValueError("physical_host_topology is not JSON: %r" % (physical_host_topology[:80],))
        if not isinstance(data, dict):
            raise ValueError("physical_host_topology is not a JSON object")
        structured = normalize(data)
        if structured:
            return structured
    return parse_physical_host(physical_host)


def block_id(topo):
    """The block as a name unique within the fleet: cluster/block (cluster left out when unknown)."""
    topo = topo or {}
    if not topo.get("block"):
        return None
    return "/".join(v for v in (topo.get("cluster"), topo["block"]) if v)


def subblock_id(topo):
    """The sub-block as a name unique within the fleet: [cluster/]block/sub-block, or None."""
    topo = topo or {}
    if not topo.get("block") or not topo.get("subblock"):
        return None
    return "%s/%s" % (block_id(topo), topo["subblock"])


def short(name, width=8):
    """Google's block/sub-block/host ids are 32-hex hashes: a readable prefix for reports."""
    text = str(name)
    return text if len(text) <= width + 1 else text[:width] + "~"


def sort_key(topo, name=""):
    """Order nodes as Google's topological scripts do: cluster, block, sub-block, host, then name.

    Nodes without placement sort after every placed one, by name."""
    topo = topo or {}
    placed = 0 if topo else 1
    return (placed,) + tuple(topo.get(level) or "" for level in LEVELS) + (str(name),)


def locality(a, b):
    """How close two placements are: host, subblock, block, cluster, far, or unknown."""
    a, b = a or {}, b or {}
    if not a or not b:
        return UNKNOWN
    if a.get("cluster") and b.get("cluster") and a["cluster"] != b["cluster"]:
        return FAR
    if not a.get("block") or not b.get("block"):
        return UNKNOWN
    if a["block"] != b["block"]:
        return SAME_CLUSTER
    if not a.get("subblock") or not b.get("subblock"):
        return UNKNOWN
    if a["subblock"] != b["subblock"]:
        return SAME_BLOCK
    if a.get("host") and a.get("host") == b.get("host"):
        return SAME_HOST
    return SAME_SUBBLOCK


def differences(expected, observed):
    """Levels where two placements disagree, as 'level: expected X, node says Y' (levels either lacks are skipped)."""
    out = []
    expected, observed = expected or {}, observed or {}
    for level in LEVELS:
        want, got = expected.get(level), observed.get(level)
        if want and got and want != got:
            out.append("%s: inventory says %s, node says %s" % (level, want, got))
    return out
