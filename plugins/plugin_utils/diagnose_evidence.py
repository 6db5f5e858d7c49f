# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One node's evidence, from what the diagnose role's checks registered there.

The role keeps each check's registered result as it came (``results``) with the
settings the checks used (``settings``); this turns them into the evidence
node_checks and diagnose read. A check that did not run (left out with tags,
not for this family, or after a check that could not finish) is None; a check
that ran but could not answer is ``{"error": why}``. Registered results are
read by their keys, not their ``failed`` flag: the role registers with
``failed_when: false``, which clears that flag.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii


def _ran(result):
    return isinstance(result, dict) and not result.get("skipped")


def _why(result, default="failed"):
    msg = result.get("msg") if isinstance(result, dict) else None
    return msg if msg else default


def gpu(result):
    if not _ran(result):
        return None
    if "findings" not in result:
        return {"error": _why(result), "findings": []}
    return {"error": None, "driver": result.get("driver"), "findings": result["findings"]}


def nic(nic_map, checked):
    if not _ran(nic_map):
        return None
    if "ansible_facts" not in nic_map:
        return {"error": _why(nic_map), "nics": []}
    if not _ran(checked):
        return {"error": "the inventory gives this node no GPU NICs (gpu_nics)", "nics": []}
    if "nics" not in checked:
        return {"error": _why(checked), "nics": []}
    return {"error": None, "nics": checked["nics"]}


def rxdm(engine, state, container, unit):
    if not _ran(engine):
        return None
    base = {"container": container, "unit": unit}
    if not _ran(state):
        base["error"] = "no container engine: %s" % _why(engine, "not found")
        return base
    base.update({
        "error": None if "ready" in state else _why(state),
        "ready": state.get("ready", False), "reason": state.get("reason", ""), "image": state.get("image"),
        "unit_state": state.get("unit_state"), "restarts": state.get("restarts"),
        "log_tail": state.get("log_tail") or [],
    })
    return base


def plugin(result):
    if not _ran(result):
        return None
    if "record_path" not in result:
        return {"error": _why(result)}
    return {"error": None, "record_path": result["record_path"], "record": result.get("record"),
            "record_problem": result.get("record_problem"), "missing": result.get("missing") or [],
            "modified": result.get("modified") or [], "ld_so_conf": result.get("ld_so_conf")}


def profile(result, path, expected, expected_error):
    if not _ran(result):
        return None
    present = bool(result.get("present"))
    # the reason alone, as the agent has it (the module's msg repeats the path)
    why = None if present else (result.get("read_error") or _why(result))
    return {"path": path, "present": present, "error": why,
            "problems": result.get("problems") or [], "env": result.get("env") or {},
            "expected": expected, "expected_error": expected_error}


def topology(result, expected):
    if not _ran(result):
        return None
    facts = result.get("ansible_facts")
    return {"error": None if isinstance(facts, dict) else _why(result), "expected": expected,
            "observed": (facts or {}).get("gce_node_topology") or {}, "source": result.get("source"),
            "mismatches": result.get("mismatches") or []}


def _stat_records(result, key, value, sources=None):
    out = []
    for item in (result or {}).get("results") or []:
        name = item.get("item")
        record = {key: name, value: bool((item.get("stat") or {}).get("exists"))}
        if sources is not None:
            # a device is looked for at its own path unless the settings map it elsewhere
            record["source"] = sources.get(name, name)
        out.append(record)
    return out


def maintenance(result):
    if not _ran(result):
        return None
    if "findings" in result:
        return result["findings"]
    return [{"component": "host", "subject": "maintenance", "severity": "warn", "can_reschedule": False,
             "cause": "could not run: %s" % _why(result)}]


def os_release(result):
    content = (result or {}).get("content") if isinstance(result, dict) else None
    if not content:
        return ""
    try:
        return base64.b64decode(content).decode("utf-8", "replace")
    except (binascii.Error, TypeError, ValueError):
        return ""


def shape(raw):
    """The evidence of one node from its raw record; a record with no results (an unreachable node) as it is."""
    if not isinstance(raw, dict) or "results" not in raw:
        return raw
    res = raw.get("results") or {}
    settings = raw.get("settings") or {}
    return {
        "reach": raw.get("reach") or {"ok": True, "msg": ""},
        "family": raw.get("family"),
        "zone": raw.get("zone"),
        "error": raw.get("error"),
        "gpu": gpu(res.get("gpu")),
        "nic": nic(res.get("nic_map"), res.get("nic")),
        "rxdm": rxdm(res.get("engine"), res.get("rxdm"), settings.get("rxdm_container"), settings.get("rxdm_unit")),
        "plugin": plugin(res.get("plugin")),
        "profile": profile(res.get("profile"), settings.get("profile_file"), res.get("expected_profile"),
                           res.get("expected_profile_error")),
        "topology": topology(res.get("topology"), settings.get("topology")),
        "devices": _stat_records(res.get("devices"), "path", "present", settings.get("device_sources") or {}),
        "kernel_modules": _stat_records(res.get("kernel_modules"), "name", "loaded"),
        "maintenance": maintenance(res.get("maintenance")),
        "versions": raw.get("versions") or {},
        "os_release": os_release(res.get("os_release")),
    }
