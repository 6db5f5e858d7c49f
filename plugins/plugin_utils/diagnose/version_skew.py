# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Software versions (and the family and zone) compared across the cluster and against pinned versions.

A node whose version differs from what most nodes run is named, not the
majority; with no majority every node is named. A version the user pinned
names every node that differs from it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import finding

# a kernel that differs is worth knowing, the rest break NCCL jobs or their pairing
SEVERITY = {"kernel": "warn"}
# components whose repair is one of this collection's roles (the rest need a new image)
ROLE_FOR = {"plugin": "nccl_plugin", "rxdm": "rxdm"}
NOT_FOUND = "not found"
# GPUDirect traffic stays within one machine family and one zone
SUBJECTS = {"family": "machine family", "zone": "zone"}
COMPONENTS = ("family", "zone", "driver", "kernel", "cuda", "nccl", "plugin", "rxdm")


def _subject(comp):
    return SUBJECTS.get(comp, "%s version" % comp)


def _fix(repairs, host, component):
    if component in ROLE_FOR:
        return repairs.role(host, ROLE_FOR[component])
    return None


def skew(versions_by_host, repairs, pinned=None, components=COMPONENTS, skip=None):
    """versions_by_host: {host: {component: version or None}}; skip: {(host, component)} already explained."""
    skip = skip or set()
    pinned = dict((k, v) for k, v in (pinned or {}).items() if v not in (None, ""))
    out = []
    hosts = sorted(versions_by_host)
    for comp in components:
        shown = dict((h, (versions_by_host[h] or {}).get(comp) or NOT_FOUND) for h in hosts)
        severity = SEVERITY.get(comp, "fail")
        if comp in pinned:
            for host in hosts:
                if shown[host] != str(pinned[comp]) and (host, comp) not in skip:
                    out.append(finding(host, "host", _subject(comp), severity,
                                       "%s %s, pinned %s" % (comp, shown[host], pinned[comp]),
                                       _fix(repairs, host, comp)))
            continue
        # a node whose difference another finding explains does not take part in the vote
        voters = [h for h in hosts if (h, comp) not in skip]
        values = sorted(set(shown[h] for h in voters))
        if len(values) < 2 or all(v == NOT_FOUND for v in values):
            continue
        counts = dict((v, sum(1 for h in voters if shown[h] == v)) for v in values)
        best = max(counts.values())
        leaders = [v for v in values if counts[v] == best]
        majority = leaders[0] if len(leaders) == 1 else None
        for host in voters:
            if shown[host] == majority:
                continue
            if majority is None:
                cause = "%s %s; the nodes disagree with no majority (%s)" % (
                    comp, shown[host], ", ".join("%s on %d" % (v, counts[v]) for v in values))
            else:
                cause = "%s %s, while %d of %d nodes run %s" % (
                    comp, shown[host], counts[majority], len(voters), majority)
            out.append(finding(host, "host", _subject(comp), severity, cause, _fix(repairs, host, comp)))
    return out
