"""The shape of a sandbox: which networks, which addresses, from the family table.

One podman network per VPC of the family, at the family's VPC MTU (its host VPC
MTU on the host NICs, where the family has one).  Each sandbox gets its own block
of subnets, 10.<slot>.<nic>.0/24, so several can run at once; node k has address
10.<slot>.<nic>.<10+k> and a GCE-style MAC (42:01 + the address) on every
network, so a restart keeps both.

A family whose GPU NICs are IPv6-only and share one subnet (A4X Max) gets one
IPv6-only network for them, fd47:<slot>::/64: node k's GPU NIC j has address
fd47:<slot>::<10+k>:<j+1>.  podman attaches a container to a network once, so
the node has one port on it (LINKS_PARENT, ::<10+k>:0, at the network's MTU
like a switch port) and its GPU NICs are macvlan links on that port, which a
STAND-IN unit makes at every boot (cluster.py).

Three node variants, one for each kind of image Google offers for A3/A4 VMs:
  ubuntu  (default) Google's Ubuntu accelerator image, which cluster-toolkit's
          A3/A4 Slurm blueprints run: the family's enp* names, netplan (a
          cloud-init style 50-cloud-init.yaml) rendering systemd-networkd
          configuration, the packaged driver in the system library directory,
          the container toolkit behind `--gpus all`, no /var/lib/nvidia;
  el      Google's Rocky Linux accelerator image: enp* names, NetworkManager
          with one keyfile connection per NIC and systemd-networkd off, the
          packaged driver in /usr/lib64 and the container toolkit;
  cos     Container-Optimized OS: eth0.. names, systemd-networkd, the driver in
          /var/lib/nvidia/lib64, GPU device nodes and no container toolkit
          (`--gpus` is refused), a read-only root and an /etc that every boot
          resets; the configuration phases refuse it.
"""

import hashlib
import importlib.util
import ipaddress
import os

from . import common

FAMILIES_PY = os.path.join(common.ROOT, "plugins", "module_utils", "families.py")
PROJECT = "gpudirect-sandbox"
ZONE = "sandbox-local1-a"
FIRST_HOST = 10
MAX_NODES = 64
SLOTS = range(100, 200)
VARIANTS = ("ubuntu", "el", "cos")
# the node's one port on a network its GPU NICs share, which carries them as macvlan links
LINKS_PARENT = "rdmaport0"
DEFAULT_VARIANT = "ubuntu"
# variants whose images name NICs like the family's Ubuntu guests (predictable PCI names)
PCI_NAMED = ("ubuntu", "el")
TEN = ipaddress.ip_network("10.0.0.0/8")


def families():
    """The collection's family table, loaded from its file (no Ansible needed)."""
    spec = importlib.util.spec_from_file_location("gpudirect_families", FAMILIES_PY)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def family_profile(family):
    fams = families()
    try:
        return fams.get_family(family)
    except fams.FamilyError as exc:
        raise common.SandboxError(str(exc))


def network_name(name, index):
    return "%s-vpc%d" % (name, index)


def node_name(name, index):
    return "%s-node%d" % (name, index)


def subnet(slot, nic):
    return ipaddress.ip_network("10.%d.%d.0/24" % (slot, nic))


def gateway(slot, nic=0):
    return str(subnet(slot, nic)[1])


def address(slot, nic, node):
    return str(subnet(slot, nic)[FIRST_HOST + node])


def mac(slot, nic, node):
    ip = ipaddress.ip_address(address(slot, nic, node)).packed
    return "42:01:" + ":".join("%02x" % b for b in ip)


def subnet6(slot):
    """The IPv6-only subnet of GPU NICs that share one (ULA, on this machine only)."""
    return ipaddress.ip_network("fd47:%x::/64" % slot)


def address6(slot, node, gpu_nic):
    """GPU NIC gpu_nic's address on node; -1: the node's port that carries them (LINKS_PARENT)."""
    return str(subnet6(slot)[((FIRST_HOST + node) << 16) + gpu_nic + 1])


def mac6(slot, node, gpu_nic):
    """A MAC for an IPv6-only NIC: no IPv4 address to derive one from."""
    return "42:01:fd:%02x:%02x:%02x" % (slot & 0xff, (FIRST_HOST + node) & 0xff, gpu_nic & 0xff)


def used_slots():
    """Second octets of every 10.x subnet podman already has, plus those other sandboxes hold."""
    used = set()
    for net in common.podman_json("network", "ls", "--format", "json"):
        for sub in net.get("subnets") or []:
            try:
                cidr = ipaddress.ip_network(sub.get("subnet", ""), strict=False)
            except ValueError:
                continue
            if cidr.version == 4 and cidr.subnet_of(TEN):
                used.add(cidr.network_address.packed[1])
    # subnets still routed on the host (a bridge podman has not removed yet)
    routes = common.run(["ip", "-4", "route", "show"], check=False).stdout.decode().split("\n")
    for line in routes:
        first = line.split(" ", 1)[0]
        if first.startswith("10.") and "/" in first:
            used.add(int(first.split(".")[1]))
    for other in common.sandbox_names():
        st = common.load_state(other)
        if st and "slot" in st:
            used.add(st["slot"])
    return used


def free_slot():
    used = used_slots()
    for slot in SLOTS:
        if slot not in used:
            return slot
    raise common.SandboxError("no free 10.x.0.0/16 block left for another sandbox (10.100-10.199 in use)")


def iface_names(prof, variant):
    """The node's interface name for every NIC of the family, as the variant's image names them."""
    count = prof["nics"]["count"]
    if variant in PCI_NAMED:
        names = prof["nics"]["guest_names"]["ubuntu"]
        return [names[i] or "eth%d" % i for i in range(count)]
    return ["eth%d" % i for i in range(count)]


def _hex_id(*parts):
    """A 32-hex id like the Compute API's organization-specific block/sub-block/host hashes."""
    return hashlib.md5("/".join(str(p) for p in parts).encode("utf-8")).hexdigest()


def topology(name, nodes):
    """Placement of each node: 2 blocks x 2 sub-blocks from 6 nodes on, else one sub-block.

    Smaller sandboxes share one sub-block so that most nodes have a partner below
    the uplinks (with 6 or 7 nodes, one or two sub-blocks hold a single node, as on
    a real cluster whose reservation is split unevenly). Nodes fill the sub-blocks
    in order, as evenly as they go; ids are 32-hex like real ones."""
    blocks = subs = 2 if nodes >= 6 else 1
    groups = blocks * subs
    out = []
    for k in range(nodes):
        g = k * groups // nodes
        b, sb = g // subs, g % subs
        out.append({"cluster": "sandbox-%s-cluster" % name, "block": _hex_id(name, "block", b),
                    "subblock": _hex_id(name, "subblock", b, sb), "host": _hex_id(name, "host", k)})
    return out


def physical_host(topo):
    """The flat form (resourceStatus.physicalHost, metadata physical_host): /block/sub-block/host."""
    return "/%(block)s/%(subblock)s/%(host)s" % topo


def physical_host_topology(topo):
    """The structured form, with the sub-block key spelled as Google's docs spell it."""
    return {"cluster": topo["cluster"], "block": topo["block"], "subBlock": topo["subblock"], "host": topo["host"]}


def plan(name, family, nodes, slot, variant=DEFAULT_VARIANT):
    """Everything `up` creates, as data (also what the inventory and the emulator describe)."""
    if variant not in VARIANTS:
        raise common.SandboxError("node variant %r unknown; use %s" % (variant, " or ".join(VARIANTS)))
    prof = family_profile(family)
    nics = prof["nics"]
    ifaces = iface_names(prof, variant)
    mtu = prof["vpc_mtu"]
    shared = bool(nics.get("gpu_shared_subnet"))
    ipv6_only = nics.get("gpu_stack_type") == "IPV6_ONLY"
    if ipv6_only and not shared:
        raise common.SandboxError("%s: IPv6-only GPU NICs on a subnet each are not laid out by the sandbox" % family)
    if ipv6_only and variant != "ubuntu":
        # the macvlan links and their addresses are netplan's; A4X Max runs Ubuntu only
        raise common.SandboxError("%s nodes are laid out on the ubuntu variant only, not %s" % (family, variant))
    first_gpu = nics["gpu_indexes"][0]
    nets = []
    for i in range(nics["count"]):
        gpu = i in nics["gpu_indexes"]
        net = {"name": network_name(name, first_gpu if gpu and shared else i), "index": i,
               "subnet": str(subnet(slot, i)), "gateway": gateway(slot, i),
               "mtu": mtu if gpu else prof.get("host_vpc_mtu") or mtu,
               "nic_type": nics["nic_types"][i], "gpu": gpu}
        if gpu and ipv6_only:
            net.update(subnet=str(subnet6(slot)), gateway=str(subnet6(slot)[1]), ipv6_only=True)
        nets.append(net)
    hosts = []
    placement = topology(name, nodes)
    for k in range(nodes):
        node_nics = []
        for n in nets:
            nic = {"name": "nic%d" % n["index"], "iface": ifaces[n["index"]], "network": n["name"],
                   "ip": address(slot, n["index"], k), "mac": mac(slot, n["index"], k)}
            if n.get("ipv6_only"):
                j = n["index"] - first_gpu
                # podman attaches the node to the network once: this NIC is a macvlan link on its port there
                nic.update(ip=None, ipv6=address6(slot, k, j), mac=mac6(slot, k, j), macvlan_of=LINKS_PARENT)
            node_nics.append(nic)
        host = {"name": node_name(name, k), "index": k, "topology": placement[k], "nics": node_nics}
        if ipv6_only:
            host["links_port"] = {"iface": LINKS_PARENT, "network": network_name(name, first_gpu), "ip": None,
                                  "ipv6": address6(slot, k, -1), "mac": mac6(slot, k, -1), "mtu": mtu}
        hosts.append(host)
    return {
        "name": name,
        "family": family,
        "variant": variant,
        "transport": prof["transport"],
        "machine_type": prof["machine_type"],
        "vpc_mtu": mtu,
        "project": PROJECT,
        "zone": ZONE,
        "slot": slot,
        "registry_host": gateway(slot, 0),
        "networks": nets,
        "nodes": hosts,
    }


def standin_peaks(family):
    """{collective: GB/s} the stand-in nccl-tests replay peaks at, per collective the family tests.

    The replay is one recorded A3 Mega curve; scaled to the family's published
    2-node baseline (or, without one, to 95% of what its GPU NICs carry) it stays
    below the line-rate ceiling the judge checks, as a real run would.
    """
    fams = families()
    prof = family_profile(family)
    peaks = {}
    for coll in prof["nccl_tests"]["collectives"]:
        base = fams.baseline(family, coll)
        ceiling = fams.busbw_ceiling_gbps(family, coll)
        peaks[coll] = round(min(base["busbw_gbps"], ceiling) if base else 0.95 * ceiling, 2)
    return peaks
