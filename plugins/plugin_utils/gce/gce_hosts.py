# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Turn Compute API instance resources into inventory hosts.

Pure functions (no network, no Ansible objects) so they are easy to test and
the cache can hold their output.  GPU facts come from the family table.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import ipaddress
import re

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.host import topology

# The VPC MTU when a network does not set one [Compute API networks resource].
DEFAULT_VPC_MTU = 1460
# names Ansible gives a meaning of its own: a host so named would run every `hosts: localhost` play and
# `delegate_to: localhost` task over SSH on that VM, or break the inventory (the implicit groups)
RESERVED_HOSTNAMES = ("localhost", "127.0.0.1", "::1", "all", "ungrouped")

HOSTNAME_SOURCES = ("name", "private_ip", "public_ip", "id", "labels.<key>")
ANSIBLE_HOST_SOURCES = ("private_ip", "public_ip", "name")

# Every host variable host_vars() makes, in the order it makes them.
HOST_VARS = ("gpu_family", "gpu_class", "gpu_transport", "gce_project", "gce_zone", "gce_name", "gce_id",
             "gce_machine_type", "gce_labels", "gce_status", "gce_provisioning_model", "gce_placement_policies",
             "gce_topology", "gce_reservation", "gce_accelerators", "gce_nics", "gpu_nics")
# What the collection's roles, playbooks, filters, modules, AWX project and inventories read from a
# host (gce_status is AWX's enabled_var). ansible-core pays for every value an inventory sets, once
# when it is added and again whenever the host's variables are resolved or listed, so a host
# carries only these unless the host_vars option asks for more.
MINIMAL_HOST_VARS = ("gpu_family", "gpu_transport", "gce_project", "gce_zone", "gce_name", "gce_status",
                     "gce_topology", "gce_nics", "gpu_nics")
# The NIC keys the roles read (gpu_nic_facts, gpu_nic_ready, gpu_network, diagnose, nccl_profile,
# rxdm): matching by name, IP (IPv6 on an IPv6-only NIC) or MAC, the VPC MTU, and the network peers share.
MINIMAL_NIC_KEYS = ("name", "network", "ip", "ipv6", "mtu", "mac")
# The stack type of a NIC with an IPv6 address and no IPv4 (A4X Max's RDMA NICs) [Compute v1 enums]
IPV6_ONLY = "IPV6_ONLY"
HOST_VARS_MODES = ("minimal", "full")


def last_segment(url):
    """'.../zones/us-central1-a' -> 'us-central1-a'; None stays None."""
    if not url:
        return None
    return str(url).rstrip("/").rsplit("/", 1)[-1]


def subnetwork_name(url):
    return last_segment(url)


def safe_group_name(name):
    """Group names: letters, digits and underscores only (dashes become _)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", str(name))


def class_group(gpu_class):
    """The default group of the GPU VMs of one class the phases leave out (families.OTHER_GPU_MACHINES)."""
    return "class_" + safe_group_name(gpu_class)


def machine_type_regex(machine_types):
    """A Compute API (RE2) regex matching machineType URLs of the given names."""
    return ".*/(%s)" % "|".join(regex_escape(m) for m in sorted(machine_types))


def regex_escape(text):
    """Escape RE2 metacharacters (leaves '-' alone, unlike re.escape)."""
    return re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", str(text))


_ZONE_IN_LINK = re.compile(r"/zones/([^/]+)/")


def instance_zone(instance, scope=None):
    """An instance's zone: its zone field, else its selfLink, else the list scope ("zones/<z>") it came in."""
    value = instance.get("zone")
    zone = last_segment(value) if isinstance(value, str) else None
    if zone:
        return zone
    link = instance.get("selfLink")
    match = _ZONE_IN_LINK.search(link) if isinstance(link, str) else None
    if match:
        return match.group(1)
    if scope and scope.startswith("zones/"):
        return last_segment(scope)
    return None


def left_out(instance):
    """Why an instance of a GPU family cannot be part of the inventory, or None.

    Only data reasons: the record lacks what the roles need (its machine type,
    every NIC its family has, an internal IP on each GPU NIC: IPv6 on an IPv6-only
    one), a NIC contradicts the family table (nic_roles), or the record is not
    shaped like an instance resource at all."""
    try:
        return _left_out(instance)
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
        return "malformed record (%s)" % type(exc).__name__


def record(instance, project, mtus):
    """(host vars, None), or (None, why the record cannot be used): never raises on a malformed record."""
    why = left_out(instance)
    if why:
        return None, why
    return checked_host_vars(instance, project, mtus)


def checked_host_vars(instance, project, mtus):
    """host_vars of a record left_out() passed: (host vars, None), or (None, why) when it is malformed anyway."""
    try:
        return host_vars(instance, project, mtus), None
    except NicContradiction as exc:
        return None, str(exc)
    except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
        return None, "malformed record (%s)" % type(exc).__name__


def _left_out(instance):
    if not isinstance(instance, dict):
        return "malformed record (not a mapping)"
    if not isinstance(instance.get("machineType"), str) or not instance.get("machineType"):
        return "no machine type"
    family = families.family_for_machine_type(instance_machine_type(instance))
    if not family:
        return None
    nics = instance.get("networkInterfaces") or []
    if not isinstance(nics, list) or not all(isinstance(n, dict) for n in nics):
        return "malformed record (networkInterfaces)"
    want = families.FAMILIES[family]["nics"]["count"]
    if len(nics) < want:
        return "%d NICs, but %s has %d" % (len(nics), family, want)
    try:
        gpu, _others = nic_roles(nics, family)
    except NicContradiction as exc:
        return str(exc)
    for slot, nic in gpu:
        if nic.get("stackType") == IPV6_ONLY:
            if not nic.get("ipv6Address"):
                return "GPU NIC %s is IPv6-only and has no internal IPv6 address" % nic_label(slot, nic)
        elif not nic.get("networkIP"):
            return "GPU NIC %s has no internal IP" % nic_label(slot, nic)
    for slot, nic in ordered_nics(nics):
        for key, what in (("networkIP", "an internal IP"), ("ipv6Address", "an internal IPv6 address")):
            if nic.get(key) is not None and not is_address(nic[key]):
                return "NIC %s has %s that is not an address (%r)" % (nic_label(slot, nic), what, nic[key])
    return None


def is_address(value):
    """Whether the API's value is an IP address (it reaches ansible_host and SSH as it is)."""
    if not isinstance(value, str):
        return False
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


class NicContradiction(ValueError):
    """A NIC record that contradicts the family table; its text names the NIC and what contradicts."""


_NIC_NAME = re.compile(r"^nic(\d+)$")
# nicType values that say nothing about the NIC: the API leaves the field out when none was asked for
_UNSTATED_NIC_TYPES = (None, "", "UNSPECIFIED_NIC_TYPE")


def nic_label(slot, raw):
    return raw.get("name") or "nic%d" % slot


def nic_slot(position, raw):
    """A NIC's number: the N of its API name nicN (the API numbers NICs as they were attached, whatever
    order a listing gives them in), else its place in the list."""
    name = raw.get("name")
    match = _NIC_NAME.match(name) if isinstance(name, str) else None
    return int(match.group(1)) if match else position


def ordered_nics(raws):
    """[(slot, raw NIC)] in nicN order; NicContradiction when two NICs claim one slot."""
    seen = {}
    for position, raw in enumerate(raws):
        slot = nic_slot(position, raw)
        if slot in seen:
            raise NicContradiction("two NICs stand for nic%d (%s and %s)"
                                   % (slot, nic_label(slot, seen[slot]), nic_label(slot, raw)))
        seen[slot] = raw
    return sorted(seen.items(), key=lambda item: item[0])


def _types(names):
    return " or ".join(sorted(set(names)))


def nic_roles(raws, family):
    """(GPU NICs, other NICs) of an instance of a GPU family, each [(slot, raw NIC)] in nicN order.

    Each NIC is judged by its own fields against the family table: where the GPU NICs have a nicType of their
    own (MRDMA beside gVNIC or IDPF), the nicType says which NICs they are; otherwise (gVNIC everywhere, or a
    record that states no nicType) the NIC's name nicN does. NicContradiction names the NIC and what
    contradicts the table: a nicType the family has not, the wrong number of GPU NICs, an RDMA NIC as the
    primary NIC, a GPU NIC without a network or of another stack type."""
    spec = families.FAMILIES[family]["nics"]
    table_types = spec["nic_types"]
    gpu_types = set(table_types[i] for i in spec["gpu_indexes"])
    host_types = set(table_types[i] for i in spec["host_indexes"])
    nics = ordered_nics(raws)
    stated = [(slot, raw) for slot, raw in nics if raw.get("nicType") not in _UNSTATED_NIC_TYPES]
    for slot, raw in stated:
        if raw["nicType"] not in gpu_types | host_types:
            raise NicContradiction("NIC %s has nicType %s, but %s's NICs are %s"
                                   % (nic_label(slot, raw), raw["nicType"], family, _types(table_types)))
    want = len(spec["gpu_indexes"])
    if stated and gpu_types.isdisjoint(host_types):
        gpu = [(slot, raw) for slot, raw in nics if raw.get("nicType") in gpu_types]
        if len(gpu) != want:
            # the NICs at fault: those whose nicType differs from what the table has at their place
            odd = [nic_label(slot, raw) + " is " + raw["nicType"] for slot, raw in stated
                   if (raw["nicType"] in gpu_types) != (slot in spec["gpu_indexes"])]
            raise NicContradiction("%s%d %s NICs, but %s has %d" % (
                "NIC %s: " % ", ".join(odd) if odd else "", len(gpu), _types(gpu_types), family, want))
        first_slot, first = nics[0]
        if first.get("nicType") in gpu_types:
            raise NicContradiction("NIC %s (the primary NIC) has nicType %s, but %s's primary NIC is %s" % (
                nic_label(first_slot, first), first["nicType"], family, _types(host_types)))
    else:
        by_slot = dict(nics)
        missing = [i for i in spec["gpu_indexes"] if i not in by_slot]
        if missing:
            raise NicContradiction("no NIC named %s, a GPU NIC of %s"
                                   % (", ".join("nic%d" % i for i in missing), family))
        gpu = [(i, by_slot[i]) for i in spec["gpu_indexes"]]
        for slot, raw in gpu:
            if raw.get("nicType") not in _UNSTATED_NIC_TYPES and raw["nicType"] not in gpu_types:
                raise NicContradiction("GPU NIC %s has nicType %s, but %s's GPU NICs are %s"
                                       % (nic_label(slot, raw), raw["nicType"], family, _types(gpu_types)))
    stack = spec.get("gpu_stack_type")
    for slot, raw in gpu:
        if not raw.get("network"):
            raise NicContradiction("GPU NIC %s has no network" % nic_label(slot, raw))
        # the API leaves stackType out on an IPv4-only NIC [Compute v1 networkInterfaces]
        if stack and (raw.get("stackType") or "IPV4_ONLY") != stack:
            raise NicContradiction("GPU NIC %s has stack type %s, but %s's GPU NICs are %s"
                                   % (nic_label(slot, raw), raw.get("stackType") or "IPV4_ONLY", family, stack))
    gpu_slots = set(slot for slot, _raw in gpu)
    return gpu, [(slot, raw) for slot, raw in nics if slot not in gpu_slots]


def instance_machine_type(instance):
    return families.machine_type_name(instance.get("machineType"))


def default_machine_types():
    """The family table's machine types, and the GPU VMs the phases do not configure (G4, A4X Max), which the
    inventory names and groups so that the phases can say they leave them out."""
    others = [t for spec in families.OTHER_GPU_MACHINES.values() for t in spec["machine_types"]]
    return sorted(list(families.MACHINE_TYPES) + others)


def _nic(slot, raw, mtus):
    access = raw.get("accessConfigs") or []
    public_ip = None
    for cfg in access:
        # an external address that is not one is no address to connect to
        if cfg.get("natIP") and is_address(cfg["natIP"]):
            public_ip = cfg["natIP"]
            break
    network = raw.get("network")
    nic = {
        "name": nic_label(slot, raw),
        "nic_type": raw.get("nicType"),
        "network": last_segment(network),
        "subnetwork": subnetwork_name(raw.get("subnetwork")),
        "ip": raw.get("networkIP"),
        "public_ip": public_ip,
        "stack_type": raw.get("stackType") or "IPV4_ONLY",
        "mtu": mtus.get(network) if network in mtus else None,
    }
    # Instance resources rarely carry a MAC, and only dual-stack and IPv6-only NICs an IPv6 address; an
    # always-null key would only add thousands of values to a large inventory (consumers use .get / default).
    if raw.get("macAddress"):
        nic["mac"] = raw["macAddress"]
    if raw.get("ipv6Address"):
        nic["ipv6"] = raw["ipv6Address"]
    return nic


def _reservation(instance):
    affinity = instance.get("reservationAffinity") or {}
    if affinity.get("consumeReservationType") == "SPECIFIC_RESERVATION":
        values = affinity.get("values") or []
        if values:
            return last_segment(values[0])
    return None


def host_vars(instance, project, mtus):
    """Contract host vars for one raw instance (strings as received)."""
    machine_type = families.machine_type_name(instance.get("machineType"))
    family = families.family_for_machine_type(machine_type)
    transport = families.FAMILIES[family]["transport"] if family else None
    raws = instance.get("networkInterfaces") or []
    # in nicN order, so that nic0, the primary NIC, comes first (hostnames and ansible_host read it)
    nics = [_nic(slot, raw, mtus) for slot, raw in ordered_nics(raws)]
    gpu_nics = []
    if family:
        gpu, _others = nic_roles(raws, family)
        gpu_nics = [_nic(slot, raw, mtus) for slot, raw in gpu]
    scheduling = instance.get("scheduling") or {}
    return {
        "gpu_family": family,
        # the family, or the class of a GPU VM the phases do not configure (G4, A4X Max), else None
        "gpu_class": family or families.other_gpu_class(machine_type),
        "gpu_transport": transport,
        "gce_project": project,
        "gce_zone": instance_zone(instance),
        "gce_name": instance.get("name"),
        "gce_id": instance.get("id"),
        "gce_machine_type": machine_type,
        "gce_labels": dict(instance.get("labels") or {}),
        "gce_status": instance.get("status"),
        "gce_provisioning_model": scheduling.get("provisioningModel") or "STANDARD",
        "gce_placement_policies": [last_segment(p) for p in instance.get("resourcePolicies") or []],
        "gce_topology": topology.from_resource_status(instance.get("resourceStatus")),
        "gce_reservation": _reservation(instance),
        "gce_accelerators": [
            {"type": last_segment(a.get("acceleratorType")), "count": a.get("acceleratorCount")}
            for a in instance.get("guestAccelerators") or []
        ],
        "gce_nics": nics,
        "gpu_nics": gpu_nics,
    }


def inventory_host(instance, project, mtus, mode="minimal", extra=(), ansible_host_source="private_ip"):
    """(the variables the gce_gpu plugin gives the host of one raw instance, its default groups).

    The same record, trimmed by the host_vars option's mode and extra_host_vars, with ansible_host, as the
    plugin adds it; for static inventories and test fixtures, so none of them builds host vars of its own.
    ValueError says why an instance cannot be a host."""
    hvars, why = record(instance, project, mtus)
    if why:
        raise ValueError("instance %s: %s" % (instance.get("name") if isinstance(instance, dict) else "?", why))
    kept = slim(hvars, *kept_vars(mode, extra))
    address = ansible_host(ansible_host_source, hvars)
    if address:
        kept["ansible_host"] = address
    return kept, groups_for(hvars)


def kept_vars(mode, extra=()):
    """(names of the host vars a host keeps, NIC keys its NIC records keep or None for all) for the
    host_vars option's mode and extra_host_vars; ValueError names an unknown mode or variable."""
    if mode not in HOST_VARS_MODES:
        raise ValueError("option host_vars has unknown value %r; expected one of: %s"
                         % (mode, ", ".join(HOST_VARS_MODES)))
    for name in extra or ():
        if name not in HOST_VARS:
            close = difflib.get_close_matches(str(name), HOST_VARS, n=1)
            raise ValueError("option extra_host_vars: %r is not a host variable of this inventory%s"
                             % (name, ("; did you mean %s?" % close[0]) if close
                                else "; known: %s" % ", ".join(HOST_VARS)))
    if mode == "full":
        return HOST_VARS, None
    wanted = set(MINIMAL_HOST_VARS) | set(extra or ())
    return tuple(n for n in HOST_VARS if n in wanted), MINIMAL_NIC_KEYS


def slim(hvars, names, nic_keys=None):
    """The host vars a host keeps: only names, and NIC records with only nic_keys (None: all of them).

    A new mapping; hvars (which the cache holds) is left as it is."""
    out = {}
    for name in names:
        if name not in hvars:
            continue
        value = hvars[name]
        if nic_keys is not None and name in ("gce_nics", "gpu_nics"):
            value = [dict((k, nic[k]) for k in nic_keys if k in nic) for nic in value]
        out[name] = value
    return out


def hostname_candidate(spec, hvars):
    """Value of one `hostnames` entry (a string or {name, prefix, separator}) or None."""
    if isinstance(spec, dict):
        value = hostname_candidate(spec.get("name"), hvars)
        if value is None:
            return None
        prefix = spec.get("prefix")
        if prefix:
            prefix_value = hostname_candidate(prefix, hvars)
            if prefix_value is None:
                return None
            return "%s%s%s" % (prefix_value, spec.get("separator", "_"), value)
        return value
    nics = hvars.get("gce_nics") or []
    if spec == "name":
        return hvars.get("gce_name")
    if spec == "id":
        return hvars.get("gce_id")
    if spec == "private_ip":
        return nics[0].get("ip") if nics else None
    if spec == "public_ip":
        return nics[0].get("public_ip") if nics else None
    if spec in ("zone", "project"):
        return hvars.get("gce_" + spec)
    if isinstance(spec, str) and spec.startswith("labels."):
        return (hvars.get("gce_labels") or {}).get(spec[len("labels."):])
    raise ValueError("unknown hostnames entry %r; use name, private_ip, public_ip, id, zone, project, "
                     "labels.<key> or a dict with name/prefix/separator" % (spec,))


def validate_hostnames(specs):
    """Raise ValueError naming the bad entry of the `hostnames` option."""
    probe = {"gce_name": "x", "gce_nics": [], "gce_labels": {}}
    for spec in specs:
        if isinstance(spec, dict):
            if "name" not in spec:
                raise ValueError("hostnames entry %r needs a 'name' key" % (spec,))
            hostname_candidate(spec["name"], probe)
            if spec.get("prefix"):
                hostname_candidate(spec["prefix"], probe)
        else:
            hostname_candidate(spec, probe)


def pick_hostname(specs, hvars):
    for spec in specs:
        value = hostname_candidate(spec, hvars)
        if value:
            return str(value)
    return None


def ansible_host(source, hvars):
    nics = hvars.get("gce_nics") or []
    if source == "name":
        return hvars.get("gce_name")
    if not nics:
        return None
    return nics[0].get("public_ip" if source == "public_ip" else "ip")


def qualified_name(name, hvars):
    """The collision-safe form of a hostname: name.zone.project."""
    return "%s.%s.%s" % (name, hvars.get("gce_zone"), hvars.get("gce_project"))


def assign_hostnames(records, specs, duplicates="qualify"):
    """Give each (hvars) record a unique hostname.

    records: list of host var dicts.  Returns (list of (hostname, hvars),
    list of warning strings).  Instances are never merged: when two differ
    only by project or zone, both get the qualified name (or, with
    duplicates='error', a ValueError names them).
    """
    warnings = []
    named = []
    for hvars in records:
        name = pick_hostname(specs, hvars)
        if not name:
            warnings.append("instance %s in %s/%s has no value for any hostnames entry; skipped"
                            % (hvars.get("gce_name"), hvars.get("gce_project"), hvars.get("gce_zone")))
            continue
        if name.lower() in RESERVED_HOSTNAMES:
            qualified = qualified_name(name, hvars)
            warnings.append("hostname %s is one Ansible reserves (it would stand for the controller or every "
                            "host); instance %s is named %s" % (name, hvars.get("gce_name"), qualified))
            name = qualified
        named.append((name, hvars))
    seen = {}
    for name, hvars in named:
        seen.setdefault(name, []).append(hvars)
    out = []
    for name, hvars in named:
        clash = seen[name]
        if len(clash) == 1:
            out.append((name, hvars))
            continue
        where = ", ".join(sorted("%s/%s" % (h.get("gce_project"), h.get("gce_zone")) for h in clash))
        if duplicates == "error":
            raise ValueError("hostname %s is used by %d instances (%s); set duplicate_hostnames: qualify "
                             "or choose other hostnames" % (name, len(clash), where))
        out.append((qualified_name(name, hvars), hvars))
    qualified = sorted(set(n for n, h in named if len(seen[n]) > 1))
    for name in qualified:
        warnings.append("hostname %s is used by %d instances; they are named <name>.<zone>.<project>"
                        % (name, len(seen[name])))
    counts = {}
    for name, _hvars in out:
        counts[name] = counts.get(name, 0) + 1
    for name in sorted(n for n, c in counts.items() if c > 1):
        # one bad pair never costs the other hosts: both are left out, by name
        warnings.append("hostname %s is still used by %d instances after qualifying (same name, zone and "
                        "project); left out" % (name, counts[name]))
    return [(n, h) for n, h in out if counts[n] == 1], warnings


def groups_for(hvars, hostname=None):
    """The default group names of one host."""
    groups = []
    if hvars.get("gpu_family"):
        groups.append("family_" + safe_group_name(hvars["gpu_family"]))
    elif hvars.get("gpu_class"):
        # a GPU VM the phases do not configure: grouped by its class, and with the others they leave out
        groups += [class_group(hvars["gpu_class"]), "gpu_other"]
    if hvars.get("gpu_transport"):
        groups.append("transport_" + safe_group_name(hvars["gpu_transport"]))
    if hvars.get("gce_zone"):
        groups.append("zone_" + safe_group_name(hvars["gce_zone"]))
    if hvars.get("gce_project"):
        groups.append("project_" + safe_group_name(hvars["gce_project"]))
    for policy in hvars.get("gce_placement_policies") or []:
        groups.append("placement_" + safe_group_name(policy))
    topo = hvars.get("gce_topology") or {}
    if topo.get("block"):
        groups.append("block_" + safe_group_name(topo["block"]))
        if topo.get("subblock"):
            groups.append("subblock_%s_%s" % (safe_group_name(topo["block"]), safe_group_name(topo["subblock"])))
    return groups


_NETWORK_URL = re.compile(r"projects/([^/]+)/global/networks/([^/?#]+)")


def _some(names, most):
    """'a, b, c' or 'a, b, c (+4 more)'."""
    names = sorted(names)
    text = ", ".join(names[:most])
    return text + (" (+%d more)" % (len(names) - most) if len(names) > most else "")


def unread_networks(failures, kept, strict):
    """What becomes of the hosts on networks whose MTU could not be read: never a NIC without one.

    failures: {network URL: error with .status}; kept: [(project, instance)].
    Returns (error line or None, [warning lines], the (project, instance) pairs still kept). A 403 is a
    permission the credentials lack, most often compute.networks.get on a Shared VPC's host project: with
    strict it stops the inventory (an inventory silently short of hosts is worse than none); otherwise,
    and for other failures, the hosts on those networks are left out, one warning a project."""
    if not failures:
        return None, [], kept
    groups = {}  # (network project, denied) -> [urls]
    for url, exc in failures.items():
        match = _NETWORK_URL.search(url)
        owner = match.group(1) if match else "?"
        groups.setdefault((owner, getattr(exc, "status", None) == 403), []).append(url)
    errors, notes, lost = [], [], set()
    for (owner, denied), urls in sorted(groups.items()):
        urls = set(urls)
        on_them = [(p, inst) for p, inst in kept
                   if any(nic.get("network") in urls for nic in inst.get("networkInterfaces") or []
                          if isinstance(nic, dict))]
        hosts = ["%s (project %s)" % (inst.get("name"), p) if len(set(q for q, _i in on_them)) > 1
                 else str(inst.get("name")) for p, inst in on_them]
        shared = any(p != owner for p, _inst in on_them)
        nets = _some([last_segment(u) for u in urls], 4)
        what = "project %s%s" % (owner, ", the Shared VPC host project of network(s) %s" % nets if shared
                                 else " network(s) %s" % nets)
        if denied:
            cause = ("permission denied (403): the credentials lack compute.networks.get there (grant "
                     "roles/compute.networkViewer on project %s)" % owner)
        else:
            cause = " ".join(str(failures[sorted(urls)[0]]).split())[:300]
        if denied and strict:
            errors.append("%s: %s; %d host(s) on them would have no VPC MTU: %s (strict_permissions: false "
                          "leaves them out instead)" % (what, cause, len(hosts), _some(hosts, 5)))
            continue
        if hosts:
            notes.append("%s: %s; %d host(s) on them left out: %s" % (what, cause, len(hosts), _some(hosts, 5)))
        lost.update(id(inst) for _p, inst in on_them)
    if errors:
        return "; ".join(errors), notes, kept
    return None, notes, [(p, inst) for p, inst in kept if id(inst) not in lost]
