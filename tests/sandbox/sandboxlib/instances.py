"""The sandbox's nodes as Compute API instance resources, and what the gce_gpu plugin makes of them.

The emulator serves these resources; the static inventory holds the host vars the
plugin's own builder (plugins/plugin_utils/gce/gce_hosts.py) makes from the very same
resources, so the two inventories cannot disagree.
"""

import os
import sys

from . import common, layout

COLLECTIONS = os.path.join(common.ROOT, "build", "collections")


def gce_hosts():
    """The collection's host builder, imported from this checkout (no installed collection needed)."""
    if not os.path.isdir(os.path.join(COLLECTIONS, "ansible_collections", "gpudirect", "gcp")):
        common.run([os.path.join(common.ROOT, "scripts", "link-collection.sh")], what="link-collection.sh")
    if COLLECTIONS not in sys.path:
        sys.path.insert(0, COLLECTIONS)
    from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_hosts as builder
    return builder


def region(zone):
    return zone.rsplit("-", 1)[0]


def instance_id(plan, node):
    return str(4200000000000 + plan["slot"] * 1000 + node["index"])


def network_url(plan, net):
    return "projects/%s/global/networks/%s" % (plan["project"], net["name"])


def instance(plan, node):
    """The instance resource of one node: the family's machine type, its real addresses and MACs."""
    prof = layout.family_profile(plan["family"])
    zone, reg, project = plan["zone"], region(plan["zone"]), plan["project"]
    nics = []
    for net, nic in zip(plan["networks"], node["nics"]):
        record = {
            "name": nic["name"],
            "network": network_url(plan, net),
            "subnetwork": "projects/%s/regions/%s/subnetworks/%s" % (project, reg, net["name"]),
            "networkIP": nic["ip"],
            "nicType": net["nic_type"],
            "macAddress": nic["mac"],
            "stackType": "IPV4_ONLY",
        }
        if nic.get("ipv6"):
            # an IPv6-only NIC (A4X Max's RDMA NICs): its IPv6 address and no networkIP
            del record["networkIP"]
            record.update(stackType="IPV6_ONLY", ipv6Address=nic["ipv6"])
        nics.append(record)
    return {
        "id": instance_id(plan, node),
        "name": node["name"],
        "zone": "zones/%s" % zone,
        "machineType": "zones/%s/machineTypes/%s" % (zone, plan["machine_type"]),
        "status": "RUNNING",
        "labels": {"gpudirect-sandbox": plan["name"]},
        "networkInterfaces": nics,
        "guestAccelerators": [{"acceleratorType": "zones/%s/acceleratorTypes/%s" % (zone, prof["gpu"]["model"]),
                               "acceleratorCount": prof["gpu"]["count"]}],
        # reservation-bound, as Google provisions A3/A4 cluster VMs (and as reportHostAsFaulty requires)
        "scheduling": {"provisioningModel": "RESERVATION_BOUND", "onHostMaintenance": "TERMINATE"},
        "resourceStatus": {"physicalHost": layout.physical_host(node["topology"]),
                           "physicalHostTopology": layout.physical_host_topology(node["topology"])},
        "metadata": {"items": [{"key": "gpudirect-sandbox", "value": "STAND-IN: podman node, no GPU"}]},
    }


def network_mtus(plan):
    """{network URL as the instances name it: MTU}, what the plugin reads from networks.list."""
    return dict((network_url(plan, net), net["mtu"]) for net in plan["networks"])


def inventory_host(plan, node):
    """(host vars, default groups) the gce_gpu plugin gives this node with host_vars: minimal."""
    try:
        return gce_hosts().inventory_host(instance(plan, node), plan["project"], network_mtus(plan))
    except ValueError as exc:
        raise common.SandboxError(str(exc))
