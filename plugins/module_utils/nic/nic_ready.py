# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Readiness checks for GPU NICs: present, up, addressed (IPv4, or IPv6 on an IPv6-only NIC, past duplicate
address detection), at the VPC MTU.

Each check returns plain problem strings ("mtu 1460, expected 8244") so that a
module can fail with one line naming every bad NIC and why.

A NIC to check is a record of the NIC map's shape (nic_map.match, what gpu_nic_facts returns):
nic (the API's NIC name), network, mac, ip, ipv6, expected_mtu (the VPC's MTU), iface (the guest
interface, None when the map found none). The same record goes from the NIC map to the roles,
gpu_nic_ready, the node health config and its metrics; from_item() reads gpu_nic_ready's
older item (name: the interface, mtu: the VPC's MTU) into it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.nic.nic_map import norm_ipv6, norm_mac

# IPv4 header (20) + ICMP header (8): a payload of MTU-28 fills the MTU exactly
PING_OVERHEAD = 28
# IPv6 header (40) + ICMPv6 header (8), for the IPv6-only NICs of A4X Max
PING6_OVERHEAD = 48
# how a failed ping to a peer starts: a path's fault, judged across nodes, not the NIC's own
FAILED_PING = "ping -M do "
NO_RDMA = "no RDMA devices on this node"


def from_item(item):
    """gpu_nic_ready's item {name, mac, mtu, ip, ipv6, nic} as a NIC map record."""
    return {"nic": item.get("nic"), "network": None, "mac": item.get("mac"), "ip": item.get("ip"),
            "ipv6": item.get("ipv6"), "expected_mtu": item.get("mtu"), "iface": item.get("name")}


def resolve(item, interfaces):
    """The guest interface a NIC record refers to, by interface name, else MAC."""
    name = item.get("iface")
    if name:
        return name if name in interfaces else None
    mac = norm_mac(item.get("mac"))
    for iface, info in interfaces.items():
        if mac and info.get("mac") == mac:
            return iface
    return None


def label(item, iface=None):
    """How a NIC is named in messages: its interface, else what the user gave."""
    if iface:
        return iface
    return item.get("iface") or item.get("nic") or norm_mac(item.get("mac")) or "?"


def is_up(info):
    """Admin up and carrier; operstate 'unknown' is fine for drivers that never set it."""
    return bool(info.get("admin_up")) and info.get("operstate") in ("up", "unknown") and info.get("carrier", True)


def check_nic(item, interfaces):
    """Local checks for one expected NIC -> result dict with ``problems``."""
    iface = resolve(item, interfaces)
    result = {"name": label(item, iface), "nic": item.get("nic"), "iface": iface,
              "mac": norm_mac(item.get("mac")),
              "expected_mtu": None if item.get("expected_mtu") is None else int(item["expected_mtu"]),
              "expected_ip": item.get("ip"), "expected_ipv6": norm_ipv6(item.get("ipv6")), "mtu": None,
              "operstate": None, "up": False, "ipv4": [], "ipv6": [], "peers": [], "problems": []}
    problems = result["problems"]
    if iface is None:
        if item.get("iface"):
            problems.append("no such interface")
        else:
            problems.append("no interface with MAC %s" % result["mac"])
        return result
    info = interfaces[iface]
    result.update(mtu=info.get("mtu"), operstate=info.get("operstate"), ipv4=list(info.get("ipv4", [])),
                  ipv6=[norm_ipv6(a) for a in info.get("ipv6", [])], mac=info.get("mac"), up=is_up(info))
    if not info.get("admin_up"):
        problems.append("down (administratively)")
    elif not info.get("carrier", True):
        problems.append("down (no carrier)")
    elif not is_up(info):
        problems.append("down (operstate %s)" % info.get("operstate"))
    want_ip = item.get("ip")
    if want_ip and want_ip not in result["ipv4"]:
        problems.append("no IPv4 %s (has %s)" % (want_ip, ", ".join(result["ipv4"]) or "none"))
    want_ipv6 = result["expected_ipv6"]
    states = info.get("address_states") or {}
    if want_ipv6 and want_ipv6 not in result["ipv6"]:
        problems.append(missing_ipv6(want_ipv6, result["ipv6"], info.get("ipv6_link_local") or [], states))
    # an address still in duplicate address detection, or one that failed it, carries no traffic
    for address in result["ipv4"] + result["ipv6"]:
        state = states.get(address)
        if state:
            problems.append(address_state_problem(address, state))
    want_mtu = result["expected_mtu"]
    if want_mtu is not None and info.get("mtu") != want_mtu:
        problems.append("mtu %s, expected %s" % (info.get("mtu"), want_mtu))
    return result


def address_family_word(address):
    return "IPv6" if ":" in str(address) else "IPv4"


def address_state_problem(address, state):
    """The problem of an address `ip addr` flags as not ready (nic_sysfs.NOT_READY_FLAGS)."""
    if state == "dadfailed":
        return ("%s %s failed duplicate address detection (dadfailed): another host on the network holds it"
                % (address_family_word(address), address))
    return "%s %s is %s (duplicate address detection has not finished)" % (address_family_word(address), address,
                                                                           state)


def missing_ipv6(want, have, link_local, states):
    """The problem of a NIC without its expected IPv6 address: every interface has a link-local one, so a
    NIC that holds only that one is missing its address (router advertisement or DHCPv6 gave none yet)."""
    if have or not link_local:
        return "no IPv6 %s (has %s)" % (want, ", ".join(have) or "none")
    local = norm_ipv6(link_local[0]) or link_local[0]
    state = states.get(local)
    return "missing its IPv6 address %s (it holds only its link-local address %s%s)" % (
        want, local, {"dadfailed": ", which failed duplicate address detection",
                      "tentative": ", itself still tentative"}.get(state, ""))


def ping_size(mtu, peer):
    """The ICMP payload that fills mtu exactly on the way to peer (an IPv4 or an IPv6 address)."""
    return int(mtu) - (PING6_OVERHEAD if ":" in str(peer) else PING_OVERHEAD)


def ping_argv(ping, iface, mtu, peer):
    """A full-size don't-fragment ping out of one interface (iputils' ping takes IPv4 and IPv6 alike)."""
    return [ping, "-M", "do", "-s", str(ping_size(mtu, peer)), "-c", "1", "-W", "1", "-I", iface, peer]


# ping's words for a send that failed on this node before any packet left: the send queue or the
# neighbour table was full, not the path. They are retried, and never reported as a path fault.
LOCAL_SEND_ERRORS = ("No buffer space available", "Resource temporarily unavailable", "Cannot allocate memory")
SEND_TRIES = 4


def local_send_error(text):
    """The local send error ping reported, or None."""
    for words in LOCAL_SEND_ERRORS:
        if words in (text or ""):
            return words
    return None


def subject(result):
    """What a NIC's finding is about: its interface, else the name it was expected under."""
    return result.get("iface") or result.get("name") or result.get("nic") or "?"


def own_problems(result):
    """A NIC's problems that its own state shows, without failed pings to its peers (a failed path is judged
    across nodes: it may be the other end's)."""
    if "local_problems" in result:
        return list(result["local_problems"])
    return [p for p in result.get("problems") or [] if not p.startswith(FAILED_PING)]


def own_finding(result):
    """(subject, cause) of a NIC whose own state is wrong, else None: the rule the node health agent and
    diagnose share."""
    problems = own_problems(result)
    return (subject(result), "; ".join(problems)) if problems else None


def check_peers(result, peers, run, ping, sleep=None, tries=SEND_TRIES):
    """Ping each peer at the NIC's MTU; ``run(argv)`` returns (rc, out, err).

    A ping that could not even be sent (ENOBUFS and the like) is retried with a growing pause; if it never
    goes out, the NIC gets a local problem saying so, and the peer is not counted as a failed path.
    Returns those local problems."""
    mtu = result.get("expected_mtu") or result.get("mtu")
    local_problems = []
    for peer in peers:
        argv = ping_argv(ping, result["iface"], mtu, peer)
        for attempt in range(tries):
            rc, out, err = run(argv)
            why = (err or out or "").strip().splitlines()
            local = None if rc == 0 else local_send_error(err or out)
            if not local or attempt == tries - 1:
                break
            if sleep:
                sleep(0.2 * (2 ** attempt))
        ok = rc == 0
        entry = {"address": peer, "ok": ok, "argv": argv, "tries": attempt + 1}
        if local and not ok:
            # nothing left the node: this says nothing about the path, so the peer is not judged
            entry["ok"] = None
            entry["local_error"] = local
            local_problems.append("ping to %s could not be sent after %d tries (%s): this node's send "
                                  "queue or neighbour table is full" % (peer, attempt + 1, local))
            result["problems"].append(local_problems[-1])
        elif not ok:
            result["problems"].append(FAILED_PING + "-s %d to %s failed%s" % (
                ping_size(mtu, peer), peer, (" (%s)" % why[-1]) if why else ""))
        result["peers"].append(entry)
    return local_problems


def gid_index(family):
    """The GID index the family's NCCL settings pin (NCCL_IB_GID_INDEX; A4X Max: 3), or None."""
    fam = families.FAMILIES.get(family) if family else None
    value = (fam or {}).get("nccl_env", {}).get("NCCL_IB_GID_INDEX")
    return int(value) if value is not None else None


def _gid_at(dev, index):
    """The GID at index on the device's first port that has one, or None."""
    for _port, pinfo in sorted(dev["ports"].items()):
        for gid in pinfo["gids"]:
            if gid["index"] == index:
                return gid
    return None


def check_rdma(results, rdma_devices, mode, gid_at=None):
    """gIB: every NIC's RDMA device ACTIVE, its GID table holding the NIC's IPv4 (IPv6 on an IPv6-only NIC),
    and where the family's NCCL settings pin a GID index (gid_at), the NIC's address at that index: NCCL
    takes the GID there, whatever else the table holds.

    mode: 'required' (no devices is a problem for every NIC), 'auto' (no
    devices on the node: the check is skipped and said so), 'skip'.
    Returns the rdma summary dict; adds problems to ``results``.
    """
    if mode == "skip":
        return {"checked": False, "reason": "RDMA check not requested", "devices": []}
    if not rdma_devices:
        if mode == "required":
            for res in results:
                res["problems"].append(NO_RDMA)
        return {"checked": mode == "required", "reason": NO_RDMA, "devices": []}
    by_netdev = {}
    for dev in rdma_devices.values():
        for ndev in dev["netdevs"]:
            by_netdev[ndev] = dev
    for res in results:
        if not res["iface"]:
            continue
        dev = by_netdev.get(res["iface"])
        if dev is None:
            res["problems"].append("no RDMA device for this interface")
            continue
        res["rdma_device"] = dev["name"]
        for port, pinfo in sorted(dev["ports"].items()):
            if pinfo["state"] != "ACTIVE":
                res["problems"].append("RDMA %s port %s is %s, expected ACTIVE"
                                       % (dev["name"], port, pinfo["state"] or "unknown"))
        # the NIC's own address family: an IPv6-only NIC's GID is its IPv6 address, whatever IPv4 it holds
        ipv6_only = bool(res.get("expected_ipv6")) and not res.get("expected_ip")
        want = None if ipv6_only else (res.get("expected_ip") or next(
            (a for a in res["ipv4"] if not a.startswith("169.254.")), None))
        if want:
            gid_ips = set(g["ipv4"] for p in dev["ports"].values() for g in p["gids"] if g["ipv4"])
            if want not in gid_ips:
                res["problems"].append("RDMA %s GID table lacks %s (has %s)"
                                       % (dev["name"], want, ", ".join(sorted(gid_ips)) or "no IPv4 GIDs"))
                continue
        else:
            # an IPv6-only NIC: its RoCE v2 GID is its IPv6 address itself
            want = res.get("expected_ipv6") or (res["ipv6"][0] if res["ipv6"] else None)
            gid_ips = set(a for a in (norm_ipv6(g["gid"]) for p in dev["ports"].values() for g in p["gids"]
                                      if not g["ipv4"])
                          if a and a != "::" and not a.startswith("fe80:"))
            if want and want not in gid_ips:
                res["problems"].append("RDMA %s GID table lacks %s (has %s)"
                                       % (dev["name"], want, ", ".join(sorted(gid_ips)) or "no global IPv6 GIDs"))
                continue
        if want and gid_at is not None:
            gid = _gid_at(dev, gid_at)
            held = (gid or {}).get("ipv4") or norm_ipv6((gid or {}).get("gid"))
            if held != want:
                res["problems"].append("RDMA %s GID index %d holds %s, not %s, and NCCL_IB_GID_INDEX is %d for "
                                       "this family" % (dev["name"], gid_at, held or "nothing", want, gid_at))
    return {"checked": True, "reason": None, "devices": sorted(rdma_devices)}


def rdma_mode(requested, family=None):
    """(mode, why, GID index) of the RDMA check: a family that does not use RDMA skips it unless it is
    required; the GID index is the one the family's NCCL settings pin, if any."""
    if requested == "skip":
        return "skip", None, None
    fam = families.FAMILIES.get(family) if family else None
    if fam and fam["transport"] != "gib" and requested != "required":
        return "skip", "%s uses %s, not RDMA" % (family, fam["transport"]), None
    return requested, None, gid_index(family)


def check_node(items, interfaces, rdma_devices, rdma, run, ping, peers_of, sleep=None):
    """Every expected NIC of a node: its own state, its RDMA device, then full-MTU pings to its peers.

    rdma: (mode, why, GID index) from rdma_mode(); peers_of(item, result) -> the addresses to ping out of that NIC;
    ping: the ping program, or None where the node has none. Returns (results, rdma summary); each
    result has ``ready``, ``problems`` and ``local_problems`` (what the NIC's own state explains, apart
    from what the pings say about its paths).
    """
    results = [check_nic(item, interfaces) for item in items]
    mode, why, gid_at = rdma
    rdma_summary = check_rdma(results, rdma_devices, mode, gid_at)
    if why:
        rdma_summary["reason"] = why
    for item, res in zip(items, results):
        res["local_problems"] = list(res["problems"])
        peers = peers_of(item, res)
        # pinging out of a NIC that is missing or at the wrong MTU proves nothing new
        if peers and not res["problems"]:
            if not ping:
                res["problems"].append("ping (iputils) is not on this node")
            else:
                res["local_problems"] += check_peers(res, peers, run, ping, sleep=sleep)
    for res in results:
        res["ready"] = not res["problems"]
    return results, rdma_summary


def summary(results, node=None):
    """One line naming every bad NIC and why, or None when all are ready."""
    bad = [r for r in results if r["problems"]]
    if not bad:
        return None
    where = " on %s" % node if node else ""
    return "%d of %d GPU NICs not ready%s: %s" % (
        len(bad), len(results), where, "; ".join("%s: %s" % (r["name"], ", ".join(r["problems"])) for r in bad))
