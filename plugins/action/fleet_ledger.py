# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""fleet_ledger: the ledger of physical hosts, on the controller (documented in plugins/modules/fleet_ledger.py;
the work is plugin_utils/fleet/ledger.py, the store plugin_utils/fleet/ledger_store.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import files, safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.action_base import ActionError, GpuAction, \
    with_gce_auth
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import make_unsafe
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.fleet import fleet_page, ledger, ledger_store

STATES = ("recorded", "query")

ARGUMENT_SPEC = with_gce_auth(dict(
    state=dict(type="str", choices=list(STATES), default="query"),
    store=dict(type="str", required=True),
    records=dict(type="list", elements="raw", default=[]),
    findings=dict(type="list", elements="raw", default=[]),
    audit=dict(type="list", elements="raw", default=[]),
    places=dict(type="dict", default={}),
    source=dict(type="str"),
    hosts=dict(type="list", elements="str", default=[]),
    nodes=dict(type="list", elements="str", default=[]),
    days=dict(type="int", default=ledger.RECENT_DAYS),
    max_age_days=dict(type="int", default=ledger.MAX_AGE_DAYS),
    max_records=dict(type="int", default=ledger.MAX_RECORDS),
    max_bytes=dict(type="int", default=ledger.MAX_BYTES),
    storage_endpoint=dict(type="str"),
    page=dict(type="str"),
))


def places_of(given):
    """{VM: place} as a finding holds a place; ActionError names the VM whose place is of another shape."""
    out = {}
    for node, value in (given or {}).items():
        try:
            where = fd.place(value)
        except ValueError as exc:
            raise ActionError("places: %s: %s" % (safe_text.one_line(node, ledger.MAX_NAME), exc))
        if where:
            out[str(node)] = where
    return out


def new_records(args, places, now):
    """(the records to add, [one line per one left out]) from findings, audit and records: each keyed by its VM's
    physical host where it names only the VM, stamped now where it has no time."""
    out, problems = ledger.from_findings(args["findings"], places, now, args.get("source"))
    audited, more = ledger.from_audit(args["audit"], places, now, args.get("source"))
    out += audited
    problems += more
    for index, raw in enumerate(args["records"]):
        if isinstance(raw, dict):
            raw = dict(raw)
            raw.setdefault("time", now)
            if args.get("source"):
                raw.setdefault("source", args["source"])
        record, why = ledger.placed(raw, places)
        if why:
            why = "(%s) %s" % (safe_text.one_line(raw.get("kind"), 40), why)
        else:
            why = ledger.check(record)[1]
        if why:
            problems.append("record %d %s; not recorded" % (index, why))
        else:
            out.append(record)
    return out, problems


def query(records, args, places, now):
    """What the query returns from the records as read."""
    days = args["days"]
    asked = list(args["hosts"])
    nodes = {}
    for node in args["nodes"]:
        host = (places.get(node) or {}).get("host")
        nodes[node] = {"host": host, "recent": None, "candidate": None}
        if host and host not in asked:
            asked.append(host)
    recent = ledger.recent_hosts(records, days, now)
    candidates = ledger.candidates(records)
    if not asked and not args["nodes"]:
        asked = [r["host"] for r in recent]
    summary = ledger.by_host(records)
    for node, entry in nodes.items():
        entry["recent"] = next((r["why"] for r in recent if r["host"] == entry["host"]), None)
        entry["candidate"] = next(({"rung": c["rung"], "why": c["why"]} for c in candidates
                                   if c["host"] == entry["host"]), None)
    return {"history": dict((host, [ledger.says(r) for r in ledger.history(records, host)]) for host in asked),
            "recent": recent, "candidates": candidates, "nodes": nodes,
            # the VMs whose physical host failed again after a repair cleared it: {VM: {rung, why}}
            "candidate_nodes": dict((node, e["candidate"]) for node, e in nodes.items() if e["candidate"]),
            "summary": {"hosts": summary, "subblocks": ledger.by_subblock(records, summary)},
            "records": len(records)}


def draw(path, records, now, location, check_mode):
    """Write the fleet page of the records at path (a file on the controller), whole or not at all
    (files.write_atomic), so a reader never sees half a page and a link at path is replaced, never followed.
    (changed, the page's path)."""
    path = os.path.abspath(os.path.expanduser(path))
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        raise ActionError("page %s: its directory %s does not exist" % (path, directory))
    text = fleet_page.render(records, now, source="the fleet ledger %s" % location)
    before = files.read_own(path)
    if before == text or check_mode:
        return before != text, path
    try:
        files.write_atomic(path, text, 0o644)
    except (IOError, OSError) as exc:
        raise ActionError("page %s: %s" % (path, getattr(exc, "strerror", None) or exc))
    return True, path


class ActionModule(GpuAction):

    MODULE = "fleet_ledger"
    ARGUMENT_SPEC = ARGUMENT_SPEC
    ERRORS = (ledger.LedgerError, ledger_store.StoreError)

    def act(self, result, args, task_vars):
        if args["days"] < 1:
            raise ActionError("days must be 1 or more, not %d" % args["days"])
        bounds = dict((name, args[name]) for name in ("max_age_days", "max_records", "max_bytes"))
        try:
            ledger.retain([], 0, **bounds)
        except ValueError as exc:
            raise ActionError(str(exc))
        places = places_of(args["places"])
        now = int(time.time())
        store = ledger_store.store_for(args, os.environ)
        try:
            result["warnings"] = list(store.warnings)
            result["location"] = store.location
            if args["page"] and args["state"] != "query":
                raise ActionError("page is drawn with state=query, after the records are added")
            if args["state"] == "query":
                records, skipped = ledger.load(store.read(), "fleet ledger %s" % store.location)
                result.update(make_unsafe(query(records, args, places, now)), left_out=make_unsafe(skipped),
                              changed=False)
                if args["page"]:
                    result["changed"], result["page"] = draw(args["page"], records, now, store.location,
                                                             self.check_mode)
                return result
            new, problems = new_records(args, places, now)
            out, retries = store.update(ledger_store.recorder(new, now, bounds, problems), self.check_mode)
        finally:
            store.close()
        changed = bool(out["added"] or out["dropped"])
        result.update(make_unsafe({"added": len(out["added"]), "lines": [ledger.says(r) for r in out["added"]],
                                   "left_out": out["skipped"], "dropped": out["dropped"], "records": out["records"]}),
                      retries=retries, changed=changed,
                      msg=make_unsafe("%s %d record(s) to %s%s" % (
                          "would add" if self.check_mode else "added", len(out["added"]), store.location,
                          ", %d dropped by retention" % out["dropped"] if out["dropped"] else "")))
        if self._task.diff and changed:
            before = out["records"] - len(out["added"]) + out["dropped"]
            result["diff"] = make_unsafe({
                "before_header": store.location, "after_header": store.location,
                "before": "%d record(s)\n" % before,
                "after": "%d record(s), %d dropped by retention\n%s" % (
                    out["records"], out["dropped"], "".join("+ %s\n" % ledger.says(r) for r in out["added"]))})
        return result
