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
  - a node remediated again within escalate_window_s starts one rung above the one that ran last time,
    never repeating a repair that did not hold;
  - in dry run, the decision is made and logged, and nothing runs.

State (a JSON file): {"runs": [{id, node, started, rung, last_rung, outcome, ended, returned}]}, trimmed
to what the windows need and the runs still open. Audit: one JSON line per decision and per outcome.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import fcntl
import json
import os
import stat
import uuid

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd

HOUR = 3600.0
# the rungs automation climbs; report_host hands the VM to Google and is opt-in (allow_report_host)
LADDER = fd.RUNGS
# how a run ends: its rung cleared the finding (returned: back in service after a passing check, or kept
# drained where returning is not enabled), no rung did, a step failed; or a person released the node
OUTCOMES = ("cleared", "not_cleared", "failed", "released")


class GuardError(Exception):
    """A setting or a state file the guard cannot use; the message names it."""


def node_of(alert, label="instance"):
    """The node an Alertmanager alert is about: its label (instance, without a :port), or None."""
    labels = alert.get("labels") if isinstance(alert, dict) else None
    if not isinstance(labels, dict):
        return None
    value = labels.get(label) or labels.get("node") or labels.get("nodename")
    if not isinstance(value, str) or not value:
        return None
    host = value.rsplit(":", 1)[0] if value.count(":") == 1 else value
    return safe_text.one_line(host, 200)


def _rung(value):
    return value if value in LADDER else None


class Guard(object):
    def __init__(self, state, settings, now):
        self.state = state if isinstance(state, dict) else {}
        self.runs = [r for r in self.state.get("runs") or [] if isinstance(r, dict) and r.get("node")]
        self.settings, self.now = settings, float(now)

    def _recent(self, seconds):
        return [r for r in self.runs if self.now - float(r.get("started", 0)) < seconds]

    def _open(self):
        """Runs that hold their node out of service: not returned by a passing check, not released by a
        person (remediate_release)."""
        return [r for r in self.runs if not r.get("returned") and r.get("outcome") != "released"]

    def decide(self, alert, hosts):
        """One decision for one alert: {decision, node, rung, reason, alert, run}."""
        node = node_of(alert, self.settings["node_label"])
        status = alert.get("status") if isinstance(alert, dict) else None
        labels = alert.get("labels") if isinstance(alert, dict) and isinstance(alert.get("labels"), dict) else {}
        name = safe_text.one_line(labels.get("alertname") or "?", 200)
        base = {"node": node, "alert": name, "status": status, "rung": None, "run": None,
                "finding": safe_text.one_line("%s %s" % (labels.get("component") or "", labels.get("subject") or ""),
                                              300).strip() or name}

        def out(decision, reason, **more):
            return dict(base, decision=decision, reason=reason, **more)

        if status == "resolved":
            return out("ignored", "a resolved alert returns no node to service (the node may have stopped "
                                  "reporting); only a passing node check in a remediation does")
        if status != "firing":
            return out("ignored", "alert status %r is neither firing nor resolved" % (status,))
        if node is None:
            return out("ignored", "the alert names no node (label %s)" % self.settings["node_label"])
        if node not in hosts:
            return out("ignored", "%s is not a node of this inventory" % node)
        if not self.settings["enabled"]:
            return out("held", "remediation is switched off (remediate_enabled)")
        out_now = set(r["node"] for r in self._open())
        if node in out_now:
            return out("ignored", "%s is already under a remediation that has not returned it" % node)
        started = self._recent(HOUR)
        if len(started) >= self.settings["max_per_hour"]:
            return out("held", "held by the guard: %d remediation(s) started in the last hour, the cap is %d"
                       % (len(started), self.settings["max_per_hour"]))
        # rounded down, at least one: a small cluster may still repair a node
        cap = max(1, int(self.settings["max_share"] * len(hosts)))
        if len(out_now) + 1 > cap:
            return out("held", "held by the guard: %d of %d node(s) are out under remediation, the cap is %d "
                       "(%g of the nodes)" % (len(out_now), len(hosts), cap, self.settings["max_share"]))
        rung, reason = self._start_rung(node, _rung(labels.get("rung")))
        if rung is None:
            return out("held", reason)
        if self.settings["dry_run"]:
            return out("dry_run", "dry run: would drain %s and repair it from the least rung its findings name, "
                                  "%s at the lowest (%s)" % (node, rung, reason), rung=rung)
        run = {"id": uuid.uuid4().hex[:12], "node": node, "started": self.now, "rung": rung, "outcome": None,
               "alert": name}
        self.runs.append(run)
        return out("act", "drain %s and repair it from the least rung its findings name, %s at the lowest (%s)"
                   % (node, rung, reason), rung=rung, run=run["id"])

    def _start_rung(self, node, asked):
        """The rung to start at: the alert's (else the first), one above the last one run on this node
        within the escalation window when that one did not hold."""
        window = [r for r in self._recent(self.settings["escalate_window_s"]) if r["node"] == node]
        start = asked or LADDER[0]
        why = "the alert's rung" if asked else "the first rung"
        if window:
            # the highest rung run in the window: a repair that did not hold is never repeated
            last = max(window, key=lambda r: LADDER.index(_rung(r.get("last_rung") or r.get("rung")) or LADDER[0]))
            higher = LADDER.index(_rung(last.get("last_rung") or last.get("rung")) or LADDER[0]) + 1
            if higher >= len(LADDER):
                return None, ("held: %s failed again after the last rung (%s) within %d s; it needs a person"
                              % (node, LADDER[-1], self.settings["escalate_window_s"]))
            if higher > LADDER.index(start):
                start = LADDER[higher]
                why = "escalated: %s failed again within %d s of a remediation that ended at %s" % (
                    node, self.settings["escalate_window_s"], last.get("last_rung") or last.get("rung"))
        if start == "report_host" and not self.settings["allow_report_host"]:
            return None, "held: %s needs Google's host repair, which remediate_allow_report_host leaves to a person" % node
        return start, why

    def record(self, run_id, outcome, rung, returned=False):
        """An outcome of a run started earlier; the run, updated, or None when it is not known."""
        for run in self.runs:
            if run["id"] == run_id:
                run.update(outcome=outcome, last_rung=rung, ended=self.now, returned=bool(returned))
                return run
        return None

    def release(self, node):
        """A person returned the node: its open runs end (released); the runs released."""
        out = []
        for run in self._open():
            if run["node"] == node:
                run.update(outcome="released", ended=self.now)
                out.append(run)
        return out

    def trimmed(self):
        """The runs the windows still need, and every open one."""
        keep, still_open = max(HOUR, self.settings["escalate_window_s"]), self._open()
        return {"runs": [r for r in self.runs if self.now - float(r.get("started", 0)) < keep
                         or r in still_open]}


def settings_of(args):
    """The guard's settings from the action's arguments, checked: GuardError names the one at fault."""
    out = dict(args)
    if not 0 < float(out["max_share"]) <= 1:
        raise GuardError("max_share must be above 0 and at most 1, not %s" % out["max_share"])
    for name in ("max_per_hour", "escalate_window_s"):
        if int(out[name]) < 0:
            raise GuardError("%s must be 0 or more, not %s" % (name, out[name]))
    out["max_share"] = float(out["max_share"])
    return out


def _check_directory(what, path, directory):
    """GuardError unless directory is the running user's (or root's) and no one else may write it:
    whoever may write it may put a link or a file of theirs where the guard's file is."""
    try:
        info = os.stat(directory)
    except OSError as exc:
        raise GuardError("%s %s: its directory %s: %s" % (what, path, directory, exc.strerror or exc))
    if not stat.S_ISDIR(info.st_mode):
        raise GuardError("%s %s: %s is not a directory" % (what, path, directory))
    if info.st_uid not in (os.geteuid(), 0):
        raise GuardError("%s %s: its directory %s belongs to uid %d, not to root or the user running the guard (uid %d)"
                         % (what, path, directory, info.st_uid, os.geteuid()))
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise GuardError("%s %s: its directory %s is writable by group or others (mode %04o); make it 0700"
                         % (what, path, directory, stat.S_IMODE(info.st_mode)))


def _why_not(what, path, exc):
    """The one line for a file that would not open: a link and what is not a file said as such."""
    try:
        info = os.lstat(path)
    except OSError:
        info = None
    if info is not None and stat.S_ISLNK(info.st_mode):
        return GuardError("%s %s is a symbolic link; the guard follows none: make it a file of its own" % (what, path))
    if info is not None and not stat.S_ISREG(info.st_mode):
        return GuardError("%s %s is not a regular file" % (what, path))
    return GuardError("%s %s: %s" % (what, path, exc.strerror or exc))


def open_own(what, path, flags, create=True):
    """A descriptor of the regular file at path, opened with flags, never through a symbolic link;
    the file must be the running user's and writable by no one else, in a directory the same holds for
    (made 0700 where missing). Where the file is absent it is made 0600, or None is returned when not
    create. GuardError names the file in one line."""
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        if not create:
            return None
        try:
            os.makedirs(directory, 0o700)
        except OSError as exc:
            raise GuardError("%s %s: cannot make its directory: %s" % (what, path, exc.strerror or exc))
    _check_directory(what, path, directory)
    # O_NONBLOCK: a FIFO put there must not hang the guard; it is refused below
    flags |= os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        try:
            descriptor = os.open(path, flags)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                raise
            if not create:
                return None
            try:
                descriptor = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o600)
            except OSError as exc:
                if exc.errno != errno.EEXIST:
                    raise
                # made by someone else since: open what is there, and judge it below
                descriptor = os.open(path, flags)
    except OSError as exc:
        raise _why_not(what, path, exc)
    info = os.fstat(descriptor)
    problem = None
    if not stat.S_ISREG(info.st_mode):
        problem = "%s %s is not a regular file" % (what, path)
    elif info.st_uid != os.geteuid():
        problem = "%s %s belongs to uid %d, not to the user running the guard (uid %d)" % (
            what, path, info.st_uid, os.geteuid())
    elif info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        problem = "%s %s is writable by group or others (mode %04o); make it 0600" % (
            what, path, stat.S_IMODE(info.st_mode))
    if problem:
        os.close(descriptor)
        raise GuardError(problem)
    return descriptor


class StateFile(object):
    """The state file, locked (flock on the file itself) from read to write: two remediations deciding
    at once see each other. With create false (check mode) a missing file reads as no runs and nothing
    is made. Opened only through open_own: no link, no file or directory others may write."""

    def __init__(self, path, create=True):
        self.path, self.handle, self.create = path, None, create

    def __enter__(self):
        descriptor = open_own("state file", self.path, os.O_RDWR, self.create)
        if descriptor is None:
            return self
        self.handle = os.fdopen(descriptor, "r+")
        fcntl.flock(self.handle, fcntl.LOCK_EX)
        return self

    def read(self):
        if self.handle is None:
            return {}
        self.handle.seek(0)
        text = self.handle.read()
        if not text.strip():
            return {}
        try:
            return json.loads(text)
        except ValueError:
            raise GuardError("state file %s is not JSON: remove it, or repair it, to let remediation go on"
                             % self.path)

    def write(self, state):
        self.handle.seek(0)
        self.handle.truncate()
        self.handle.write(json.dumps(state, sort_keys=True) + "\n")
        self.handle.flush()
        os.fsync(self.handle.fileno())

    def __exit__(self, *exc):
        if self.handle is not None:
            fcntl.flock(self.handle, fcntl.LOCK_UN)
            self.handle.close()


def audit(path, lines):
    """Append JSON lines to the audit log (made 0600 where new; refused as open_own says)."""
    descriptor = open_own("audit log", path, os.O_WRONLY | os.O_APPEND)
    with os.fdopen(descriptor, "a") as handle:
        for line in lines:
            handle.write(json.dumps(line, sort_keys=True) + "\n")
