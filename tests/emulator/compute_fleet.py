# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Builders for Compute API emulator fixtures.

NIC layouts of GPU VMs come from the collection's family table, so a fixture
VM of family X has exactly the NICs a real X VM has.
"""

from __future__ import absolute_import, division, print_function

import os
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_COLLECTIONS = os.path.join(_ROOT, "build", "collections")
if _COLLECTIONS not in sys.path:
    sys.path.insert(0, _COLLECTIONS)

from ansible_collections.gpudirect.gcp.plugins.module_utils import families  # noqa: E402


def gpu_networks(prefix, family):
    """Network names of a family's NICs: <prefix>-net-0 .. (one VPC per NIC; A4X Max's RDMA NICs all on the
    first RDMA one)."""
    nics = families.FAMILIES[family]["nics"]
    first = nics["gpu_indexes"][0]
    return ["%s-net-%d" % (prefix, first if nics.get("gpu_shared_subnet") and i in nics["gpu_indexes"] else i)
            for i in range(nics["count"])]


def _ipv6_only(family, i):
    nics = families.FAMILIES[family]["nics"]
    return i in nics["gpu_indexes"] and nics.get("gpu_stack_type") == "IPV6_ONLY"


def gpu_instance(name, family, zone="us-central1-a", index=0, prefix="gpu", status="RUNNING",
                 labels=None, public_ip=None, placement=None, topology=None, reservation=None,
                 provisioning_model=None, extra=None):
    """A raw instance resource of an A3/A4 VM with the family's NIC layout."""
    fam = families.FAMILIES[family]
    nic_types = fam["nics"]["nic_types"]
    region = zone.rsplit("-", 1)[0]
    nics = []
    for i, (net, nic_type) in enumerate(zip(gpu_networks(prefix, family), nic_types)):
        nic = {
            "name": "nic%d" % i,
            "network": "global/networks/%s" % net,
            "subnetwork": "regions/%s/subnetworks/%s-sub" % (region, net),
            "networkIP": "10.%d.%d.%d" % (i, (index // 250) % 250, index % 250 + 2),
            "nicType": nic_type,
        }
        if _ipv6_only(family, i):
            # an IPv6-only NIC (A4X Max's RDMA NICs) has no networkIP [Compute v1 networkInterfaces]
            del nic["networkIP"]
            nic.update(stackType="IPV6_ONLY", ipv6Address="fd20:%x:%x::%x" % (index // 250, index % 250, i))
        if i == 0 and public_ip:
            nic["accessConfigs"] = [{"type": "ONE_TO_ONE_NAT", "name": "External NAT", "natIP": public_ip}]
        nics.append(nic)
    inst = {
        "name": name,
        "zone": "zones/%s" % zone,
        "machineType": fam["machine_type"],
        "status": status,
        "labels": dict(labels or {}),
        "networkInterfaces": nics,
        "guestAccelerators": [{"acceleratorType": "zones/%s/acceleratorTypes/%s" % (zone, fam["gpu"]["model"]),
                               "acceleratorCount": fam["gpu"]["count"]}],
        "scheduling": {"provisioningModel": provisioning_model or "STANDARD", "onHostMaintenance": "TERMINATE"},
        "cpuPlatform": "Intel Sapphire Rapids",
        "creationTimestamp": "2026-11-01T00:00:00.000-07:00",
    }
    inst.update(_realistic_extras(name, zone, index))
    if placement:
        inst["resourcePolicies"] = ["regions/%s/resourcePolicies/%s" % (region, placement)]
    if topology:
        inst["resourceStatus"] = {"physicalHost": "/%s/%s/%s" % (topology["block"], topology["subblock"],
                                                                 topology["host"]),
                                  "physicalHostTopology": dict(topology, cluster="cluster-1")}
    if reservation:
        inst["reservationAffinity"] = {"consumeReservationType": "SPECIFIC_RESERVATION",
                                       "key": "compute.googleapis.com/reservation-name",
                                       "values": [reservation]}
    inst.update(extra or {})
    return inst


_OS_FEATURES = ("UEFI_COMPATIBLE", "VIRTIO_SCSI_MULTIQUEUE", "GVNIC", "SEV_CAPABLE", "IDPF")


def _realistic_extras(name, zone, index):
    """Fields every real instance resource carries, which the inventory does not need."""
    return {
        "fingerprint": "Xq1P0nZ0Ukc=", "labelFingerprint": "42WmSpB8rSM=", "deletionProtection": False,
        "startRestricted": False, "canIpForward": False, "satisfiesPzi": True,
        "keyRevocationActionType": "NONE", "lastStartTimestamp": "2026-11-20T08:00:00.000-08:00",
        "tags": {"items": ["ssh", "internal"], "fingerprint": "6smc4R4d39I="},
        "serviceAccounts": [{"email": "%d-compute@developer.gserviceaccount.com" % (100000 + index % 7),
                             "scopes": ["https://www.googleapis.com/auth/devstorage.read_only",
                                        "https://www.googleapis.com/auth/logging.write",
                                        "https://www.googleapis.com/auth/monitoring.write",
                                        "https://www.googleapis.com/auth/trace.append"]}],
        "shieldedInstanceConfig": {"enableSecureBoot": False, "enableVtpm": True, "enableIntegrityMonitoring": True},
        "shieldedInstanceIntegrityPolicy": {"updateAutoLearnPolicy": True},
        "displayDevice": {"enableDisplay": False},
        "metadata": {"fingerprint": "uQ5t9dMVfYE=", "kind": "compute#metadata",
                     "items": [{"key": "startup-script", "value": "#!/bin/bash\necho hello from %s" % name},
                               {"key": "enable-oslogin", "value": "TRUE"}]},
        "disks": [{"boot": True, "autoDelete": True, "deviceName": "boot", "diskSizeGb": "200", "index": 0,
                   "interface": "SCSI", "mode": "READ_WRITE", "type": "PERSISTENT", "architecture": "X86_64",
                   "source": "zones/%s/disks/%s" % (zone, name),
                   "licenses": ["projects/debian-cloud/global/licenses/debian-12-bookworm"],
                   "guestOsFeatures": [{"type": t} for t in _OS_FEATURES]}],
    }


def plain_instance(name, zone="us-central1-a", machine_type="n2-standard-8", index=0, status="RUNNING",
                   network="default"):
    """A non-GPU VM (the bulk of a real project)."""
    region = zone.rsplit("-", 1)[0]
    inst = {
        "name": name,
        "zone": "zones/%s" % zone,
        "machineType": machine_type,
        "status": status,
        "labels": {"role": "web"},
        "networkInterfaces": [{"name": "nic0", "network": "global/networks/%s" % network,
                               "subnetwork": "regions/%s/subnetworks/%s" % (region, network),
                               "networkIP": "10.200.%d.%d" % ((index // 250) % 250, index % 250 + 2),
                               "nicType": "GVNIC"}],
        "scheduling": {"provisioningModel": "STANDARD", "onHostMaintenance": "MIGRATE", "automaticRestart": True},
        "cpuPlatform": "Intel Cascade Lake",
        "creationTimestamp": "2026-10-01T00:00:00.000-07:00",
    }
    inst.update(_realistic_extras(name, zone, index))
    return inst


def networks_for(prefix, family, mtu=None):
    """networks.get resources for a family's VPCs, at the family's VPC MTU by default."""
    fam = families.FAMILIES[family]
    out = {}
    for i, net in enumerate(gpu_networks(prefix, family)):
        # nic0 is the host VPC: it keeps the default MTU unless told otherwise; the other host VPCs have the
        # family's host MTU where it has one (A4X Max: 4096)
        default = 1460 if i == 0 else (fam.get("host_vpc_mtu") if i in fam["nics"]["host_indexes"] else None)
        out[net] = {"name": net, "mtu": mtu or default or fam["vpc_mtu"]}
    return out


def mixed_fleet():
    """Two projects: A3 Mega and A3 Ultra VMs, a stopped one, plain VMs, a duplicate name."""
    a = [gpu_instance("mega-%d" % i, "a3-mega", index=i, placement="compact-a", prefix="mega",
                      topology={"block": "blk1", "subblock": "sb%d" % (i // 2), "host": "h%d" % i},
                      labels={"pool": "train", "node": "n%d" % i}) for i in range(4)]
    a.append(gpu_instance("mega-stopped", "a3-mega", index=10, status="TERMINATED", prefix="mega"))
    a.append(gpu_instance("ultra-0", "a3-ultra", zone="europe-west4-b", index=20, prefix="ultra",
                          reservation="projects/proj-a/reservations/res-1", provisioning_model="SPOT",
                          public_ip="34.1.2.3", labels={"pool": "infer", "tmpl": "{{ lookup('pipe', 'id') }}"}))
    a.append(gpu_instance("shared", "a4", zone="us-central1-b", index=30, prefix="a4"))
    a += [plain_instance("web-%d" % i, index=i) for i in range(5)]
    b = [gpu_instance("high-0", "a3-high", zone="us-east4-a", index=0, prefix="high"),
         gpu_instance("shared", "a4", zone="us-central1-b", index=1, prefix="a4")]
    nets_a = {"default": {"mtu": 1460}}
    for prefix, fam in (("mega", "a3-mega"), ("ultra", "a3-ultra"), ("a4", "a4")):
        nets_a.update(networks_for(prefix, fam))
    nets_b = {}
    for prefix, fam in (("high", "a3-high"), ("a4", "a4")):
        nets_b.update(networks_for(prefix, fam))
    return {"projects": {"proj-a": {"instances": a, "networks": nets_a},
                         "proj-b": {"instances": b, "networks": nets_b}}}


def shared_vpc_fleet(service="svc-proj", host="net-host"):
    """A Shared VPC: a service project's A3 Mega VMs whose GPU NICs are on networks of the host project,
    and an A3 High VM on the service project's own networks."""
    mega = [gpu_instance("mega-%d" % i, "a3-mega", index=i, prefix="mega") for i in range(2)]
    for inst in mega:
        for nic in inst["networkInterfaces"][1:]:
            nic["network"] = "projects/%s/%s" % (host, nic["network"])
            nic["subnetwork"] = "projects/%s/%s" % (host, nic["subnetwork"])
    high = gpu_instance("high-0", "a3-high", zone="us-central1-a", index=5, prefix="high")
    host_nets = networks_for("mega", "a3-mega")
    own = {"mega-net-0": host_nets.pop("mega-net-0")}
    own.update(networks_for("high", "a3-high"))
    return {"projects": {service: {"instances": mega + [high], "networks": own},
                         host: {"instances": [], "networks": host_nets}}}
