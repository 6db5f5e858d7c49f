# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Xid events in the kernel log, and what each one means for the node.

The NVIDIA driver logs a GPU fault as one line:
``NVRM: Xid (PCI:0000:9b:00): 79, pid=..., name=..., GPU has fallen off the bus.``
or, for some Xids, as several lines within a moment (Xid 13 dumps a warp, a global and an ESR line
per SM; 31, 43 and 45 a line per MMU client or channel): :func:`events` folds those into one event,
so a count is a count of faults. A GPU can also fall off the bus with no Xid line
(``NVRM: GPU 0000:9b:00.0: GPU has fallen off the bus``): :func:`fallen_off` finds those, and
leaves out the driver's own lines that follow an Xid 79. The NVSwitches of an HGX board log their own
errors as SXid lines (:func:`sxid_events`), fatal or not as the line says.

What an Xid means comes from one table, :func:`policy`: the collection's Xid catalogue
(xid_catalogue.XIDS) with what an inventory changes per Xid (severity, repair, count in a window).

Plain Python with no ansible import: the node health agent runs it on the node.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import re
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.findings.finding import RUNGS
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import xid_catalogue as catalogue
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu.nvidia_smi import bus_key

_XID = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F:.]+)\):\s*(\d+)\s*(?:,\s*(.*))?$")
_PID = re.compile(r"^pid=('?)([^,']*)\1\s*(?:,\s*)?")
_NAME = re.compile(r"^name=([^,]*)\s*(?:,\s*)?")
_FALLEN = re.compile(r"NVRM: GPU (?:at PCI:)?([0-9a-fA-F:.]+):? GPU has fallen off the bus", re.IGNORECASE)
# the driver's longer report spans lines: "NVRM: The NVIDIA GPU 0000:b3:00.0" ... "fallen off the bus"
_THE_GPU = re.compile(r"NVRM: The NVIDIA GPU ([0-9a-fA-F:.]+)")
# the NVSwitch driver's error line: "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 63 ..."
_SXID = re.compile(r"(nvidia-nvswitch\d+): SXid \((?:PCI:)?([0-9a-fA-F:.]+)\):\s*(\d+)\s*(?:,\s*(.*))?$")
_SEVERITY_WORD = re.compile(r"^(Fatal|Non-?fatal)\b\s*,?\s*", re.IGNORECASE)
_LINK_NUMBER = re.compile(r"\bLink\s+(\d+)\b")
# A pid field is a number, or '<unknown>' when the fault has no process
_UNKNOWN_PID = ("<unknown>", "", "unknown")
# The time a kernel log line carries before "NVRM:": dmesg's seconds since boot ("[  219.470994]", also inside
# journald's syslog lines), dmesg -T ("[Mon Mar  6 21:34:31 2023]"), journalctl -o short-iso, syslog.
_MONOTONIC = re.compile(r"\[\s*(\d+\.\d+)\]")
_TIMES = ((re.compile(r"^\[(\w{3} \w{3}\s+\d{1,2} \d{2}:\d{2}:\d{2} \d{4})\]"), "%a %b %d %H:%M:%S %Y"),
          (re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})"), "%Y-%m-%dT%H:%M:%S"),
          # syslog gives no year: a leap year stands in (Feb 29 reads; Python 3.13 warns on a day without a year)
          (re.compile(r"^([A-Z][a-z]{2}\s+\d{1,2} \d{2}:\d{2}:\d{2})\s"), "%b %d %H:%M:%S"))
_NO_YEAR = "%b %d %H:%M:%S"
# The lines of one multi-line report come within microseconds; a second fault of the same kind is
# a new dump, seconds or more later
FAULT_GAP_S = 1.0
# What an xid_policy entry may set
POLICY_FIELDS = ("severity", "repair", "count", "window_s")


def _matching(text, pattern):
    """The match of pattern in each line of text that has one."""
    for line in (text or "").splitlines():
        match = pattern.search(line)
        if match:
            yield match


def _time(prefix):
    """Seconds (since boot, or since the epoch) of the log line whose text before "NVRM:" is prefix; None when
    it carries no time this reads."""
    found = _MONOTONIC.search(prefix)
    if found:
        return float(found.group(1))
    for pattern, form in _TIMES:
        found = pattern.search(prefix.strip())
        if found:
            said = " ".join(found.group(1).split())
            if form == _NO_YEAR:
                said, form = said + " 2000", form + " %Y"
            try:
                return float(calendar.timegm(time.strptime(said, form)))
            except ValueError:
                return None
    return None


def _continues(fault, event):
    """Whether event is one more line of the open fault: a multi-line Xid, same GPU, Xid and process, a line
    the report has not given yet (a word-for-word repeat is a new report), within FAULT_GAP_S where both
    lines carry a time."""
    if event["xid"] != fault["xid"] or event["xid"] not in catalogue.MULTILINE_XIDS or event["pid"] != fault["pid"]:
        return False
    if event["message"] in fault["_messages"]:
        return False
    if (event["time"] is None) != (fault["_last"] is None):
        return False
    return event["time"] is None or 0 <= event["time"] - fault["_last"] <= FAULT_GAP_S


def events(text):
    """Kernel log text -> [{pci_bus_id, xid, pid, message, lines, time}], one per fault, in log order.

    pci_bus_id is the '0000:9b:00' form (nvidia_smi.bus_key); pid is an int or None; message is the first
    line's, after the pid and process name; lines how many kernel log lines reported the fault; time the
    first line's seconds (since boot from dmesg, else since the epoch), or None when the line carries none.
    """
    out, open_on_bus = [], {}
    for line in (text or "").splitlines():
        match = _XID.search(line)
        if not match:
            continue
        rest = (match.group(3) or "").strip()
        pid = None
        found = _PID.match(rest)
        if found:
            value = found.group(2).strip()
            pid = int(value) if value.isdigit() else None
            rest = rest[found.end():]
            name = _NAME.match(rest)
            if name:
                rest = rest[name.end():]
        event = {"pci_bus_id": bus_key(match.group(1)) or match.group(1).lower(), "xid": int(match.group(2)),
                 "pid": pid, "message": rest.strip(), "lines": 1, "time": _time(line[:match.start()])}
        fault = open_on_bus.get(event["pci_bus_id"])
        if fault is not None and _continues(fault, event):
            fault["lines"] += 1
            fault["_messages"].add(event["message"])
            fault["_last"] = event["time"]
            continue
        event.update(_messages=set([event["message"]]), _last=event["time"])
        out.append(event)
        # another Xid of the GPU ends its open fault
        open_on_bus[event["pci_bus_id"]] = event
    for event in out:
        del event["_messages"], event["_last"]
    return out


def grouped(found, number="xid"):
    """Events -> [((pci_bus_id, xid), [events])], one group per GPU and Xid (number="sxid": per NVSwitch and
    SXid), in first-seen order."""
    groups, order = {}, []
    for event in found:
        key = (event["pci_bus_id"], event[number])
        if key not in groups:
            order.append(key)
            groups[key] = []
        groups[key].append(event)
    return [(key, groups[key]) for key in order]


def fallen_off(text):
    """Bus ids ('0000:9b:00') the kernel log says fell off the bus without an Xid line: the driver's own
    "fallen off the bus" lines of a GPU whose Xid 79 is logged are part of that Xid's report."""
    with_xid = set(event["pci_bus_id"] for event in events(text) if event["xid"] in catalogue.FALLEN_OFF_XIDS)
    seen = []
    lines = (text or "").splitlines()
    for number, line in enumerate(lines):
        match = _FALLEN.search(line)
        if not match:
            match = _THE_GPU.search(line)
            if match and not any("fallen off the bus" in later for later in lines[number + 1:number + 4]):
                match = None
        if match and "Xid" not in line:
            key = bus_key(match.group(1))
            if key and key not in seen and key not in with_xid:
                seen.append(key)
    return seen


def sxid_events(text):
    """NVSwitch SXid lines of the kernel log -> [{switch, pci_bus_id, sxid, fatal, links, message, lines}], one
    per error, in log order.

    ``nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 63 LTSSM Fault Up``: fatal is True or
    False where the line says "Fatal" or "Non-fatal"; links are the link numbers the lines name. The lines
    that follow without a severity word ("Severity 1 Engine instance ...", "Data {...}") continue the same
    switch's error: they count in lines, not as errors of their own. One whose first line is not in the
    log is kept, with fatal None.
    """
    out, open_on_switch = [], {}
    for match in _matching(text, _SXID):
        rest = (match.group(4) or "").strip()
        word = _SEVERITY_WORD.match(rest)
        fatal = None
        if word:
            fatal = not word.group(1).lower().startswith("non")
            rest = rest[word.end():]
        event = {"switch": match.group(1), "pci_bus_id": bus_key(match.group(2)) or match.group(2).lower(),
                 "sxid": int(match.group(3)), "fatal": fatal,
                 "links": [int(n) for n in _LINK_NUMBER.findall(rest)], "message": rest.strip(), "lines": 1}
        error = open_on_switch.get(event["switch"])
        if fatal is None and error is not None and error["sxid"] == event["sxid"]:
            error["lines"] += 1
            error["links"].extend(n for n in event["links"] if n not in error["links"])
            continue
        out.append(event)
        open_on_switch[event["switch"]] = event
    return out


def grouped_sxids(found):
    """SXid events -> [((pci_bus_id, sxid), [events])], one group per NVSwitch and SXid, in first-seen order."""
    return grouped(found, number="sxid")


def _unknown(number):
    return {"meaning": "not in this collection's Xid catalogue", "severity": "warn", "repair": "reset_gpu",
            "source": None}


def _row(number, entry, known):
    row = dict(entry)
    row.setdefault("count", catalogue.DEFAULT_COUNT)
    row.setdefault("window_s", catalogue.DEFAULT_WINDOW_S)
    row.setdefault("state", catalogue.STATE_BACKED.get(number))
    row.update(xid=number, known=known, set=())
    return row


def _whole(value):
    """value as an int when it is a whole number (or its digits as text), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.match(r"^\s*-?\d+\s*$", value):
        return int(value)
    return None


def _named(value):
    """A key or value as one short line, whatever it holds."""
    return re.sub(r"[\x00-\x1f\x7f]", "?", str(value))[:60]


def _override(row, code, settings, problems):
    """Apply one xid_policy entry to its row; each bad field is one line in problems and keeps the row's."""
    if not isinstance(settings, dict):
        problems.append("xid_policy %s: must be a mapping of %s, got %s; the entry is ignored"
                        % (code, ", ".join(POLICY_FIELDS), type(settings).__name__))
        return
    done = []
    for field in sorted(settings, key=str):
        value = settings[field]
        where = "xid_policy %s.%s" % (code, _named(field))
        if field not in POLICY_FIELDS:
            problems.append("%s: unknown field (known: %s); ignored" % (where, ", ".join(POLICY_FIELDS)))
            continue
        if field == "severity" and value not in catalogue.SEVERITIES:
            problems.append("%s: %s is not one of %s; %s applies"
                            % (where, _named(value), ", ".join(catalogue.SEVERITIES), row["severity"]))
        elif field == "repair" and value not in RUNGS:
            problems.append("%s: %s is not one of %s; %s applies"
                            % (where, _named(value), ", ".join(RUNGS), row["repair"]))
        elif field == "count" and (_whole(value) is None or _whole(value) < 1):
            problems.append("%s: %s is not a whole number of 1 or more; %d applies"
                            % (where, _named(value), row["count"]))
        elif field == "window_s" and value is not None and (_whole(value) is None or _whole(value) < 1):
            problems.append("%s: %s is not a whole number of seconds of 1 or more, or null (since boot); %s "
                            "applies" % (where, _named(value), row["window_s"] or "since boot"))
        else:
            row[field] = _whole(value) if field in ("count", "window_s") and value is not None else value
            done.append(field)
    row["set"] = tuple(done)


def policy(overrides=None):
    """The Xid policy: {xid: {xid, known, meaning, severity, repair, source, count, window_s, state, set}}
    and [problem lines].

    The collection's catalogue (xid_catalogue.XIDS, read at each call) is the default, with count 1 and no
    window unless its entry says otherwise. overrides (an inventory's xid_policy) maps an Xid, as a number
    or its digits, to any of severity (fail, warn), repair (a rung), count (events of that Xid on one GPU
    that make the severity apply; fewer warn) and window_s (the seconds those must fall within; null: since
    boot). An Xid the catalogue lacks may be given one. A bad code or field is one line naming it, and
    the rest still applies; set names the fields an override changed.
    """
    table = dict((number, _row(number, entry, True)) for number, entry in catalogue.XIDS.items())
    problems = []
    if overrides is None:
        return table, problems
    if not isinstance(overrides, dict):
        return table, ["xid_policy: must map Xid codes to their settings, got %s" % type(overrides).__name__]
    for code in sorted(overrides, key=str):
        number = _whole(code)
        if number is None or number < 0:
            problems.append("xid_policy %s: the code must be a whole number (an Xid); the entry is ignored"
                            % _named(code))
            continue
        row = table.get(number) or _row(number, _unknown(number), False)
        _override(row, number, overrides[code], problems)
        table[number] = row
    return table, problems


def most_in_window(found, window_s):
    """The most of these events within any window_s seconds (all of them with no window, or where a line
    carries no time: the log does not say when)."""
    times = [event.get("time") for event in found]
    if not window_s or any(t is None for t in times):
        return len(found)
    times.sort()
    best, start = 0, 0
    for end, moment in enumerate(times):
        while moment - times[start] > window_s:
            start += 1
        best = max(best, end - start + 1)
    return best


def describe(number, message="", table=None):
    """The policy's row of one Xid (table from :func:`policy`; the catalogue's when None):
    {xid, known, meaning, severity, repair, source, count, window_s, state, set}.

    An Xid the policy lacks is named as unknown: a warn whose repair is the lowest rung that proves the
    GPU (a reset), never dropped. The NVLink Xids that say "Nonfatal" on their line are warnings, unless
    the inventory set their severity.
    """
    row = (policy()[0] if table is None else table).get(number)
    if row is None:
        return _row(number, _unknown(number), False)
    row = dict(row)
    if (number in catalogue.SUBCODE_XIDS and "severity" not in row["set"]
            and re.search(r"\bnon-?fatal\b", message or "", re.I)):
        row.update(severity="warn", repair="rerun")
    return row
