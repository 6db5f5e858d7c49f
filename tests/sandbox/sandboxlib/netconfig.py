"""The network configuration a node variant's image holds before its first boot.

On Google's Ubuntu images cloud-init writes /etc/netplan/50-cloud-init.yaml
(each NIC matched by MAC, with set-name) and netplan renders it for
systemd-networkd; on EL images every NIC has a NetworkManager connection.
The sandbox writes the same, per node, with the addresses podman gave the
NICs (no DHCP server answers in the sandbox, so they are static here).  No
MTU is set: GPU NICs come up at the guest default until a role persists one.
"""

import ipaddress
import uuid

NETPLAN_FILE = "etc/netplan/50-cloud-init.yaml"
NM_DIR = "etc/NetworkManager/system-connections"
# stable connection UUIDs: the same node gets the same ones on every `up`
_NS = uuid.UUID("6f1c1c57-33e5-4b8e-9a3b-5b1f0d1f7a10")


def _cidr(net, nic):
    """The NIC's address with its subnet's prefix (its IPv6 one on an IPv6-only NIC)."""
    return "%s/%d" % (nic["ip"] or nic["ipv6"], ipaddress.ip_network(net["subnet"]).prefixlen)


def netplan_cloud_init(plan, node):
    """50-cloud-init.yaml for one node, as cloud-init lays it out on Ubuntu (ids are the NIC names)."""
    lines = ["# SANDBOX: laid out like the file cloud-init writes on Ubuntu images",
             "# (every NIC matched by MAC and named with set-name).",
             "network:", "  version: 2", "  ethernets:"]
    for nic, net in zip(node["nics"], plan["networks"]):
        lines += ["    %s:" % nic["iface"],
                  "      match:",
                  "        macaddress: \"%s\"" % nic["mac"],
                  "      set-name: %s" % nic["iface"],
                  "      dhcp4: false",
                  "      addresses: [\"%s\"]" % _cidr(net, nic)]
    return "\n".join(lines) + "\n"


# SANDBOX adaptation, not part of Ubuntu's layout: netplan matches a NIC by its
# permanent MAC address, which a VM's NIC has and a container's veth has not,
# and networkd would wait for IPv6 router advertisements no sandbox network
# sends.  A drop-in for each .network file netplan renders matches the current
# MAC instead and leaves IPv6 and the addresses podman gave alone.
NETPLAN_DROPIN = """# SANDBOX: veth NICs have no permanent MAC address (see tests/sandbox/sandboxlib/netconfig.py)
[Match]
PermanentMACAddress=
MACAddress=%s

[Network]
LinkLocalAddressing=no
IPv6AcceptRA=no
KeepConfiguration=yes
"""


def netplan_sandbox_dropins(node):
    """[(relative path, text)]: the drop-in for each .network file netplan renders (10-netplan-<id>.network)."""
    return [("etc/systemd/network/10-netplan-%s.network.d/50-sandbox-veth.conf" % nic["iface"],
             NETPLAN_DROPIN % nic["mac"]) for nic in node["nics"]]


def nm_keyfiles(plan, node):
    """[(relative path, text)]: one NetworkManager keyfile connection per NIC, named as cloud-init names them."""
    out = []
    for index, (nic, net) in enumerate(zip(node["nics"], plan["networks"])):
        con_id = "cloud-init %s" % nic["iface"]
        ipv4 = ["[ipv4]", "method=manual", "address1=%s" % _cidr(net, nic)]
        if index == 0:
            ipv4.append("gateway=%s" % net["gateway"])
        else:
            ipv4.append("never-default=true")
        text = "\n".join([
            "# SANDBOX: the connection an EL image has for this NIC",
            "[connection]", "id=%s" % con_id,
            "uuid=%s" % uuid.uuid5(_NS, "%s/%s" % (node["name"], nic["iface"])),
            "type=ethernet", "interface-name=%s" % nic["iface"], "autoconnect=true", "",
            "[ethernet]", "mac-address=%s" % nic["mac"].upper(), "",
        ] + ipv4 + ["", "[ipv6]", "method=ignore", ""])
        out.append(("%s/%s.nmconnection" % (NM_DIR, con_id.replace(" ", "-")), text))
    return out
