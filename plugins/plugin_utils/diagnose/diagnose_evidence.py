# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One node's evidence, from what the diagnose role's checks registered there.

The role keeps each check's registered result as it came (``results``) with the
settings the checks used (``settings``); this turns them into the evidence
node_checks and diagnose read. The node-level checks come as one result of
gpudirect.gcp.node_health_info (``results.node``), whose parts are those the
run's tags asked for (``settings.parts``). A part that was not asked for (left
out with tags, or not for this family) is None; a part that could not answer is
``{"error": why}``. Registered results are read by their keys, not their
``failed`` flag: the role registers with ``failed_when: false``, which clears
that flag.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii

from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health


def _ran(result):
    return isinstance(result, dict) and not result.get("skipped")


def _why(result, default="failed"):
    msg = result.get("msg") if isinstance(result, dict) else None
    return msg if msg else default


def part_components():
    """{part: the component of the warning it gives when it cannot run}, from the node check's table."""
    return dict((part["key"], part["component"]) for part in node_health.PARTS)


def read_here(item):
    """Whether diagnose reads this node check finding through its own part functions (below and in
    node_checks), which add what only the controller knows (the plugin/RxDM pairing, the profile the role
    would render now, symptoms another finding explains, blame across nodes). Every other finding, such as
    those of a part added to the node check, is passed on as it came (other_findings)."""
    component = item.get("component")
    if component == "host":
        return item.get("subject") == "maintenance"
    return component in ("gpu", "imex", "rdma", "nic", "rxdm", "nccl_plugin", "nccl_profile")


def other_findings(node, parts):
    """The findings of the asked parts that no part function reads, as the node check gave them."""
    if not parts or not _ran(node) or not isinstance(node.get("findings"), list):
        return []
    return [dict(item) for item in node["findings"] if isinstance(item, dict) and not read_here(item)]


def part(node, key, parts):
    """(state, error) of one part of the node check: (None, None) when it was not asked for or the family has
    none, (None, why) when it could not answer."""
    if key not in parts or not _ran(node):
        return None, None
    if "findings" not in node:
        return None, _why(node)
    state = node.get(key)
    if state is not None:
        return state, None
    for item in node["findings"]:
        if item.get("component") == part_components()[key] and item.get("subject") in (key, "interfaces"):
            return None, item.get("cause") or "could not run"
    return None, None


def gpu(node, parts):
    state, error = part(node, "gpu", parts)
    if state is None and error is None:
        return None
    # the GPU part's own warning when it could not run is one of these findings
    found = [f for f in (node.get("findings") or []) if f.get("component") in ("gpu", "imex", "rdma")]
    if state is None and not found:
        return {"error": error, "findings": []}
    return {"error": None, "driver": (state or {}).get("driver"), "findings": found}


def nic(nic_map, node, parts):
    if not _ran(nic_map) or "nics" not in parts or not _ran(node):
        return None
    if "ansible_facts" not in nic_map:
        return {"error": _why(nic_map), "nics": []}
    state, error = part(node, "nics", parts)
    if error:
        return {"error": error, "nics": []}
    if not state:
        return {"error": "the inventory gives this node no GPU NICs (gpu_nics)", "nics": []}
    return {"error": None, "nics": state}


def rxdm(node, parts, container, unit):
    state, error = part(node, "rxdm", parts)
    if state is None and error is None:
        return None
    base = {"container": container, "unit": unit}
    if state is None or state.get("error"):
        base["error"] = error or state["error"]
        return base
    base.update({
        "error": None, "ready": bool(state.get("ready")), "reason": state.get("reason", ""),
        "image": state.get("image"), "unit_state": state.get("unit_state"), "restarts": state.get("restarts"),
        "log_tail": state.get("log_tail") or [],
    })
    return base


def plugin(node, parts):
    state, error = part(node, "plugin", parts)
    if state is None:
        return None if error is None else {"error": error}
    return {"error": None, "record_path": state.get("record_path"), "record": state.get("record"),
            "record_problem": state.get("record_problem"), "missing": state.get("missing") or [],
            "modified": state.get("modified") or [], "ld_so_conf": state.get("ld_so_conf")}


def profile(node, parts, path, expected, expected_error):
    state, error = part(node, "profile", parts)
    if state is None and error is None:
        return None
    state = state or {"present": False, "error": error}
    present = bool(state.get("present"))
    return {"path": path, "present": present, "error": None if present else (state.get("error") or "missing"),
            "problems": state.get("problems") or [], "env": state.get("env") or {},
            "expected": expected, "expected_error": expected_error}


def topology(result, expected):
    if not _ran(result):
        return None
    observed = result.get("topology")
    return {"error": None if isinstance(observed, dict) else _why(result), "expected": expected,
            "observed": observed or {}, "source": result.get("source"),
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


def maintenance(node, parts):
    state, error = part(node, "maintenance", parts)
    if state is None and error is None:
        return None
    if error and not isinstance(node.get("findings"), list):
        return [fd.make("host", "maintenance", "warn", "could not run: %s" % error, can_reschedule=False)]
    return [f for f in node["findings"] if f.get("component") == "host" and f.get("subject") == "maintenance"]


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
    node, parts = res.get("node"), settings.get("parts") or []
    return {
        "reach": raw.get("reach") or {"ok": True, "msg": ""},
        "family": raw.get("family"),
        "zone": raw.get("zone"),
        "error": raw.get("error"),
        "gpu": gpu(node, parts),
        "nic": nic(res.get("nic_map"), node, parts),
        "rxdm": rxdm(node, parts, settings.get("rxdm_container"), settings.get("rxdm_unit")),
        "plugin": plugin(node, parts),
        "profile": profile(node, parts, settings.get("profile_file"), res.get("expected_profile"),
                           res.get("expected_profile_error")),
        "topology": topology(res.get("topology"), settings.get("topology")),
        "devices": _stat_records(res.get("devices"), "path", "present", settings.get("device_sources") or {}),
        "kernel_modules": _stat_records(res.get("kernel_modules"), "name", "loaded"),
        "maintenance": maintenance(node, parts),
        "other": other_findings(node, parts),
        "versions": raw.get("versions") or {},
        "os_release": os_release(res.get("os_release")),
        # gpu_busy_info's result as it came (diagnose_busy judges it); None where the check was not part of the run
        "busy": res.get("busy"),
        "test_busy": bool(settings.get("test_busy")),
    }
