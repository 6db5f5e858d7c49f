# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which GPU NIC is at fault, by evidence rather than by link.

Input, per host, is what gpudirect.gcp.gpu_nic_ready returned for each GPU
NIC: its own state (``local_problems``) and full-MTU pings to the same NIC
index on the other nodes (``peers``: address, ok).

1. A NIC whose own state is wrong (missing, down, no address, wrong MTU) is
   the finding. Pings to it or from it say nothing more and are ignored, so
   its healthy peers are never blamed for it.
2. Among paths whose two ends both look healthy, a NIC that fails to more
   than half of two or more peers is the bad one; it is taken out and the
   rest counted again (the worst NIC first).
3. A failed path that neither rule explains (two nodes, or an even split) is
   one finding for the path, not one for each end.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import nic_ready
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import finding


def localise(nics_by_host, repairs):
    """Findings for the GPU NICs of every host: {host: [node_health_info's nics result]} -> [finding]."""
    out = []
    by_addr = {}
    bad = set()
    for host in sorted(nics_by_host):
        for nic in nics_by_host[host] or []:
            end = (host, nic_ready.subject(nic))
            if nic.get("expected_ip"):
                by_addr[nic["expected_ip"]] = end
            own = nic_ready.own_finding(nic)
            if own:
                bad.add(end)
                out.append(finding(host, "nic", own[0], "fail", own[1], repairs.role(host, "nic")))
    paths = {}
    for host in sorted(nics_by_host):
        for nic in nics_by_host[host] or []:
            src = (host, nic_ready.subject(nic))
            for ping in nic.get("peers") or []:
                dst = by_addr.get(ping.get("address"))
                # ok None: the ping never left this node (a local send error), so the path is not judged
                if dst is None or dst[0] == host or src in bad or dst in bad or ping.get("ok") is None:
                    continue
                key = tuple(sorted([src, dst]))
                paths[key] = paths.get(key, True) and bool(ping.get("ok"))
    blamed = set()
    while True:
        tested, failed = {}, {}
        for (a, b), ok in paths.items():
            if a in blamed or b in blamed:
                continue
            for end, other in ((a, b), (b, a)):
                tested.setdefault(end, []).append(other)
                if not ok:
                    failed.setdefault(end, []).append(other)
        worst = sorted((end for end in failed if len(tested[end]) >= 2 and 2 * len(failed[end]) > len(tested[end])),
                       key=lambda e: (-len(failed[e]), -len(failed[e]) / float(len(tested[e])), e))
        if not worst:
            break
        end = worst[0]
        blamed.add(end)
        peers = ", ".join("%s %s" % o for o in sorted(failed[end]))
        out.append(finding(
            end[0], "nic", end[1], "fail",
            "full-MTU pings fail to %d of %d peers whose own NIC is healthy (%s), while this NIC's own state "
            "looks right: check the VPC firewall and routes for this NIC's network, else the NIC or its host"
            % (len(failed[end]), len(tested[end]), peers),
            repairs.report_host(end[0], "GPU NIC %s fails to reach %d of %d peers" % (
                end[1], len(failed[end]), len(tested[end])))))
    for (a, b), ok in sorted(paths.items()):
        if ok or a in blamed or b in blamed:
            continue
        out.append(finding(
            a[0], "fabric", "%s <-> %s %s" % (a[1], b[0], b[1]), "fail",
            "full-MTU pings fail between %s %s and %s %s although both NICs look healthy; with %s the fault "
            "cannot be pinned on one end: check the VPC firewall and routes, then diagnose with more nodes"
            % (a[0], a[1], b[0], b[1], "one peer" if len(nics_by_host) <= 2 else "no majority"),
            None))
    return out
