# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host maintenance as the node's metadata server tells it, judged for a node that runs jobs.

GCE announces host maintenance on the instance: ``instance/maintenance-event`` (NONE, or
TERMINATE_ON_HOST_MAINTENANCE / MIGRATE_ON_HOST_MAINTENANCE while it happens) and
``instance/upcoming-maintenance`` (JSON: maintenance_status PENDING or ONGOING, type, window_start_time,
window_end_time, latest_window_start_time, can_reschedule; 404 when nothing is scheduled). A3 and A4 VMs
do not live-migrate: the host's maintenance stops the VM, and the job on it.

A node with maintenance under way is a ``fail``; one whose window starts within ``warn_within_s`` a
``warn``, so the scheduler can drain it before its jobs die. Plain Python (urllib, no ansible import):
the node health agent ships it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import json
import re
import time

# urllib, not ansible.module_utils.urls: the node health agent runs this without ansible-core
from urllib.error import HTTPError, URLError
from urllib.request import ProxyHandler, Request, build_opener

from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd

DEFAULT_URL = "http://metadata.google.internal/computeMetadata/v1"
EVENT = "maintenance-event"
UPCOMING = "upcoming-maintenance"
MAX_BYTES = 64 * 1024
_STAMP = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d+)?(Z|[+-]\d\d:\d\d)$")


class MaintenanceError(Exception):
    """The metadata server could not be asked, or answered something that is no maintenance notice."""


def fetch(url, timeout):
    """(status, text) of a GET to the metadata server: no proxy, the Metadata-Flavor header."""
    opener = build_opener(ProxyHandler({}))
    try:
        resp = opener.open(Request(url, headers={"Metadata-Flavor": "Google"}), timeout=timeout)
        try:
            return resp.getcode(), resp.read(MAX_BYTES).decode("utf-8", "replace")
        finally:
            resp.close()
    except HTTPError as exc:
        return exc.code, ""
    except (URLError, OSError, ValueError) as exc:
        raise MaintenanceError("metadata server %s cannot be reached: %s" % (url, getattr(exc, "reason", exc)))


def timestamp(text):
    """RFC 3339 -> Unix time, or None."""
    match = _STAMP.match(text or "")
    if not match:
        return None
    year, month, day, hour, minute, second, zone = match.groups()
    value = calendar.timegm((int(year), int(month), int(day), int(hour), int(minute), int(second), 0, 0, 0))
    if zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        value -= sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    return value


def _field(doc, snake):
    """The metadata server spells fields in snake case; the Compute API's resource in camel case."""
    camel = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), snake)
    return doc.get(snake, doc.get(camel))


def parse_upcoming(text):
    """upcoming-maintenance's JSON -> {status, type, window_start, window_end, latest_start, can_reschedule}."""
    try:
        doc = json.loads(text)
    except ValueError:
        raise MaintenanceError("upcoming-maintenance is not JSON")
    if not isinstance(doc, dict):
        raise MaintenanceError("upcoming-maintenance is not a JSON object")
    return normalize_upcoming(doc)


def normalize_upcoming(doc):
    """One upcoming maintenance, as the metadata server (snake case) or the Compute API's
    resourceStatus.upcomingMaintenance (camel case) spells it -> {status, type, window_start, window_end,
    latest_start, can_reschedule}."""
    return {"status": (_field(doc, "maintenance_status") or "").upper() or None, "type": _field(doc, "type"),
            "window_start": _field(doc, "window_start_time"), "window_end": _field(doc, "window_end_time"),
            "latest_start": _field(doc, "latest_window_start_time"),
            "can_reschedule": bool(_field(doc, "can_reschedule"))}


def read(base_url=DEFAULT_URL, timeout=3.0, get=fetch):
    """{event, upcoming, error}: what the server says now; error names the URL when it cannot say."""
    base = base_url.rstrip("/")
    out = {"event": None, "upcoming": None, "error": None}
    try:
        status, text = get("%s/instance/%s" % (base, EVENT), timeout)
        if status == 200:
            out["event"] = text.strip() or None
        elif status != 404:
            raise MaintenanceError("metadata server %s/instance/%s answered HTTP %s" % (base, EVENT, status))
        status, text = get("%s/instance/%s" % (base, UPCOMING), timeout)
        if status == 200 and text.strip():
            out["upcoming"] = parse_upcoming(text)
        elif status not in (200, 404):
            raise MaintenanceError("metadata server %s/instance/%s answered HTTP %s" % (base, UPCOMING, status))
    except MaintenanceError as exc:
        out["error"] = str(exc)
    return out


def _when(seconds):
    hours = seconds / 3600.0
    return "in %.0f min" % (seconds / 60.0) if hours < 1 else "in %.1f h" % hours


def judge(state, now=None, warn_within_s=24 * 3600):
    """Findings {component: host, subject: maintenance, severity, cause, can_reschedule}."""
    now = time.time() if now is None else now

    def finding(severity, cause, can_reschedule=False):
        return fd.make("host", "maintenance", severity, cause, can_reschedule=can_reschedule)
    if state.get("error"):
        return [finding("warn", "could not run: %s" % state["error"])]
    event = (state.get("event") or "NONE").upper()
    if event != "NONE":
        return [finding("fail", "host maintenance under way (%s): the VM stops, and its jobs with it" % event)]
    upcoming = state.get("upcoming")
    if not upcoming:
        return []
    start = timestamp(upcoming.get("window_start"))
    if upcoming.get("status") == "ONGOING" or (start is not None and start <= now):
        return [finding("fail", "%s host maintenance under way since %s: the VM stops, and its jobs with it"
                        % ((upcoming.get("type") or "scheduled").lower(), upcoming.get("window_start") or "now"))]
    if start is None or start - now > warn_within_s:
        return []
    cause = "%s host maintenance %s (window %s to %s): drain the node before it starts" % (
        (upcoming.get("type") or "scheduled").lower(), _when(start - now), upcoming.get("window_start"),
        upcoming.get("window_end") or "?")
    if upcoming.get("can_reschedule"):
        cause += "; it can be started now, on the drained node"
    return [finding("warn", cause, upcoming.get("can_reschedule"))]
