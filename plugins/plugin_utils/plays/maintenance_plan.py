# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the maintenance playbook does to one node about its host maintenance: one action from one table.

Inputs, per node: the upcoming event as the Compute API (``resourceStatus.upcomingMaintenance``) and the
node's metadata server (``maintenance-event``, ``upcoming-maintenance``) tell it, the node's Slurm state and
drain reason (the slurm_node module's record), the Slurm reservations, the collection's own record of what
it did for the node's maintenance (a file on the node), the node check's verdict where one was made, the
clock and the lead time.

Actions (ACTIONS): ``drain`` the node ahead of the event (the reason names the event and its window),
``resume`` it (the event was cancelled, moved out of the lead window, or is done and the node passed its
check), ``check`` it first (the event is done: the node check decides), ``hold`` it drained (ours, the event
still due or under way, or the check failed), ``report`` only (another handler owns the event: a Slurm
maintenance reservation covers the node, or a drain that is not ours), or ``none``.

A drain is ours only where its reason starts with the owner mark (``gpudirect-maintenance``), or where it is
the node health agent's Slurm hook's drain for the maintenance finding alone (``gpudirect: fail host
maintenance: ...``, slurm_hooks_drain_before_maintenance); any other drain was a person's, or another part of
the collection's, and is never resumed here. The record keeps which event a drain was for: a node drained
once for an event and returned by someone since is not drained again for that event.

Pure Python, controller side (the maintenance role's filter gpudirect.gcp._maintenance_plan).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.health import slurm_node
from ansible_collections.gpudirect.gcp.plugins.module_utils.host import maintenance

OWNER = "gpudirect-maintenance"
# the node agent's Slurm hook drains with this reason where host maintenance was its only failing finding
AGENT_PREFIX = "gpudirect: fail host maintenance: "
DEFAULT_LEAD_S = 4 * 3600
ACTIONS = ("drain", "resume", "check", "hold", "report", "none")
# what becomes of the record on the node: written anew for this event, kept, rewritten for the event now
# announced, or removed
RECORDS = ("new", "keep", "event", "clear")
# metadata maintenance-event values that mean no maintenance is under way
_QUIET_EVENTS = ("", "NONE")
_WINDOW = re.compile(r"window (\S+) to ")


class PlanError(ValueError):
    """An input the planner cannot read; the message names the node and the input."""


# One row per situation, first match wins: (name, test, action, record, why). test takes the context
# (context()); why is formatted with it. Every action and record value is one of ACTIONS and RECORDS.
ROWS = (
    ("unlisted", lambda c: not c["listed"], "none", "keep",
     "Slurm does not list the node"),
    ("unread", lambda c: not c["known"], "hold", "keep",
     "its maintenance could not be read ({error}): nothing changes"),
    ("not_ours", lambda c: c["out"] and not c["ours"], "report", "keep",
     "drained by {reason_user} ({reason}), not by the maintenance handling: left as it is"),
    ("under_way", lambda c: c["ours"] and c["under_way"], "hold", "event",
     "maintenance under way ({event_text}): stays drained until it is done and the node passes its check"),
    ("still_due", lambda c: c["ours"] and c["event"] and c["in_lead"], "hold", "event",
     "already drained for {event_text}"),
    ("moved_out", lambda c: c["ours"] and c["event"] and not c["in_lead"], "resume", "clear",
     "{event_text} now starts beyond the lead time of {lead_h} h: returned to Slurm"),
    ("cancelled", lambda c: c["ours"] and not c["event"] and not c["started"], "resume", "clear",
     "the maintenance of window {drained_window} was cancelled before it started: returned to Slurm"),
    ("done_failed", lambda c: c["ours"] and not c["event"] and c["check"] == "fail", "hold", "keep",
     "the maintenance of window {drained_window} is done but the node check fails ({check_why}): stays drained"),
    ("done_passed", lambda c: c["ours"] and not c["event"] and c["check"] == "pass", "resume", "clear",
     "the maintenance of window {drained_window} is done and the node check passes: returned to Slurm"),
    ("done", lambda c: c["ours"] and not c["event"], "check", "keep",
     "the maintenance of window {drained_window} is done: the node check decides its return"),
    ("reserved", lambda c: c["event"] and c["in_lead"] and c["reservation"], "report", "keep",
     "{event_text}: the Slurm maintenance reservation {reservation} covers the node; its handler owns the event"),
    ("returned", lambda c: c["event"] and c["in_lead"] and c["same_event"], "none", "keep",
     "{event_text}: drained for it once and returned to Slurm since by someone; not drained again"),
    ("due", lambda c: c["event"] and c["in_lead"], "drain", "new",
     "{event_text} is within the lead time of {lead_h} h: drained"),
    ("scheduled", lambda c: c["event"], "none", "clear",
     "{event_text}, beyond the lead time of {lead_h} h: nothing yet"),
    ("quiet", lambda c: True, "none", "clear",
     "no maintenance scheduled"),
)


def row_names():
    return [row[0] for row in ROWS]


def event_key(event):
    """What tells one event from another: its type and window start (a rescheduled event has another)."""
    return "%s %s" % ((event.get("type") or "SCHEDULED").upper(), event.get("window_start") or "?")


def event_text(event):
    if not event:
        return "no maintenance"
    return "%s host maintenance, window %s to %s" % (
        (event.get("type") or "SCHEDULED").upper(), event.get("window_start") or "?", event.get("window_end") or "?")


def drain_reason(event, lead_s):
    """The drain reason after the owner mark: the event and its window, in a form _WINDOW reads back."""
    return "%s (drained %s h ahead)" % (event_text(event), _hours(lead_s))


def _hours(seconds):
    hours = seconds / 3600.0
    return ("%d" % hours) if hours == int(hours) else ("%.1f" % hours)


def merge_sources(api=None, metadata=None):
    """(event or None, under way, known, error) from the two sources, either of which may be missing.

    api: {upcoming: the API's upcomingMaintenance (either spelling) or None, error}; metadata: the
    gce_maintenance_info module's answer {event, upcoming, error}. The API's view of the event wins where
    both have one; the metadata server's maintenance-event says whether maintenance is under way."""
    event, known, errors, under_way = None, False, [], False
    for name, source in (("metadata", metadata), ("api", api)):
        if source is None:
            continue
        if not isinstance(source, dict):
            raise PlanError("%s: expected a mapping, got %r" % (name, source))
        if source.get("error"):
            errors.append("%s: %s" % (name, source["error"]))
            continue
        known = True
        upcoming = source.get("upcoming")
        if upcoming:
            if not isinstance(upcoming, dict):
                raise PlanError("%s: upcoming must be a mapping, got %r" % (name, upcoming))
            event = maintenance.normalize_upcoming(upcoming) if "window_start" not in upcoming else dict(upcoming)
        if (source.get("event") or "NONE").upper() not in _QUIET_EVENTS:
            under_way = True
    return event, under_way, known, "; ".join(errors) or ("no source read" if not known else "")


def context(node, slurm=None, api=None, metadata=None, reservations=None, record=None, check=None,
            check_why="", now=0.0, lead_s=DEFAULT_LEAD_S, owner=OWNER):
    """Everything a row tests, named."""
    if record is not None and not isinstance(record, dict):
        raise PlanError("the record must be a mapping or null, got %r" % (record,))
    if check not in (None, "pass", "fail"):
        raise PlanError("check must be pass, fail or null, got %r" % (check,))
    event, under_way, known, error = merge_sources(api, metadata)
    listed = slurm is not None
    out = bool(listed and slurm.get("out"))
    reason = (slurm or {}).get("reason") or ""
    mine = out and slurm_node.marked(reason, owner)
    agent = out and reason.startswith(AGENT_PREFIX) and "(+" not in reason
    start = maintenance.timestamp((event or {}).get("window_start"))
    if event and ((event.get("status") or "") == "ONGOING" or (start is not None and start <= now)):
        under_way = True
    # the window the drain was for: the record's, else read back from our reason
    drained_window = (record or {}).get("window_start")
    if not drained_window:
        found = _WINDOW.search(reason) if mine or agent else None
        drained_window = found.group(1) if found else None
    drained_start = maintenance.timestamp(drained_window)
    names = [r.get("name") for r in reservations or [] if _covers(r, node)]
    return {
        "node": node, "listed": listed, "out": out, "ours": mine or agent, "agent": agent,
        "reason": reason or "no reason", "reason_user": (slurm or {}).get("reason_user") or "someone",
        "known": known, "error": error, "event": event, "event_text": event_text(event), "under_way": under_way,
        "in_lead": bool(event) and (under_way or start is None or start - now <= lead_s),
        "lead_h": _hours(lead_s),
        # an unknown window start is taken as passed: the node check then decides its return
        "started": drained_start is None or drained_start <= now,
        "drained_window": drained_window or "unknown",
        "same_event": bool(event and record and record.get("key") == event_key(event)),
        "reservation": ", ".join(sorted(n for n in names if n)), "check": check, "check_why": check_why or "failing",
        "record": record,
    }


def _covers(reservation, node):
    """Whether a reservation is another handler's maintenance reservation holding the node."""
    if not isinstance(reservation, dict):
        return False
    flags = [f.lower() for f in reservation.get("flags") or []]
    name = reservation.get("name") or ""
    # the collection's own reservations (nccl_tests) are named gpudirect-...: never another handler's
    return "maint" in flags and not name.startswith("gpudirect") and node in (reservation.get("nodes") or [])


def plan(node, now, lead_s=DEFAULT_LEAD_S, owner=OWNER, **inputs):
    """The node's plan: {node, row, action, why, owner (the slurm_node owner of a drain or resume),
    reason (of a drain), record (what the record on the node becomes; None: removed), record_change}."""
    ctx = context(node, now=now, lead_s=lead_s, owner=owner, **inputs)
    for name, test, action, record_rule, why in ROWS:
        if test(ctx):
            break
    record = _record(record_rule, ctx, now, lead_s)
    return {"node": node, "row": name, "action": action, "why": why.format(**ctx),
            "owner": "gpudirect" if ctx["agent"] else owner,
            "reason": drain_reason(ctx["event"], lead_s) if action == "drain" else None,
            "event": ctx["event"], "under_way": ctx["under_way"], "record": record,
            "record_change": record != ctx["record"]}


def _record(rule, ctx, now, lead_s):
    event, old = ctx["event"], ctx["record"]
    if rule == "clear":
        return None
    if rule == "keep" or (rule == "event" and not event):
        return old
    base = dict(old or {}) if rule == "event" else {"drained_at": _stamp(now), "lead_s": lead_s}
    base.update(key=event_key(event), type=(event.get("type") or "SCHEDULED").upper(),
                window_start=event.get("window_start"), window_end=event.get("window_end"))
    return base


def _stamp(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def parse_reservations(text):
    """scontrol -o show reservation's lines -> [{name, nodes, flags}]; SlurmNodeError on a node list it cannot
    read. "No reservations in the system" and empty text are no reservation."""
    out = []
    for line in (text or "").splitlines():
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if "ReservationName" not in fields:
            continue
        flags = fields.get("Flags", "")
        out.append({"name": fields["ReservationName"],
                    "nodes": slurm_node.expand_hostlist(fields.get("Nodes", "")),
                    "flags": [] if flags.lower() in ("", "(null)") else [f.lower() for f in flags.split(",")]})
    return out
