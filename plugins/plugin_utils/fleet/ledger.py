# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet ledger: what happened to each physical host under the VMs, across runs and across VMs.

On Google Cloud GPU VMs the unit that fails is often the physical host below the VM: a VM re-created on the
same host meets the same fault, and a repair that cleared a VM's fault may not have cleared the host's. The
ledger keeps one record per event, keyed by the physical host (the "host" part of a place,
module_utils/findings/finding.py PLACE_PARTS) and, where a finding names one, by the GPU's serial or UUID.

KINDS is every kind of record: its fields and how it is said in one line. A ledger is
{"version": 1, "records": [...]}; a record is {kind, host, time (whole seconds since the epoch), and its
kind's fields}, with node (the VM), place (the rest of its place) and source (the playbook that wrote it)
where known. Every text that may quote a node is masked and bounded here, whoever gives it. A record of
another shape is skipped and named in one line; it never costs the others.

Pure functions over plain data, on the controller; ledger_store.py keeps a ledger.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import json
import math
import re
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd

VERSION = 1
DAY = 86400
# the bounds a store applies on every write (the action's defaults): a record older than this is dropped,
# and the oldest go first beyond this many records or bytes of the ledger's JSON
MAX_AGE_DAYS = 365
MAX_RECORDS = 20000
MAX_BYTES = 8 * 1024 * 1024
# "recent": the window the inventory and the query look back over by default
RECENT_DAYS = 30
# the most characters of a text field (a cause quotes node output), and of a name (a VM, a run, a GPU id)
MAX_TEXT = 500
MAX_NAME = 200


class LedgerError(Exception):
    """A ledger (not one record of it) that cannot be read: the message names it."""


def _finding_says(r):
    return "%s %s: %s%s" % (r["component"], r["subject"], r["cause"], " (GPU %s)" % r["gpu"] if r.get("gpu") else "")


def _remediation_says(r):
    return "remediation %s%s: %s" % (r["decision"], " from rung %s" % r["rung"] if r.get("rung") else "",
                                     r.get("reason") or r.get("finding") or "no reason given")


def _outcome_says(r):
    return "remediation ended %s%s%s" % (r["outcome"], " after rung %s" % r["rung"] if r.get("rung") else
                                         " with no rung run", ": %s" % r["detail"] if r.get("detail") else "")


def _report_says(r):
    return "report to Google as faulty: %s%s%s" % (r["outcome"], " (%s)" % r["behavior"] if r.get("behavior") else "",
                                                   ": %s" % r["description"] if r.get("description") else "")


def _never(r):
    return False


# Every kind of record, one row each:
#   kind:     its name (a record's "kind");
#   required: its own fields a record must have (text); optional: those it may have (text);
#   says:     the record in one line, after its time and host;
#   failure:  whether it says the host failed (a failing finding; an alert the guard decided on);
#   clears:   whether it says a repair cleared the host's fault (a remediation that ended cleared after a rung);
#   reported: whether it says the host went to Google's repair (a report that was made).
# Everything that reads records (check, history, the summaries, repeat_after_clear, the docs' table, the
# action's options) follows this table; a row without every part fails at import.
KINDS = (
    {"kind": "finding", "required": ("component", "subject", "cause"), "optional": ("severity", "rung", "gpu"),
     "says": _finding_says, "failure": lambda r: True, "clears": _never, "reported": _never},
    {"kind": "remediation", "required": ("decision",), "optional": ("rung", "reason", "run", "finding"),
     # the guard decides only on a firing alert about the node
     "says": _remediation_says, "failure": lambda r: True, "clears": _never, "reported": _never},
    {"kind": "outcome", "required": ("outcome",), "optional": ("rung", "run", "detail"),
     "says": _outcome_says, "failure": _never,
     # cleared with no rung run: the check passed before any repair, so no repair is known to have held
     "clears": lambda r: r["outcome"] == "cleared" and bool(r.get("rung")), "reported": _never},
    {"kind": "report", "required": ("outcome",), "optional": ("behavior", "operation", "description"),
     "says": _report_says, "failure": _never, "clears": _never, "reported": lambda r: r["outcome"] == "reported"},
)
PARTS = ("kind", "required", "optional", "says", "failure", "clears", "reported")
# every record's own fields: required, and optional
COMMON = ("kind", "host", "time")
COMMON_OPTIONAL = ("node", "place", "source")
# the fields that are names, bounded tighter than the texts
NAMES = ("node", "source", "run", "gpu", "rung", "decision", "outcome", "severity", "component", "behavior",
         "operation")


def table():
    """The kinds, each row checked: ValueError naming the kind whose row lacks a part or has one too many."""
    seen = set()
    for row in KINDS:
        missing = [part for part in PARTS if part not in row]
        unknown = sorted(set(row) - set(PARTS))
        if missing or unknown or row.get("kind") in seen:
            raise ValueError("ledger.KINDS row %s: %s" % (row.get("kind"), "; ".join(
                (["lacks %s" % ", ".join(missing)] if missing else [])
                + (["has no part %s" % ", ".join(unknown)] if unknown else [])
                + (["is there twice"] if row.get("kind") in seen else []))))
        clash = sorted(set(row["required"] + row["optional"]) & set(COMMON + COMMON_OPTIONAL))
        if clash:
            raise ValueError("ledger.KINDS row %s names the common field(s) %s" % (row["kind"], ", ".join(clash)))
        seen.add(row["kind"])
    return KINDS


table()


def kinds():
    """The kinds' names, in the table's order (read at each call, never copied)."""
    return tuple(row["kind"] for row in KINDS)


def _row(kind):
    return next(row for row in KINDS if row["kind"] == kind)


def _text(value, limit=MAX_TEXT, mask=True):
    """Text that may quote a node, as a record holds it: secrets masked, one line, bounded. Cleaning a clean
    text changes nothing, so a record read back is identical to the one written. mask false: one line and
    bounded only (a record read back was masked when it was added)."""
    text = safe_text.to_text(value)
    if not mask:
        return safe_text.one_line(text, limit)
    # cut before masking (the kept part is all that is shown), leaving room for a secret that starts inside it;
    # one line before masking, so that a header masked to its end is masked the same when cleaned again
    return safe_text.one_line(safe_text.mask_text(safe_text.one_line(text[:2 * limit + 512])), limit)


def _shown(value):
    return safe_text.one_line(repr(value), 80)


def stamp(seconds):
    """Seconds since the epoch as the ledger's lines show them (UTC)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def check(raw, mask=True):
    """(the record as the ledger keeps it, None), or (None, why it is malformed, in words). mask false: its
    texts are made one line and bounded, not masked again (a stored record, masked when it was added)."""
    if not isinstance(raw, dict):
        return None, "is not a mapping"
    kind = raw.get("kind")
    if kind not in kinds():
        return None, "has an unknown kind %s (the kinds: %s)" % (_shown(kind), ", ".join(kinds()))
    row = _row(kind)
    unknown = sorted(str(k) for k in raw if k not in COMMON + COMMON_OPTIONAL + row["required"] + row["optional"])
    if unknown:
        return None, "(%s) has unknown field(s) %s" % (kind, safe_text.one_line(", ".join(unknown), 200))
    host = raw.get("host")
    if not isinstance(host, str) or not host.strip():
        return None, "(%s) names no physical host" % kind
    when = raw.get("time")
    if isinstance(when, bool) or not isinstance(when, (int, float)) or not math.isfinite(when) or when < 0:
        return None, "(%s) has a time that is not seconds since the epoch (%s)" % (kind, _shown(when))
    out = {"kind": kind, "host": _text(host, fd.MAX_PLACE_CHARS, mask), "time": int(when)}
    for field in row["required"] + row["optional"] + ("node", "source"):
        value = raw.get(field)
        if value is None or value == "":
            if field in row["required"]:
                return None, "(%s) lacks its %s" % (kind, field)
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return None, "(%s) has a %s that is not text (%s)" % (kind, field, type(value).__name__)
        out[field] = _text(value, MAX_NAME if field in NAMES else MAX_TEXT, mask)
    if raw.get("place") is not None:
        try:
            where = fd.place(raw["place"])
        except ValueError as exc:
            return None, "(%s) has a place of another shape: %s" % (kind, exc)
        # the host is the record's own key
        where = dict((k, v) for k, v in (where or {}).items() if k != "host")
        if where:
            out["place"] = where
    return out, None


def _key(record):
    return json.dumps(record, sort_keys=True)


def _ordered(records):
    # by time; equal times keep the order they came in
    return sorted(records, key=lambda r: r["time"])


def load(doc, where="the ledger"):
    """(the records of a ledger as read, [one line per record skipped]). {} or None is an empty ledger.
    LedgerError, naming where, for a ledger of another shape or a newer version: never read as empty."""
    if doc is None or doc == {}:
        return [], []
    if not isinstance(doc, dict):
        raise LedgerError("%s is not a JSON object: remove it, or repair it" % where)
    version = doc.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise LedgerError("%s has version %s, not a version number (this collection reads %d)"
                          % (where, _shown(version), VERSION))
    if version > VERSION:
        raise LedgerError("%s is version %d, newer than this collection reads (%d): run the collection that wrote it"
                          % (where, version, VERSION))
    if not isinstance(doc.get("records", []), list):
        raise LedgerError("%s: its records is not a list" % where)
    records, problems, seen = [], [], set()
    for index, raw in enumerate(doc.get("records", [])):
        record, why = check(raw, mask=False)
        if why:
            problems.append("%s: record %d %s; skipped" % (where, index, why))
        elif _key(record) not in seen:
            seen.add(_key(record))
            records.append(record)
    return _ordered(records), problems


def add(records, new, where="a new record"):
    """(the records with the new ones, [the records added], [one line per new record skipped]): a new record
    identical to one there (or to another new one) is not added again, so adding the same batch twice (a
    write retried after a lost race) adds it once."""
    seen = set(_key(r) for r in records)
    out, added, problems = list(records), [], []
    for index, raw in enumerate(new):
        record, why = check(raw)
        if why:
            problems.append("%s %d %s; skipped" % (where, index, why))
            continue
        if _key(record) in seen:
            continue
        seen.add(_key(record))
        out.append(record)
        added.append(record)
    return _ordered(out), added, problems


def document(records):
    """The ledger as it is stored."""
    return {"version": VERSION, "records": list(records)}


def size(records):
    """The bytes of the ledger as a store writes it (sorted keys, one line)."""
    return len(json.dumps(document(records), sort_keys=True).encode("utf-8")) + 1


def retain(records, now, max_age_days=MAX_AGE_DAYS, max_records=MAX_RECORDS, max_bytes=MAX_BYTES):
    """(the records kept, how many were dropped): none older than max_age_days, at most max_records, and a
    ledger of at most max_bytes; the oldest are dropped first. ValueError names a bound below 1."""
    for name, value in (("max_age_days", max_age_days), ("max_records", max_records), ("max_bytes", max_bytes)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError("%s must be a whole number of 1 or more, not %s" % (name, _shown(value)))
    kept = [r for r in _ordered(records) if r["time"] >= now - max_age_days * DAY]
    kept = kept[max(0, len(kept) - max_records):]
    # each record costs its JSON and the ", " before the next: drop from the oldest until the whole fits
    total = size(kept)
    drop = 0
    while drop < len(kept) and total > max_bytes:
        total -= len(json.dumps(kept[drop], sort_keys=True).encode("utf-8")) + (2 if len(kept) - drop > 1 else 0)
        drop += 1
    kept = kept[drop:]
    return kept, len(records) - len(kept)


# --- records from what the playbooks have

_GPU_UUID = re.compile(r"\bGPU-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b")
_GPU_SERIAL = re.compile(r"\bserial(?: number)?\s*[:=]?\s*([0-9A-Za-z][0-9A-Za-z-]{5,31})\b", re.I)


def gpu_of(item):
    """The GPU's UUID (GPU-...) or serial number a finding's subject or cause names, else None."""
    text = "%s %s" % (item.get("subject") or "", item.get("cause") or "")
    match = _GPU_UUID.search(text)
    if match:
        return match.group(0)
    match = _GPU_SERIAL.search(text)
    return match.group(1) if match else None


def placed(raw, places):
    """A record given with the VM (node) it is about, keyed by that VM's physical host and place from places
    ({VM: place}); (record, None), or (None, why not) where the VM's physical host is not known."""
    if not isinstance(raw, dict) or raw.get("host"):
        return raw, None
    node = raw.get("node")
    where = (places or {}).get(node) if isinstance(node, str) else None
    host = where.get("host") if isinstance(where, dict) else None
    if not host:
        return None, "about VM %s: its physical host is not known (the inventory gives it no gce_topology host)" % (
            safe_text.one_line(node, MAX_NAME) if node else "(none named)")
    return dict(raw, host=host, place=where), None


def from_findings(findings, places, now, source=None):
    """(finding records, [one line per failing finding not recorded]) of a run's failing findings (each
    on its VM, finding.host), keyed by the VMs' physical hosts from places ({VM: place}). A warning, or a
    finding about the cluster as a whole, is no event of a host."""
    out, problems = [], []
    for item in findings or []:
        if not isinstance(item, dict) or item.get("severity") != "fail" or not item.get("host"):
            continue
        raw = {"kind": "finding", "node": item["host"], "time": now, "source": source,
               "component": item.get("component"), "subject": item.get("subject"), "cause": item.get("cause"),
               "severity": item.get("severity"), "rung": item.get("rung"), "gpu": gpu_of(item)}
        record, why = placed(raw, places)
        if why:
            subject = _text(item.get("subject"), MAX_NAME)
            problems.append("finding %s %s %s; not recorded" % (item.get("component"), subject, why))
        else:
            out.append(record)
    return out, problems


# the remediation guard's audit lines (remediation/guard.py) the ledger keeps, by their decision: the kind of
# record, and the line's fields it takes (a decision on a firing alert about a node; how a run ended)
AUDIT = {
    "act": ("remediation", ("decision", "rung", "reason", "run", "finding")),
    "dry_run": ("remediation", ("decision", "rung", "reason", "finding")),
    "held": ("remediation", ("decision", "reason", "finding")),
    "outcome": ("outcome", ("outcome", "rung", "run", "detail")),
}


def _seconds(stamped, now):
    """An audit line's time (2026-01-02T03:04:05Z) in seconds since the epoch; now where it has none: the same
    line read twice is the same record."""
    try:
        return calendar.timegm(time.strptime(stamped, "%Y-%m-%dT%H:%M:%SZ"))
    except (TypeError, ValueError):
        return now


def from_audit(lines, places, now, source=None):
    """(records, [one line per line not recorded]) of the remediation guard's audit lines (its result's audit):
    its decisions on alerts about a node and the outcomes of its runs, keyed by the node's physical host from
    places ({VM: place}). A line about no node (an alert that named none, a lost race) is no event of a host."""
    out, problems = [], []
    for line in lines or []:
        if not isinstance(line, dict) or line.get("decision") not in AUDIT or not line.get("node"):
            continue
        kind, fields = AUDIT[line["decision"]]
        raw = dict((field, line.get(field)) for field in fields)
        raw.update(kind=kind, node=line["node"], time=_seconds(line.get("time"), now), source=source)
        record, why = placed(raw, places)
        if why:
            problems.append("%s of the guard %s; not recorded" % (kind, why))
        else:
            out.append(record)
    return out, problems


# --- reading the ledger

def says(record):
    """A record in one line: when, where, what."""
    node = " (VM %s)" % record["node"] if record.get("node") else ""
    return "%s physical host %s%s: %s" % (stamp(record["time"]), record["host"], node,
                                          _row(record["kind"])["says"](record))


def history(records, host=None, gpu=None):
    """The records of one physical host (or of one GPU, by its serial or UUID), oldest first."""
    return [r for r in _ordered(records) if (host is None or r["host"] == host) and (gpu is None or r.get("gpu") == gpu)]


def recent(records, host, days, now):
    """The records of one physical host in the last days, oldest first."""
    return [r for r in history(records, host) if r["time"] >= now - days * DAY]


def _is(record, part):
    return bool(_row(record["kind"])[part](record))


def repeat_after_clear(records, host):
    """Whether a physical host failed again after a remediation that ended cleared (a repair that did not hold,
    whichever VM it is under now): a candidate for a report to Google. {host, rung (what cleared it), cleared,
    failed (times), node, why (one line)} of the latest such failure, or None; a report made since ends it
    (Google took the host)."""
    return _repeat(host, history(records, host))


def _repeat(host, own):
    """repeat_after_clear() over one host's records, oldest first."""
    clear = found = None
    for record in own:
        if _is(record, "clears"):
            clear = record
        elif _is(record, "failure") and clear is not None:
            found = (clear, record)
        elif _is(record, "reported"):
            # Google took the host: what cleared it before says nothing of it now
            clear = found = None
    if found is None:
        return None
    clear, failure = found
    return {"host": host, "rung": clear.get("rung"), "cleared": clear["time"], "failed": failure["time"],
            "node": failure.get("node"),
            "why": "physical host %s failed again (%s, %s) after a remediation cleared it at rung %s (%s): a "
                   "candidate for a report to Google as faulty" % (
                       host, stamp(failure["time"]), _row(failure["kind"])["says"](failure), clear.get("rung"),
                       stamp(clear["time"]))}


def hosts(records):
    """The physical hosts of the records, sorted."""
    return sorted(set(r["host"] for r in records))


def _grouped(records):
    """[(host, its records oldest first)], by host: one pass, whatever the number of hosts."""
    out = {}
    for record in _ordered(records):
        out.setdefault(record["host"], []).append(record)
    return sorted(out.items())


def recent_hosts(records, days, now):
    """[{host, records, failures, last, why}] of each physical host with records in the last days; why says it
    in one line (the latest failure, else the latest record)."""
    out = []
    for host, own in _grouped(records):
        seen = [r for r in own if r["time"] >= now - days * DAY]
        if not seen:
            continue
        failures = [r for r in seen if _is(r, "failure")]
        latest = (failures or seen)[-1]
        out.append({"host": host, "records": len(seen), "failures": len(failures), "last": latest["time"],
                    "why": "physical host %s: %d record(s), %d failure(s) in the last %d day(s); the latest %s: %s"
                           % (host, len(seen), len(failures), days, stamp(latest["time"]),
                              _row(latest["kind"])["says"](latest))})
    return out


def candidates(records):
    """repeat_after_clear() of every physical host that is one, the latest failure first."""
    found = [c for c in (_repeat(host, own) for host, own in _grouped(records)) if c]
    return sorted(found, key=lambda c: (-c["failed"], c["host"]))


def _counts(records):
    out = dict((kind, 0) for kind in kinds())
    for r in records:
        out[r["kind"]] += 1
    return out


def _days(records):
    """{UTC date: failures that day}: the counts over time a fleet page draws."""
    out = {}
    for r in records:
        if _is(r, "failure"):
            day = time.strftime("%Y-%m-%d", time.gmtime(r["time"]))
            out[day] = out.get(day, 0) + 1
    return out


def by_host(records):
    """One summary per physical host, repeat offenders first (then the most failures, then by name):
    {host, place, counts ({kind: records}), failures, days ({date: failures}), first, last, gpus, repeat (its
    why, or None)}."""
    out = []
    for host, own in _grouped(records):
        placed_at = next((r["place"] for r in reversed(own) if r.get("place")), {})
        repeat = _repeat(host, own)
        out.append({"host": host, "place": placed_at, "counts": _counts(own),
                    "failures": sum(1 for r in own if _is(r, "failure")), "days": _days(own),
                    "first": own[0]["time"], "last": own[-1]["time"],
                    "gpus": sorted(set(r["gpu"] for r in own if r.get("gpu"))),
                    "repeat": repeat["why"] if repeat else None})
    return sorted(out, key=lambda s: (s["repeat"] is None, -s["failures"], s["host"]))


def by_subblock(records, host_summaries=None):
    """One summary per sub-block (block and sub-block of its hosts' latest place; "" where not known), those
    with repeat offenders first: {block, subblock, hosts, counts, failures, days, repeat_hosts}.
    host_summaries: by_host(records), where the caller has it already."""
    groups = {}
    for summary in by_host(records) if host_summaries is None else host_summaries:
        key = (summary["place"].get("block") or "", summary["place"].get("subblock") or "")
        groups.setdefault(key, []).append(summary)
    own_of = dict(_grouped(records))
    out = []
    for (block, subblock), members in groups.items():
        own = [r for m in members for r in own_of[m["host"]]]
        out.append({"block": block, "subblock": subblock, "hosts": sorted(m["host"] for m in members),
                    "counts": _counts(own), "failures": sum(m["failures"] for m in members), "days": _days(own),
                    "repeat_hosts": sorted(m["host"] for m in members if m["repeat"])})
    return sorted(out, key=lambda s: (-len(s["repeat_hosts"]), -s["failures"], s["block"], s["subblock"]))


def doc_table():
    """The kinds as docs/fleet.md lists them: one Markdown table, lines."""
    lines = ["| kind | fields | optional fields |", "|---|---|---|"]
    for row in table():
        lines.append("| `%s` | %s | %s |" % (row["kind"], ", ".join("`%s`" % f for f in row["required"]),
                                             ", ".join("`%s`" % f for f in row["optional"]) or "-"))
    return lines
