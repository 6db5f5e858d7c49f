# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NCCL environment as NCCL used it, and where each value came from.

The profile this collection writes is one source among several: an environment plugin (gIB 1.1.2 and
later ship one that NCCL 2.28+ loads) answers NCCL's variable reads itself, /etc/nccl.conf and the job's
own environment add more. NCCL says what it read when run with NCCL_DEBUG_SUBSYS=ENV (nccl_parse keeps
those lines), so a run can be compared with what it was given:

  source "profile"             NCCL used the value the run passed (the NCCL env file);
  source "environment plugin"  an environment plugin was loaded and the value is not the one passed;
  source "not passed"          NCCL read a value the run did not pass (/etc/nccl.conf, the environment
                               of the launcher, or a plugin that NCCL did not name).

Conflicts, each {severity, subject, cause}:
  - a profile value NCCL did not use (warn): someone else's value won;
  - a value the family table knows to break the family silently (fail);
  - NCCL_NET naming a network NCCL found no device of (fail): the job forces a plugin the node cannot use.

Values, the plugin's name and every cause are shown as results and reports show text: credentials masked
(NCCL_ names are never secret, a value can still carry one) and on one line; they are compared unmasked.

Plain Python with no ansible import: the nccl_tests module runs it on the launcher.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text

# what the nccl-tests run sets for its own checks, never the profile's to own
RUN_OWNED = ("NCCL_DEBUG", "NCCL_DEBUG_SUBSYS")


def shown(value):
    """A value as results and reports show it: credentials masked, on one line (None stays None)."""
    return None if value is None else safe_text.one_line(safe_text.mask_text(value))


def used(family, parsed, passed):
    """{effective: {name: {value, source, passed}}, plugin, conflicts} of one nccl-tests run.

    parsed: nccl_parse.parse()'s result; passed: the environment the run gave NCCL (the profile, plus
    the run's own NCCL_DEBUG settings)."""
    passed = dict((k, str(v)) for k, v in (passed or {}).items())
    plugin = parsed.get("env_plugin")
    effective = {}
    for name, value in sorted((parsed.get("env_set") or {}).items()):
        given = passed.get(name)
        if given is not None and given == value:
            source = "profile" if name not in RUN_OWNED else "nccl-tests run"
        elif plugin:
            source = "environment plugin"
        else:
            source = "not passed"
        effective[name] = {"value": value, "source": source, "passed": given}
    found = conflicts(family, effective, plugin, parsed.get("no_device") or [], passed, parsed.get("env_differs") or [])
    return {"effective": dict((shown(name), dict(item, value=shown(item["value"]), passed=shown(item["passed"])))
                              for name, item in effective.items()),
            "plugin": shown(plugin), "conflicts": found}


def conflicts(family, effective, plugin, no_device, passed, differs=()):
    """The conflicts of the unmasked values, each written with shown() values."""
    out = []
    for name, item in sorted(effective.items()):
        if name in RUN_OWNED or item["passed"] is None or item["passed"] == item["value"]:
            continue
        who = ("the environment plugin %s" % shown(plugin)) if plugin else \
            "a value the run did not pass (/etc/nccl.conf?)"
        given, value = shown(item["passed"]), shown(item["value"])
        what = ("the profile sets %s, NCCL used %s" % (given, value) if given != value else
                "the profile sets %s, NCCL used another value (they differ only where masked)" % given)
        out.append({"severity": "warn", "subject": shown(name), "cause": "%s: %s won" % (what, who)})
    for name in sorted(differs):
        out.append({"severity": "warn", "subject": shown(name), "cause": "ranks of one run read different values"})
    fam = families.FAMILIES.get(family) or {}
    for name, bad in sorted((fam.get("nccl_env_bad") or {}).items()):
        value = (effective.get(name) or {}).get("value", passed.get(name))
        if value is not None and str(value) == bad["value"]:
            out.append({"severity": "fail", "subject": name,
                        "cause": "%s=%s %s [%s]" % (name, shown(value), bad["why"], bad["source"])})
    forced = (effective.get("NCCL_NET") or {}).get("value") or passed.get("NCCL_NET")
    if forced and any(net.lower() == forced.lower() for net in no_device):
        out.append({"severity": "fail", "subject": "NCCL_NET",
                    "cause": "NCCL_NET=%s forces a network NCCL found no device of (NET/%s: No device found): "
                             "the job cannot run where it was placed; run it where the devices are, or let NCCL "
                             "choose (unset NCCL_NET%s)" % (shown(forced), shown(forced),
                                                            ", and NCCL_ENV_PLUGIN=none" if plugin else "")})
    return out


def merged(items):
    """One view of several runs: the first run's effective values and every distinct conflict."""
    items = [i for i in items if i]
    if not items:
        return None
    seen, out = set(), []
    for item in items:
        for conflict in item["conflicts"]:
            key = (conflict["subject"], conflict["cause"])
            if key not in seen:
                seen.add(key)
                out.append(conflict)
    return {"effective": items[0]["effective"], "plugin": items[0]["plugin"], "conflicts": out}
