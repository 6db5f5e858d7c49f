# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's part of a finding: the host it is on and the command that repairs it.

The finding itself (fields, components, severities, rungs) is module_utils/findings/finding.py.
A repair is a command line with this collection's playbooks where one of its roles can put the
fault right (``ansible-playbook gpudirect.gcp.site --limit H --tags T``), else Google's host repair.
Under AWX, where an operator launches jobs rather than commands, the same repair names the job
template to launch with its limit, tags and extra variables. Controller-side only, pure Python.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import shlex

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import place_blame
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import faulty_host

# bounds on a finding's text: its subject and cause often quote node output, which a job or a broken node
# can make as long as it likes
MAX_SUBJECT = 300
MAX_CAUSE = 2000
MAX_REPAIR = 4000

# the repair of a fault no role can put right: Google repairs the host under the VM
REPORT_HOST_ARGV = ["gcloud", "compute", "instances", "report-host-as-faulty"]
REPORT_HOST_BEHAVIOR = "PERFORMANCE"
# the site.yml phase (and tag) whose role puts each component right
REPAIR_TAGS = {"nic": "gpu_network", "rxdm": "rxdm", "nccl_plugin": "nccl_plugin",
               "nccl_profile": "nccl_profile", "host": "gpu_host"}


def clean(value, limit=MAX_CAUSE):
    """Text that may quote a node, as a finding holds it: secrets masked, one line, bounded."""
    if value is None:
        return None
    text = safe_text.to_text(value)
    # cut before masking (the kept part is all that is shown), leaving room for a secret that starts inside it
    return safe_text.one_line(safe_text.mask_text(text[:2 * limit + 512]), limit)


def finding(host, component, subject, severity, cause, repair=None):
    """A finding as the report shows it: on a host (None: the cluster), with its repair line. Every text is
    one line (node output can hold newlines and escapes), secrets masked in what quotes the node; the repair,
    a command this collection builds, is only made one line."""
    return fd.make(component, clean(subject, MAX_SUBJECT), severity, clean(cause) or "",
                   host=None if host is None else safe_text.one_line(host, MAX_SUBJECT),
                   repair=None if repair is None else safe_text.one_line(repair, MAX_REPAIR))


class Repairs(object):
    """How repair commands are spelled for this cluster.

    playbook: what runs the roles (gpudirect.gcp.site); args: options every
    command needs (an inventory, extra vars), as a list; zones: host -> zone,
    for the gcloud commands that ask Google to repair a host; pairs: host ->
    {plugin, rxdm}, the versions the node has; awx: {template, inventory}
    under AWX (the job template that runs site.yml with limit, tags and extra
    variables prompted, and the job's inventory), else empty.
    """

    def __init__(self, playbook="gpudirect.gcp.site", args=None, zones=None, pairs=None, awx=None):
        self.playbook = playbook
        self.args = list(args or [])
        self.zones = dict(zones or {})
        self.pairs = dict(pairs or {})
        self.awx = dict(awx or {}) if (awx or {}).get("template") else {}

    def _pair_vars(self, host, component):
        """The node's own plugin and RxDM versions, on the lines that install either: the repair puts back what
        the node had, never another pair. [(option, version)]"""
        if component not in ("nccl_plugin", "rxdm"):
            return []
        pair = self.pairs.get(host) or {}
        return [(option, pair[key]) for option, key in (("nccl_plugin_version", "plugin"), ("rxdm_version", "rxdm"))
                if pair.get(key) and ":" not in pair[key]]

    def role(self, host, component):
        """Re-run the phase whose role puts the component right, on this host only."""
        extra = self._pair_vars(host, component)
        if self.awx:
            line = 'AWX job template "%s": limit %s, tags %s' % (self.awx["template"], host, REPAIR_TAGS[component])
            if extra:
                line += ", extra variables %s" % json.dumps(dict(extra), sort_keys=True)
            return line
        argv = (["ansible-playbook", self.playbook] + self.args
                + [a for option, version in extra for a in ("-e", "%s=%s" % (option, version))]
                + ["--limit", host, "--tags", REPAIR_TAGS[component]])
        return " ".join(shlex.quote(a) for a in argv)

    def node_command(self, host, module, args=None):
        """One ad-hoc module run as root on this host, with the run's inventory."""
        if self.awx:
            where = (' on inventory "%s"' % self.awx["inventory"]) if self.awx.get("inventory") else ""
            return "AWX ad hoc command%s: limit %s, module %s%s, privilege escalation on" % (
                where, host, module, (", arguments %s" % json.dumps(args)) if args else "")
        argv = ["ansible", host] + self.args + ["--become", "-m", module]
        if args:
            argv += ["-a", args]
        return " ".join(shlex.quote(a) for a in argv)

    def perform_maintenance(self, host):
        """Start the host's scheduled maintenance now (on a drained node), instead of at Google's time."""
        argv = ["gcloud", "compute", "instances", "perform-maintenance", host]
        if self.zones.get(host):
            argv.append("--zone=%s" % self.zones[host])
        return " ".join(shlex.quote(a) for a in argv)

    def report_host(self, host, why, behavior=None):
        """Ask Google to repair the host under the VM (nothing on the node can fix it); behavior: the fault's
        kind (faulty_host.behavior_from), REPORT_HOST_BEHAVIOR when not given."""
        argv = REPORT_HOST_ARGV + [host]
        if self.zones.get(host):
            argv.append("--zone=%s" % self.zones[host])
        # the description quotes the node's own finding: one line, no secret, bounded
        argv += ["--disruption-schedule=IMMEDIATE",
                 "--fault-reasons=behavior=%s,description=%s" % (behavior or REPORT_HOST_BEHAVIOR, clean(why, 250))]
        return " ".join(shlex.quote(a) for a in argv)


def sort_key(item):
    return (fd.SEVERITIES.index(item["severity"]), item["host"] is None, item["host"] or "",
            fd.COMPONENTS.index(item["component"]), item["subject"] or "")


def ordered(items):
    """Failures first, then by host, component and subject; one finding per (host, component, subject)."""
    seen = set()
    out = []
    for item in sorted(items, key=sort_key):
        key = (item["host"], item["component"], item["subject"])
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def faulty_hosts(items):
    """One report per host whose failing finding's repair is Google's host repair: [{host, behavior,
    description}]; the description names the first such finding's component, subject and cause,
    cut to 250 characters."""
    prefix = " ".join(REPORT_HOST_ARGV) + " "
    out = {}
    for item in ordered(items):
        if item["severity"] != "fail" or item["host"] is None or not (item.get("repair") or "").startswith(prefix):
            continue
        out.setdefault(item["host"], {"host": item["host"], "behavior": faulty_host.behavior_from(item)[0],
                                      "description": clean("%s %s: %s" % (item["component"], item["subject"],
                                                                          item["cause"]), 250)})
    return [out[h] for h in sorted(out)]


def failed_hosts(items):
    return sorted(set(f["host"] for f in items if f["severity"] == "fail" and f["host"] is not None))


def summary(items, hosts, places=None, share=None):
    """Counts for AWX and the report header: hosts checked, failed and clean, the verdict and, where failing
    nodes cluster in one sub-block or block, that place (place_blame; places: {host: place}, share: the
    share of a place's nodes that must fail, place_blame.DEFAULT_SHARE when None)."""
    failed = failed_hosts(items)
    flagged = set(f["host"] for f in items if f["host"] is not None)
    return {
        "fail": sum(1 for f in items if f["severity"] == "fail"),
        "warn": sum(1 for f in items if f["severity"] == "warn"),
        "hosts": len(hosts),
        "failed_hosts": failed,
        "clean_hosts": sorted(h for h in hosts if h not in flagged),
        # a diagnosis of no node judged nothing: never a pass
        "verdict": ("fail" if any(f["severity"] == "fail" for f in items)
                    else "pass" if hosts else "not_judged"),
        "place_blame": place_blame.blame(failed, hosts, places, share=share),
    }
