# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What automation may do about an alert, decided before it touches a node (the remediation_guard
action), and the audit of every decision.

The guards, in the order they are tried:
  - a resolved alert returns no node to service: a node that stopped reporting resolves its alerts too;
    a node goes back only after its own passing node check, in the remediation that drained it;
  - the global off switch holds everything;
  - a node under a remediation that has not ended is not started twice (Alertmanager repeats alerts);
  - at most max_per_hour remediations start in any hour, and at most max_share of the node set is
    under remediation (drained by it, not yet returned) at once; the rest are held, and say so;
  - a node remediated again within escalate_window_s of the end of a remediation in which a rung ran
    starts one rung above the one that ran last time, never repeating a repair that did not hold;
  - in dry run, the decision is made and logged, the caps counted as live counts them, and nothing runs
    and nothing is kept.

State (a JSON file): {"version": 1, "runs": [{id, node, started, rung, last_rung, outcome, ended, returned,
released_reason}]}, trimmed to what the windows need and the runs still open; a file of another shape or a
newer version is refused, never read as empty. Audit: one JSON line per decision, outcome, release and
preview, written before the state: a decision that cannot be logged changes nothing. Where the caller gives
the nodes' places ({node: place}, module_utils/findings/finding.py), a line about a node has its place: the
fault may be below the VM (its physical host, its sub-block).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import os
import time
import uuid
from fractions import Fraction

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import guard_store, ladder

HOUR = 3600.0
# how a run ends: its rung cleared the finding (returned: back in service after a passing check, or kept
# drained where returning is not enabled), no rung did, a step failed; a person released the node; the
# node's job outlived the wait after the drain (no rung ran; it stays drained for a person, the run open);
# someone else's drain was on the node (nothing was done; the run is closed, as released)
OUTCOMES = ("cleared", "not_cleared", "failed", "released", "waiting_for_job", "person_drained")
# outcomes that end a run and free its node without a passing check: a person's decision stands
CLOSED = ("released", "person_drained")
# outcomes in which no rung ran: nothing to escalate from
NO_RUNG = ("waiting_for_job", "person_drained")
# the state file's layout; a newer one is refused rather than misread
VERSION = 1
# the options of which a call gives one
MODES = ("alerts", "outcome", "release", "preview", "held")


# one error for the decision and its books: the message names what is at fault
GuardError = guard_store.GuardError


def _labels(label):
    """The labels tried for the node, in order: node_label (one or a list), then node and nodename."""
    given = [label] if isinstance(label, str) else list(label or [])
    return [name for name in given if name] + [name for name in ("node", "nodename") if name not in given]


def host_part(value):
    """The host of a scrape address: 10.0.0.5:9100 and [fd00::5]:9100 name a host and a port; a bare IPv6
    address has several colons and no port."""
    if value.startswith("[") and "]" in value:
        return value[1:value.index("]")]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def node_of(alert, label="instance"):
    """What an Alertmanager alert names as its node: the first of its labels (node_label, then node and
    nodename) that is set, without a :port; or None."""
    labels = alert.get("labels") if isinstance(alert, dict) else None
    if not isinstance(labels, dict):
        return None
    for name in _labels(label):
        value = labels.get(name)
        if isinstance(value, str) and value:
            return safe_text.one_line(host_part(value), 200)
    return None


def place(named, hosts, addresses=None):
    """(the inventory name, None) of what an alert names - an inventory name, or the address (ansible_host,
    without a :port) of exactly one node; else (None, why not)."""
    if named in hosts:
        return named, None
    owners = sorted(name for name, address in (addresses or {}).items()
                    if name in hosts and isinstance(address, str) and address and host_part(address) == named)
    if len(owners) == 1:
        return owners[0], None
    if owners:
        return None, "%s is the address of %d nodes (%s); name the node" % (named, len(owners), ", ".join(owners))
    return None, "%s is not a node of this inventory" % named


# Alertmanager's usual severities, most severe first: the finding a node's one decision is about
SEVERITIES = ("critical", "error", "warning", "info")


def _severity(alert):
    labels = alert.get("labels") if isinstance(alert, dict) and isinstance(alert.get("labels"), dict) else {}
    value = labels.get("severity")
    return SEVERITIES.index(value) if value in SEVERITIES else len(SEVERITIES)


def _ladder():
    """The rungs automation climbs, in order: the ladder's table (read at each call, never copied)."""
    return ladder.order()


def _rung(value):
    return value if value in _ladder() else None


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _shown(value):
    return safe_text.one_line(repr(value), 80)


def _run_problem(run):
    """What is wrong with a run read from the state, or None."""
    if not isinstance(run, dict):
        return "is not an object"
    if not isinstance(run.get("id"), str) or not run["id"]:
        return "has no id"
    if not isinstance(run.get("node"), str) or not run["node"]:
        return "has no node name"
    if not _number(run.get("started")):
        return "has a start time that is not a number (%s)" % _shown(run.get("started"))
    if run.get("ended") is not None and not _number(run["ended"]):
        return "has an end time that is not a number (%s)" % _shown(run["ended"])
    if run.get("rung") not in _ladder():
        return "has an unknown rung %s" % _shown(run.get("rung"))
    # older cores recorded no rung as ""
    if run.get("last_rung") not in _ladder() + (None, ""):
        return "has an unknown last rung %s" % _shown(run["last_rung"])
    for key in ("outcome", "released_from"):
        if run.get(key) is not None and run[key] not in OUTCOMES:
            return "has an unknown %s %s" % (key.replace("_", " "), _shown(run[key]))
    return None


def runs_of(state, where, need_runs=True):
    """The runs of a state as read, checked: GuardError in one line naming where (and the run's index)
    for a shape or a version this guard does not know; nothing is dropped or read as empty."""
    if not isinstance(state, dict):
        raise GuardError("%s is not a JSON object: remove it, or repair it, to let remediation go on" % where)
    version = state.get("version", 1)  # files written before the version was kept are version 1
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise GuardError("%s has version %s, not a version number (this guard reads %d)"
                         % (where, _shown(version), VERSION))
    if version > VERSION:
        raise GuardError("%s is version %d, newer than this guard reads (%d): run the collection that wrote it"
                         % (where, version, VERSION))
    if "runs" not in state and not need_runs:
        return []
    if "runs" not in state:
        raise GuardError("%s has no runs list" % where)
    if not isinstance(state["runs"], list):
        raise GuardError("%s: its runs is not a list" % where)
    for index, run in enumerate(state["runs"]):
        problem = _run_problem(run)
        if problem:
            raise GuardError("%s: its run at index %d %s" % (where, index, problem))
    return state["runs"]


def share_cap(share, count):
    """The nodes that may be out at once: share of count, rounded down, at least one (a small cluster may
    still repair a node). Exact for a decimal share: in floating point 0.7 * 90 is 62.99999999999999."""
    return max(1, int(Fraction(repr(float(share))) * count))


class Guard(object):
    def __init__(self, state, settings, now):
        self.runs = list(runs_of(state, "the state", need_runs=False))
        self.settings, self.now = settings, float(now)
        # why no run may start in this call (the run fails after the decisions are logged), or None
        self.stop = None
        # where the state was read, for the messages
        self.where = "read"

    def _recent(self, seconds):
        return [r for r in self.runs if self.now - r["started"] < seconds]

    @staticmethod
    def _last(run):
        """When a run last did something: its end, else its start while open."""
        return run["ended"] if run.get("ended") is not None else run["started"]

    def _open(self):
        """Runs that hold their node out of service: not returned by a passing check, not released by a
        person (remediate_release), not closed on finding a person's drain."""
        return [r for r in self.runs if not r.get("returned") and r.get("outcome") not in CLOSED]

    def held_nodes(self):
        """The nodes an open run holds, sorted."""
        return sorted(set(r["node"] for r in self._open()))

    @staticmethod
    def finding_of(alert):
        """What an alert found, in one line: its component and subject, else its name."""
        labels = alert.get("labels") if isinstance(alert, dict) and isinstance(alert.get("labels"), dict) else {}
        return safe_text.one_line("%s %s" % (labels.get("component") or "", labels.get("subject") or ""),
                                  300).strip() or _alert_name(alert)

    def decide(self, alert, hosts, addresses=None):
        """One decision for one alert: {decision, node, rung, reason, alert, run}; node is the inventory name
        (named: what the alert said, where it differs)."""
        named = node_of(alert, self.settings["node_label"])
        node, unplaced = place(named, hosts, addresses) if named is not None else (None, None)
        status = alert.get("status") if isinstance(alert, dict) else None
        labels = alert.get("labels") if isinstance(alert, dict) and isinstance(alert.get("labels"), dict) else {}
        name = safe_text.one_line(labels.get("alertname") or "?", 200)
        base = {"node": node or named, "alert": name, "status": status, "rung": None, "run": None,
                "finding": self.finding_of(alert)}

        def out(decision, reason, **more):
            return dict(base, decision=decision, reason=reason, **more)

        if status == "resolved":
            return out("ignored", "a resolved alert returns no node to service (the node may have stopped "
                                  "reporting); only a passing node check in a remediation does")
        if status != "firing":
            return out("ignored", "alert status %r is neither firing nor resolved" % (status,))
        if named is None:
            return out("ignored", "the alert names no node (label %s)" % " or ".join(_labels(self.settings["node_label"])))
        if node is None:
            return out("ignored", unplaced)
        if named != node:
            base["named"] = named
        if not self.settings["enabled"]:
            return out("held", "remediation is switched off (remediate_enabled)")
        out_now = set(r["node"] for r in self._open())
        if node in out_now:
            return out("ignored", "%s is already under a remediation that has not returned it" % node)
        started = self._recent(HOUR)
        if len(started) >= self.settings["max_per_hour"]:
            return out("held", "held by the guard: %d remediation(s) started in the last hour, the cap is %d"
                       % (len(started), self.settings["max_per_hour"]))
        cap = share_cap(self.settings["max_share"], len(hosts))
        if len(out_now) + 1 > cap:
            return out("held", "held by the guard: %d of %d node(s) are out under remediation, the cap is %d "
                       "(%g of the nodes)" % (len(out_now), len(hosts), cap, self.settings["max_share"]))
        rung, reason = self._start_rung(node, _rung(labels.get("rung")))
        if rung is None:
            return out("held", reason)
        if self.settings["dry_run"]:
            # provisional, never kept (trimmed leaves it out): the next alert of this call meets the caps
            # as a live run would
            self.runs.append({"id": None, "node": node, "started": self.now, "rung": rung, "outcome": None,
                              "alert": name, "provisional": True})
            return out("dry_run", "dry run: would drain %s and repair it from the least rung its findings name, "
                                  "%s at the lowest (%s); passed the caps: %d of %d remediation(s) in the last "
                                  "hour, %d of %d node(s) out (%g of %d)"
                       % (node, rung, reason, len(started) + 1, self.settings["max_per_hour"], len(out_now) + 1,
                          cap, self.settings["max_share"], len(hosts)), rung=rung)
        if self.stop:
            return out("held", self.stop)
        run = {"id": uuid.uuid4().hex[:12], "node": node, "started": self.now, "rung": rung, "outcome": None,
               "alert": name}
        self.runs.append(run)
        return out("act", "drain %s and repair it from the least rung its findings name, %s at the lowest (%s)"
                   % (node, rung, reason), rung=rung, run=run["id"])

    def _start_rung(self, node, asked):
        """The rung to start at: the alert's (else the first), one above the last one run on this node
        when that run ended within the escalation window: a repair that did not hold is not repeated
        however long the drain took. A run in which no rung ran is not counted."""
        window = [r for r in self.runs if r["node"] == node and not r.get("provisional")
                  and self.now - self._last(r) < self.settings["escalate_window_s"]
                  and (r.get("released_from") or r.get("outcome")) not in NO_RUNG]
        rungs = _ladder()
        start = asked or rungs[0]
        why = "the alert's rung" if asked else "the first rung"
        if window:
            # the highest rung run in the window: a repair that did not hold is never repeated
            last = max(window, key=lambda r: rungs.index(_rung(r.get("last_rung") or r.get("rung")) or rungs[0]))
            higher = rungs.index(_rung(last.get("last_rung") or last.get("rung")) or rungs[0]) + 1
            if higher >= len(rungs):
                return None, ("held: %s failed again after the last rung (%s) within %d s; it needs a person"
                              % (node, rungs[-1], self.settings["escalate_window_s"]))
            if higher > rungs.index(start):
                start = rungs[higher]
                why = "escalated: %s failed again within %d s of a remediation that ended at %s" % (
                    node, self.settings["escalate_window_s"], last.get("last_rung") or last.get("rung"))
        # the fleet ledger: the node's physical host failed again after a rung cleared it, under whichever VM
        repeat = (self.settings.get("repeat_after_clear") or {}).get(node)
        higher = ladder.above(repeat.get("rung")) if isinstance(repeat, dict) else None
        if higher and rungs.index(higher) > rungs.index(start):
            start = higher
            said = repeat.get("why") or "its physical host failed again after that rung cleared it"
            why = "escalated one rung above %s: %s" % (repeat["rung"], safe_text.one_line(said, 500))
        # every rung is gated the same way, by its setting in the ladder's table: held where none from the start
        # up is allowed (the plan on the node would climb nothing)
        allow = allow_of(self.settings)
        above = [row for row in ladder.table() if row["rung"] in rungs[rungs.index(start):]]
        if not any(ladder.allows(row, allow) for row in above):
            return None, ("held: %s needs %s, which %s leave%s to a person" % (
                node, " or ".join(row["what"] for row in above), " and ".join(row["allow"] for row in above),
                "" if len(above) > 1 else "s"))
        return start, why

    def record(self, run_id, outcome, rung, returned=False):
        """An outcome of a run started earlier; the run, updated, or None when it is not known. GuardError
        for an outcome or rung the state could not be read back with."""
        if outcome not in OUTCOMES:
            raise GuardError("outcome must be one of %s, not %s" % (", ".join(OUTCOMES), _shown(outcome)))
        rung = rung or None  # an older core templates none as ""
        if rung is not None and rung not in _ladder():
            raise GuardError("the outcome's rung must be one of %s or none, not %s"
                             % (", ".join(_ladder()), _shown(rung)))
        for run in self.runs:
            if run["id"] == run_id and not run.get("provisional"):
                run.update(outcome=outcome, last_rung=rung, ended=self.now, returned=bool(returned))
                return run
        return None

    def release(self, node, reason="released by a person"):
        """A person returned the node: its open runs end (released, with the reason); the runs released."""
        out = []
        for run in self._open():
            if run["node"] == node:
                # what the run had come to, so that escalation knows whether a rung ran
                run.update(outcome="released", released_from=run.get("outcome"), released_reason=reason,
                           ended=self.now)
                out.append(run)
        return out

    def trimmed(self):
        """The state to keep: the runs the windows still need (the hour by start, escalation by end), and
        every open one; never a dry run's."""
        still_open = self._open()
        return {"version": VERSION, "runs": [
            r for r in self.runs if not r.get("provisional")
            and (self.now - r["started"] < HOUR or self.now - self._last(r) < self.settings["escalate_window_s"]
                 or r in still_open)]}


def allow_of(settings):
    """{setting: bool} of every rung's setting (ladder.RUNG_PARTS allow): from allow (the remediate role's
    mapping), else the action's own option of that name less its remediate_ (allow_report_host), else
    allowed. GuardError names a setting no rung has, or a value that is not a boolean."""
    given = settings.get("allow") or {}
    known = ladder.allow_settings()
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise GuardError("allow names %s, which no rung has (the rungs' settings: %s)"
                         % (", ".join(unknown), ", ".join(known)))
    out = {}
    for name in known:
        value = given.get(name, settings.get(name[len("remediate_"):]))
        try:
            out[name] = True if value is None else boolean(value, strict=True)
        except TypeError:
            raise GuardError("allow: %s must be true or false, not %s" % (name, _shown(value)))
    return out


def settings_of(args):
    """The guard's settings from the action's arguments, checked: GuardError names the one at fault."""
    out = dict(args)
    allow_of(out)
    if not 0 < float(out["max_share"]) <= 1:
        raise GuardError("max_share must be above 0 and at most 1, not %s" % out["max_share"])
    for name in ("max_per_hour", "escalate_window_s"):
        if int(out[name]) < 0:
            raise GuardError("%s must be 0 or more, not %s" % (name, out[name]))
    out["max_share"] = float(out["max_share"])
    repeat = out.get("repeat_after_clear") or {}
    if not isinstance(repeat, dict) or any(not isinstance(v, dict) for v in repeat.values()):
        raise GuardError("repeat_after_clear must map a node to {rung, why} (the fleet ledger's candidate_nodes), "
                         "not %s" % _shown(repeat))
    return out


def places_of(args):
    """{node: place} from the action's places, each place as a finding holds it (finding.place): GuardError
    names the node whose place is of another shape."""
    given = args.get("places") or {}
    if not isinstance(given, dict):
        raise GuardError("places must be a mapping of node to place, not %s" % _shown(given))
    out = {}
    for node, value in given.items():
        try:
            out[str(node)] = fd.place(value)
        except ValueError as exc:
            raise GuardError("places: %s: %s" % (safe_text.one_line(node, 200), exc))
    return out


def _placed(lines, places):
    """The audit lines, each about a node with a place given with that place."""
    return [dict(line, place=places[line["node"]]) if places.get(line.get("node")) else line for line in lines]


def mode_of(args):
    """The one of MODES a call gives (alerts when none): GuardError where it gives more."""
    given = [name for name in MODES if args.get(name)]
    if len(given) > 1:
        raise GuardError("give one of alerts, outcome, release, preview and held, not %s" % " and ".join(given))
    return given[0] if given else "alerts"


def message(line):
    """An audit line in one line: what, the node, why."""
    decision, node = line["decision"], line.get("node") or "-"
    if decision == "preview":
        return "preview %s: %s" % (node, line["plan"])
    if decision == "outcome":
        return "outcome %s: %s" % (node, line["outcome"])
    if decision == "release":
        return "release %s: released %d run(s): %s" % (node, len(line["runs"]), line["reason"])
    return "%s %s: %s" % (decision, node, line.get("reason"))


def apply(args, check, now, books=None, environ=None):
    """The remediation_guard action's work on its checked arguments (alerts already read): (the audit lines,
    the result's keys, changed among them). The books are the action's (guard_store.books_for) unless given.
    The audit line is written before the state: a decision that cannot be logged changes nothing. In check
    mode nothing is written."""
    mode = mode_of(args)
    settings = settings_of(args)
    places = places_of(args)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    # a bad preview reaches no books
    line = _placed([_preview(args["preview"], stamp)], places)[0] if mode == "preview" else None
    own = books is None
    if own:
        books = guard_store.books_for(args, os.environ if environ is None else environ, check=runs_of)
    try:
        where = {"location": books.location, "retries": 0}
        if mode == "preview":
            return (books.log([line]) if not check else [line]), {"changed": False, "books": where}
        if mode == "held":
            # read only: nothing made, no line logged
            return [], {"held_nodes": Guard(books.peek(), settings, now).held_nodes(), "changed": False,
                        "books": where}

        def decide(state):
            judge = Guard(state, settings, now)
            judge.where = books.location
            lines, out = _STEPS[mode](judge, args, stamp)
            lines = _placed(lines, places)
            # a dry run's decisions start no run: its state is never written
            keep = judge.trimmed() if any(x["decision"] in ("act", "outcome", "release") for x in lines) else None
            return lines, out, keep

        lines, out, retries = books.settle(decide, check)
    finally:
        if own:
            books.close()
    if mode == "alerts":
        # what the caller shows is what the books hold (the batch a cloud decision was kept in)
        out["decisions"] = lines
        out["held"] = [d for d in lines if d["decision"] == "held"]
    out["books"] = dict(where, retries=retries)
    out["changed"] = bool(out.get("act") or out.get("recorded") or out.get("released"))
    return lines, out


def _preview(item, stamp):
    node, plan = item.get("node"), item.get("plan")
    if not isinstance(node, str) or not node:
        raise GuardError("preview needs a node (a name), not %s" % _shown(node))
    if not isinstance(plan, str) or not plan:
        raise GuardError("preview needs a plan (one line of text), not %s" % _shown(plan))
    return {"time": stamp, "decision": "preview", "node": safe_text.one_line(node, 200),
            "plan": safe_text.one_line(plan, 2000)}


def _outcome(judge, args, stamp):
    item = args["outcome"]
    run = judge.record(item.get("run"), item.get("outcome"), item.get("rung"), item.get("returned", False))
    if run is None:
        raise GuardError("no remediation run %s in the state %s" % (_shown(item.get("run")), judge.where))
    line = {"time": stamp, "decision": "outcome", "node": run["node"], "run": run["id"], "alert": run.get("alert"),
            "rung": run["last_rung"], "outcome": run["outcome"], "returned": run["returned"],
            "detail": item.get("detail", "")}
    return [line], {"recorded": run}


def _release(judge, args, stamp):
    reason = safe_text.one_line(args.get("release_reason") or "released by a person", 500)
    runs = judge.release(args["release"], reason)
    line = {"time": stamp, "decision": "release", "node": args["release"], "runs": [r["id"] for r in runs],
            "reason": reason}
    return [line], {"released": [r["id"] for r in runs]}


def _grouped(alerts, hosts, addresses, label):
    """The alerts in order, those firing about one node folded into one entry: [(the alert decided on, the
    others)], the most severe (then the first) decided on. And what firing alerts name that is no node."""
    entries, by_node, unplaced = [], {}, []
    for alert in alerts:
        firing = isinstance(alert, dict) and alert.get("status") == "firing"
        named = node_of(alert, label)
        node = place(named, hosts, addresses)[0] if named is not None else None
        if firing and node is None:
            unplaced.append(named if named is not None else "an alert that names no node (%s)" % _alert_name(alert))
        if not firing or node is None:
            entries.append([alert])
        elif node in by_node:
            by_node[node].append(alert)
        else:
            by_node[node] = [alert]
            entries.append(by_node[node])
    out = []
    for group in entries:
        first = min(group, key=_severity)  # min keeps the first of equals
        out.append((first, [a for a in group if a is not first]))
    return out, unplaced


def _alert_name(alert):
    labels = alert.get("labels") if isinstance(alert, dict) and isinstance(alert.get("labels"), dict) else {}
    return safe_text.one_line(labels.get("alertname") or "?", 200)


def _alerts(judge, args, stamp):
    hosts = list(args["hosts"])
    addresses = args.get("addresses") or {}
    groups, unplaced = _grouped(args["alerts"], hosts, addresses, judge.settings["node_label"])
    if unplaced or not hosts:
        # the run fails once these decisions are logged, before any node is touched: a run started now
        # would hold its node and a slot of the caps with nothing done
        judge.stop = ("held: the run fails before any node is touched, since %s; nothing starts"
                      % ("the node set is empty" if not hosts else
                         "the alerts also name what is no node of this inventory (%s)" % ", ".join(unplaced)))
    lines, act, preview = [], [], []
    for alert, others in groups:
        decision = judge.decide(alert, hosts, addresses)
        if others:
            # one decision per node and call: the other findings go with it
            decision["also"] = [{"alert": _alert_name(a), "finding": judge.finding_of(a)} for a in others]
        lines.append(dict(decision, time=stamp))
        seen = {"node": decision["node"], "rung": decision["rung"], "finding": decision["finding"],
                "alert": decision["alert"]}
        if decision["decision"] == "act":
            act.append(dict(seen, run=decision["run"]))
        elif decision["decision"] == "dry_run":
            preview.append(seen)
    return lines, {"decisions": lines, "act": act, "preview": preview, "unplaced": unplaced,
                   "held": [d for d in lines if d["decision"] == "held"]}


_STEPS = {"alerts": _alerts, "outcome": _outcome, "release": _release}
