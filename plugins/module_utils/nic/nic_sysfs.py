# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read what a node really has: interfaces, RDMA devices, A3 Mega devices.

Everything is read from sysfs and /dev under a root path, so unit tests can
point the reader at a fake tree.  IP addresses are not in sysfs; they come
from ``ip -j addr show`` (see parse_ip_addr_json) and are passed in.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import json
import os
import re

from ansible_collections.gpudirect.gcp.plugins.module_utils.common.sysfs import read_text

IFF_UP = 0x1
# Link-layer types worth reporting: Ethernet (1) and InfiniBand (32).
ETHER_TYPES = (1, 32)
_PCI_ADDR = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


def _ip_addr_links(text):
    """(ifname, addr_info list) of each named link of ``ip -j addr show`` output; ValueError when it is not JSON."""
    try:
        data = json.loads(text or "[]")
    except ValueError as exc:
        raise ValueError("cannot parse `ip -j addr show` output: %s" % exc)
    return [(link["ifname"], link.get("addr_info", [])) for link in data if link.get("ifname")]


def parse_ip_addr_json(text, family="inet"):
    """``ip -j addr show`` output -> {ifname: ["10.0.1.2/24", ...]}: one family's addresses (``inet`` or
    ``inet6``). IPv6 link-local addresses (fe80::/10) are left out: every interface has one, and a GCE NIC's
    own IPv6 address is a global one."""
    out = {}
    for name, addr_info in _ip_addr_links(text):
        addrs = out.setdefault(name, [])
        for info in addr_info:
            if info.get("family", "inet") != family or not info.get("local"):
                continue
            if family == "inet6" and info.get("scope") == "link":
                continue
            addrs.append("%s/%s" % (info["local"], info.get("prefixlen", 32 if family == "inet" else 128)))
    return out


# What `ip -j addr show` flags on an address that is not usable yet, or never will be: the kernel
# marks an IPv6 address tentative until duplicate address detection (DAD) passes, and dadfailed (with
# tentative still set) when another host answered for it.
NOT_READY_FLAGS = ("dadfailed", "tentative")


def _canonical(address):
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return address


def parse_ip_addr_details(text):
    """``ip -j addr show`` output -> {ifname: {"ipv6_link_local": [addresses], "address_states":
    {address: "dadfailed" or "tentative"}}}: what the address lists leave out. Only addresses that are
    not ready have a state; they are keyed in their canonical form (fd20:0:0::1 and fd20::1 are one)."""
    out = {}
    for name, addr_info in _ip_addr_links(text):
        entry = out.setdefault(name, {"ipv6_link_local": [], "address_states": {}})
        for info in addr_info:
            if not info.get("local"):
                continue
            if info.get("family") == "inet6" and info.get("scope") == "link":
                entry["ipv6_link_local"].append(info["local"])
            state = next((flag for flag in NOT_READY_FLAGS if info.get(flag)), None)
            if state:
                entry["address_states"][_canonical(info["local"])] = state
    return out


def gid_ipv4(gid):
    """The IPv4 address an IPv4-mapped RoCE GID carries, or None."""
    try:
        mapped = ipaddress.IPv6Address(gid.strip()).ipv4_mapped
    except ValueError:
        return None
    return str(mapped) if mapped else None


class SysfsReader(object):
    """Reads /sys/class/net, /sys/class/infiniband and /dev under ``root``."""

    def __init__(self, root="/"):
        self.root = root or "/"

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def _read(self, path, default=None):
        # virtual NICs answer EINVAL for speed, missing files are normal
        return read_text(path, default)

    def _int(self, path, base=10):
        value = self._read(path)
        try:
            return int(value, base)
        except (TypeError, ValueError):
            return None

    def _listdir(self, path):
        try:
            return sorted(os.listdir(path))
        except (IOError, OSError):
            return []

    # --- network interfaces -------------------------------------------------

    def interface_names(self):
        return self._listdir(self.path("sys", "class", "net"))

    def interface(self, name, addresses=None, addresses6=None, details=None):
        base = self.path("sys", "class", "net", name)
        if not os.path.isdir(base):
            return None
        flags = self._int(os.path.join(base, "flags"), 16)
        speed = self._int(os.path.join(base, "speed"))
        device = os.path.join(base, "device")
        driver = None
        pci = None
        if os.path.exists(device):
            driver_link = os.path.join(device, "driver")
            if os.path.islink(driver_link):
                driver = os.path.basename(os.readlink(driver_link))
            target = os.path.basename(os.path.realpath(device))
            pci = target if _PCI_ADDR.match(target) else None
        cidrs = list((addresses or {}).get(name, []))
        cidrs6 = list((addresses6 or {}).get(name, []))
        mac = self._read(os.path.join(base, "address"))
        detail = (details or {}).get(name) or {}
        return {
            "name": name,
            "mac": mac.lower() if mac else None,
            "mtu": self._int(os.path.join(base, "mtu")),
            "operstate": self._read(os.path.join(base, "operstate"), "unknown"),
            "admin_up": bool(flags & IFF_UP) if flags is not None else None,
            "carrier": self._int(os.path.join(base, "carrier")) == 1,
            "type": self._int(os.path.join(base, "type")),
            "ipv4": [c.split("/", 1)[0] for c in cidrs],
            "ipv4_cidrs": cidrs,
            "ipv6": [c.split("/", 1)[0] for c in cidrs6],
            "ipv6_link_local": list(detail.get("ipv6_link_local", [])),
            "address_states": dict(detail.get("address_states", {})),
            "driver": driver,
            "pci_address": pci,
            "speed_mbps": speed if speed and speed > 0 else None,
        }

    def interfaces(self, addresses=None, addresses6=None, details=None):
        """Every Ethernet-like interface except loopback, keyed by name."""
        out = {}
        for name in self.interface_names():
            info = self.interface(name, addresses, addresses6, details)
            if info is None or name == "lo" or info["type"] not in ETHER_TYPES:
                continue
            out[name] = info
        return out

    # --- RDMA (gIB families) --------------------------------------------------

    def rdma_present(self):
        return bool(self._listdir(self.path("sys", "class", "infiniband")))

    def rdma_devices(self):
        """{device: {netdev, ports: {n: {state, gids: [{index, gid, ipv4, type, netdev}]}}}}."""
        base = self.path("sys", "class", "infiniband")
        out = {}
        for dev in self._listdir(base):
            ports = {}
            netdevs = set()
            for port in self._listdir(os.path.join(base, dev, "ports")):
                pbase = os.path.join(base, dev, "ports", port)
                state = self._read(os.path.join(pbase, "state"), "")
                # "4: ACTIVE" -> "ACTIVE"
                state = state.split(":", 1)[-1].strip() if state else None
                gids = []
                for idx in sorted(self._listdir(os.path.join(pbase, "gids")), key=_num):
                    gid = self._read(os.path.join(pbase, "gids", idx), "")
                    if not gid or set(gid.replace(":", "")) == {"0"}:
                        continue
                    ndev = self._read(os.path.join(pbase, "gid_attrs", "ndevs", idx))
                    if ndev:
                        netdevs.add(ndev)
                    gids.append({"index": _num(idx), "gid": gid, "ipv4": gid_ipv4(gid),
                                 "type": self._read(os.path.join(pbase, "gid_attrs", "types", idx)),
                                 "netdev": ndev})
                ports[port] = {"state": state, "gids": gids}
            # the PCI function's own net/ directory names the netdev when no GID does
            netdevs.update(self._listdir(os.path.join(base, dev, "device", "net")))
            out[dev] = {"name": dev, "netdevs": sorted(netdevs), "ports": ports}
        return out

    # --- A3 Mega (TCPXO) devices ---------------------------------------------

    def aperture_devices(self):
        return self._listdir(self.path("dev", "aperture_devices"))

    def device_exists(self, dev_path):
        return os.path.exists(self.path(dev_path.lstrip("/")))


def _num(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return -1


def _ip_addr_show(run, ip_bin):
    rc, out, err = run([ip_bin, "-j", "addr", "show"])
    if rc != 0:
        raise ValueError("`ip -j addr show` failed: %s" % (err or out).strip())
    return out


def read_addresses(run, ip_bin):
    """(IPv4, IPv6) addresses per interface via one ``ip -j addr show``; run(argv) -> (rc, out, err)."""
    out = _ip_addr_show(run, ip_bin)
    return parse_ip_addr_json(out), parse_ip_addr_json(out, "inet6")


def read_interfaces(reader, run, ip_bin):
    """SysfsReader.interfaces() with IPv4 and IPv6 addresses, the IPv6 link-local ones and the state of
    those not ready (tentative, dadfailed); raises ValueError with one clear line."""
    if not ip_bin:
        raise ValueError("the ip command (iproute2) is not on this node; it is needed to read IP addresses")
    out = _ip_addr_show(run, ip_bin)
    return reader.interfaces(parse_ip_addr_json(out), parse_ip_addr_json(out, "inet6"), parse_ip_addr_details(out))
