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
                               of the launcher, or a plugin that NCCL did not name);
  source "NCCL default"        NCCL could not read the value it was given and used its default.

Every form NCCL prints a value it uses in counts (nccl_parse._ENV_FORMS), and two spellings of one value
(nccl_parse.same_value) are the same value. The plugins NCCL loaded, with their interface versions, and the
network it used are part of the result: {plugins: {net|collnet|gin|tuner|profiler|env: {name, version}},
network}.

Conflicts, each {severity, subject, cause}:
  - a profile value NCCL did not use (warn): someone else's value won;
  - a value NCCL could not read (warn): it used its default;
  - a value the family table knows to break the family silently (fail);
  - NCCL_NET naming a network NCCL found no device of (fail): the job forces a plugin the node cannot use.

Values, the plugin's name and every cause are shown as results and reports show text: credentials masked
(NCCL_ names are never secret, a value can still carry one) and on one line; they are compared unmasked.

Plain Python with no ansible import: the nccl_tests module runs it on the launcher. It lives with the
nccl-tests runs (module_utils/nccl_tests/), not with the profile: it reads a run's output (through
nccl_parse), and the runner, the report and the nccl_tests_parse filter are its users.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_parse

# what the nccl-tests run sets for its own checks, never the profile's to own
RUN_OWNED = ("NCCL_DEBUG", "NCCL_DEBUG_SUBSYS")


def shown(value):
    """A value as results and reports show it: credentials masked, on one line (None stays None)."""
    return None if value is None else safe_text.one_line(safe_text.mask_text(value))


def shown_plugins(plugins):
    """{kind: {name, version}} with each name as results show text."""
    return dict((shown(kind), {"name": shown(item.get("name")), "version": item.get("version")})
                for kind, item in sorted((plugins or {}).items()) if isinstance(item, dict))


def used(family, parsed, passed):
    """{effective: {name: {value, source, passed}}, plugin, plugins, network, conflicts} of one nccl-tests run.

    parsed: nccl_parse.parse()'s result; passed: the environment the run gave NCCL (the profile, plus
    the run's own NCCL_DEBUG settings). plugins: {kind: {name, version}} of the net, collnet, gin, tuner,
    profiler and env plugins NCCL loaded (name "internal" where it used its own); network: the network NCCL
    used ("Using network gIB")."""
    passed = dict((k, str(v)) for k, v in (passed or {}).items())
    plugin = parsed.get("env_plugin")
    invalid = parsed.get("env_invalid") or {}
    effective = {}
    for name, value in sorted((parsed.get("env_set") or {}).items()):
        given = passed.get(name)
        if name in invalid:
            source = "NCCL default"
        elif given is not None and nccl_parse.same_value(name, given, value):
            source = "profile" if name not in RUN_OWNED else "nccl-tests run"
        elif plugin:
            source = "environment plugin"
        else:
            source = "not passed"
        effective[name] = {"value": value, "source": source, "passed": given}
    found = conflicts(family, effective, plugin, parsed.get("no_device") or [], passed, parsed.get("env_differs") or [],
                      invalid)
    nets = parsed.get("net_names") or []
    return {"effective": dict((shown(name), dict(item, value=shown(item["value"]), passed=shown(item["passed"])))
                              for name, item in effective.items()),
            "plugin": shown(plugin), "plugins": shown_plugins(parsed.get("plugins")),
            "network": shown(nets[0]) if nets else None, "conflicts": found}


def conflicts(family, effective, plugin, no_device, passed, differs=(), invalid=None):
    """The conflicts of the unmasked values, each written with shown() values. Two spellings of one value
    (nccl_parse.same_value: NCCL_IB_DISABLE=00 and the 0 NCCL prints) are no conflict."""
    out = []
    invalid = invalid or {}
    for name, item in sorted(effective.items()):
        if name in invalid:
            out.append({"severity": "warn", "subject": shown(name),
                        "cause": "NCCL could not read %s=%s and used its default %s instead"
                                 % (shown(name), shown(invalid[name]), shown(item["value"]))})
            continue
        if name in RUN_OWNED or item["passed"] is None or nccl_parse.same_value(name, item["passed"], item["value"]):
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
        if value is not None and nccl_parse.same_value(name, str(value), bad["value"]):
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
    # the first run that said which plugins and network NCCL used (a run that failed early may not have)
    plugins = next((i.get("plugins") for i in items if i.get("plugins")), {})
    network = next((i.get("network") for i in items if i.get("network")), None)
    return {"effective": items[0]["effective"], "plugin": items[0]["plugin"], "plugins": plugins,
            "network": network, "conflicts": out}
