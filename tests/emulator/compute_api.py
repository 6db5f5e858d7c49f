#!/usr/bin/env python
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Compute Engine API emulator for tests: a real HTTP server (standard library
only) that serves instances, networks and subnetworks from a fixture file.

    python tests/emulator/compute_api.py --fixture FILE [--host 127.0.0.1]
        [--port 0] [--ready-file PATH] [--page-size N] [--tls-cert F --tls-key F]

With --ready-file it writes its base URL there once it listens.

Fixture (YAML or JSON)::

    projects:
      <project>:
        instances: [<Compute API instance resources>]   # zone "zones/<z>" or a URL
        networks: {<name>: {name, mtu, ...}}
        subnetworks: {"<region>/<name>": {...}}
        firewalls: [<firewall rule resources>]   # optional; network by name or URL
        zones: [<zone>]       # optional: zones with no instances (still listed)
    page_size: 500          # optional, most items per page
    faults:                 # optional, see FAULTS below
      latency_ms: 30
    service_accounts:       # optional: {email: public key PEM}; JWTs from these
                            # keys are verified, others are refused

Endpoints: aggregated/instances, zones/<z>/instances, zones/<z>/instances/<i> (instances.get, with the
instance's status), zones/<z>/operations and zones/<z>/operations/<op> (zoneOperations.list, get), POST
zones/<z>/instances/<i>/reportHostAsFaulty, global/networks/<n>, global/firewalls,
regions/<r>/subnetworks/<n> (GET, under /compute/v1/projects/<p>/), an OAuth
token endpoint (POST /token, JWT-bearer and refresh grants), the IAM
generateAccessToken call (POST /v1/projects/-/serviceAccounts/<sa>:generateAccessToken),
Cloud Storage media uploads (storage_api.py) and control endpoints: GET
/_emulator/stats, GET /_emulator/reports and /_emulator/objects (what was sent),
POST /_emulator/reset (zero the counters), POST /_emulator/faults (replace the
faults with the JSON body), POST /_emulator/maintenance (schedule, reschedule or
cancel an instance's resourceStatus.upcomingMaintenance, State.set_maintenance).

GETs honour the `fields` parameter (Google's partial-response syntax, see
parse_fields); the stats count requests by kind and project, and the bytes of
the API answers' bodies (`bytes_json` as JSON, `bytes` on the wire, gzipped when
the client asked for it).
"""

from __future__ import absolute_import, division, print_function

import argparse
import base64
import copy
import gzip
import json
import os
import re
import socket
import ssl
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import storage_api

SELF_LINK_BASE = "https://www.googleapis.com/compute/v1/"

# Fault switches (all optional):
FAULTS = {
    "latency_ms": "every request takes this long to answer (the emulator's own work counts towards it)",
    "fail_first": "{count, status (429|500|502|503|504), retry_after, kinds}: the first COUNT API requests (of "
                  "those kinds of the stats' by_kind, where kinds is given) fail",
    "reset_first": "close the connection without an answer for the first N API requests",
    "unauthorized": "true: every API request answers 401",
    "forbidden_projects": "projects that answer 403 PERMISSION_DENIED",
    "disabled_projects": "projects that answer 403 accessNotConfigured (API disabled)",
    "unreachable_zones": "zones missing from aggregated lists (reported as unreachable)",
    "forbidden_networks": "network names whose networks.get answers 403",
    "forbidden_network_projects": "projects (a Shared VPC's host project) whose networks.get and networks.list "
                                  "answer 403 PERMISSION_DENIED naming the network and compute.networks.get",
    "bad_token_grants": "true: the token endpoint answers invalid_grant",
    "drop_body_first": "the first N API answers close the connection halfway through the body",
    "trickle_ms": "every API answer is sent one byte at a time, this many ms apart",
    "listing_body": "null | list | items_list: instance listings answer this malformed body",
    "repeat_page_token": "true: every page of a listing names the first page's token as the next one",
    "strip_zone": "instance names listed without their zone field",
    "strip_self_link": "instance names listed without their selfLink either",
    "ignore_fields": "true: answer full resources whatever the fields parameter asks (what a client that sends "
                     "no field mask gets)",
    # reportHostAsFaulty and its operations (a stand-in: the real method's refusals are those Google's
    # troubleshooting page names; the HTTP status of each is the emulator's choice)
    "operation_ms": "{pending, running}: how long an operation the emulator starts stays PENDING, then RUNNING, "
                    "before it is DONE (default 100 and 300)",
    "operation_error": "{code, message}: the error a reportHostAsFaulty operation ends with (INTERNAL_ERROR, ...)",
    "report_error": "{status, code, message}: reportHostAsFaulty answers this error (the code leads the message)",
    "forbidden_reports": "projects whose reportHostAsFaulty answers 403 (their reads still work)",
    "busy_instances": "{instance name: operationType}: an operation on it that stays RUNNING",
}

OPERATION_MS = {"pending": 100, "running": 300}


# --- filters ---------------------------------------------------------------

_TOKEN = re.compile(r'\s*(?:(\()|(\))|("(?:[^"\\]|\\.)*")|(!=|=|:|<=|>=|<|>)|([^\s()"=!:<>]+))')


# instances.reportHostAsFaulty's faultReasons[].behavior values
FAULT_BEHAVIORS = ("BEHAVIOR_UNSPECIFIED", "PERFORMANCE", "SILENT_DATA_CORRUPTION", "UNRECOVERABLE_GPU_ERROR")


class FilterError(ValueError):
    pass


def _tokens(text):
    pos, out = 0, []
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise FilterError("cannot parse filter near %r" % text[pos:pos + 20])
        pos = m.end()
        lpar, rpar, quoted, op, word = m.groups()
        if lpar:
            out.append(("(", "("))
        elif rpar:
            out.append((")", ")"))
        elif quoted is not None:
            out.append(("str", quoted[1:-1].replace('\\"', '"')))
        elif op:
            out.append(("op", op))
        elif word is not None:
            if word in ("eq", "ne"):
                out.append(("op", word))
            elif word in ("AND", "OR", "NOT"):
                out.append((word, word))
            else:
                out.append(("word", word))
    return out


def parse_filter(text):
    """Parse the filter forms the Compute API accepts into a predicate tree."""
    toks = _tokens(text)
    pos = [0]

    def peek():
        return toks[pos[0]] if pos[0] < len(toks) else (None, None)

    def take():
        tok = peek()
        pos[0] += 1
        return tok

    def expr():
        node = term()
        while peek()[0] == "OR":
            take()
            node = ("or", node, term())
        return node

    def term():
        node = factor()
        while peek()[0] not in (None, ")", "OR"):
            if peek()[0] == "AND":
                take()
            node = ("and", node, factor())
        return node

    def factor():
        kind, value = peek()
        if kind == "NOT":
            take()
            return ("not", factor())
        if kind == "(":
            take()
            node = expr()
            if take()[0] != ")":
                raise FilterError("missing ) in filter %r" % text)
            return node
        if kind != "word":
            raise FilterError("expected a field name in filter %r" % text)
        take()
        okind, op = take()
        if okind != "op":
            raise FilterError("expected an operator after %s in filter %r" % (value, text))
        vkind, literal = take()
        if vkind not in ("word", "str"):
            raise FilterError("expected a value after %s %s in filter %r" % (value, op, text))
        return ("cmp", value, op, literal)

    tree = expr()
    if pos[0] != len(toks):
        raise FilterError("unexpected text at the end of filter %r" % text)
    return tree


def _field(resource, path):
    value = resource
    for part in path.split("."):
        if isinstance(value, dict):
            value = value.get(part)
        else:
            return None
    return value


def _scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def evaluate(tree, resource):
    kind = tree[0]
    if kind == "and":
        return evaluate(tree[1], resource) and evaluate(tree[2], resource)
    if kind == "or":
        return evaluate(tree[1], resource) or evaluate(tree[2], resource)
    if kind == "not":
        return not evaluate(tree[1], resource)
    name, op, literal = tree[1:]
    actual = _field(resource, name)
    if op in ("eq", "ne"):
        hit = re.fullmatch(literal, _scalar(actual)) is not None
        return hit if op == "eq" else not hit
    if op == ":":
        if literal == "*":
            return actual not in (None, "", [], {})
        pattern = re.escape(literal).replace(r"\*", ".*")
        return re.fullmatch(pattern, _scalar(actual)) is not None
    text = _scalar(actual)
    # URL fields compare equal to their full URL or their last segment
    equal = text == literal or (text.startswith("https://") and text.rsplit("/", 1)[-1] == literal)
    if op == "=":
        return equal
    if op == "!=":
        return not equal
    raise FilterError("operator %s is not supported by the emulator" % op)


# --- field masks -----------------------------------------------------------
#
# Google's partial-response syntax (the `fields` system parameter): a comma-separated list
# of field paths; a path is names joined by "/" (or "."); "name(sub,...)" keeps only those
# sub-fields of an object, or of every element of an array; "*" stands for every field of
# an object. Spaces around names are allowed. A selection the server cannot parse is
# HTTP 400 "Invalid field selection ...". The emulator has no schema, so it does not refuse
# names its resources lack: it leaves them out of the answer.

_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\*")


class FieldsError(ValueError):
    pass


def parse_fields(text):
    """'a,b/c(d,e)' -> {'a': None, 'b': {'c': {'d': None, 'e': None}}} (None: the whole value).

    Raises FieldsError naming what cannot be parsed."""
    if not isinstance(text, str) or not text.strip():
        raise FieldsError("Invalid field selection: the selection is empty")
    pos = [0]

    def skip_space():
        while pos[0] < len(text) and text[pos[0]].isspace():
            pos[0] += 1

    def fail(what):
        raise FieldsError("Invalid field selection %s (%s at character %d)" % (text, what, pos[0] + 1))

    def name():
        skip_space()
        match = _FIELD_NAME.match(text, pos[0])
        if not match:
            fail("expected a field name")
        pos[0] = match.end()
        skip_space()
        return match.group(0)

    def selection(depth):
        tree = {}
        while True:
            path = [name()]
            while pos[0] < len(text) and text[pos[0]] in "/.":
                pos[0] += 1
                path.append(name())
            sub = None
            if pos[0] < len(text) and text[pos[0]] == "(":
                pos[0] += 1
                sub = selection(depth + 1)
                if pos[0] >= len(text) or text[pos[0]] != ")":
                    fail("missing )")
                pos[0] += 1
                skip_space()
            _insert(tree, path, sub)
            if pos[0] < len(text) and text[pos[0]] == ",":
                pos[0] += 1
                continue
            if pos[0] < len(text) and not (depth and text[pos[0]] == ")"):
                fail("unexpected %r" % text[pos[0]])
            return tree

    return selection(0)


def _insert(tree, path, sub):
    """Add one path (with its sub-selection) to a selection tree, merging with what is there."""
    node = tree
    for part in path[:-1]:
        if part in node and node[part] is None:
            return  # the whole value is already selected
        node = node.setdefault(part, {})
    last = path[-1]
    if sub is None or node.get(last, {}) is None:
        node[last] = None
    elif last not in node:
        node[last] = sub
    else:
        for key, value in sub.items():
            _insert(node[last], [key], value)


def apply_fields(value, tree):
    """The part of value that a parse_fields() tree selects."""
    if tree is None:
        return value
    if isinstance(value, list):
        return [apply_fields(v, tree) for v in value]
    if not isinstance(value, dict):
        return value  # a sub-selection of a scalar keeps the scalar
    out = {}
    for key, sub in tree.items():
        if key == "*":
            for k, v in value.items():
                out[k] = apply_fields(v, _merge(sub, tree.get(k, {})))
        elif key in value and key not in out:
            out[key] = apply_fields(value[key], sub)
    return out


def _merge(a, b):
    """Two sub-selections of one field as one (None, the whole value, wins)."""
    if a is None or b is None:
        return None
    merged = dict(a)
    for key, value in b.items():
        merged[key] = _merge(merged[key], value) if key in merged else value
    return merged


# --- the fixture -----------------------------------------------------------

def load_fixture(path):
    with open(path) as handle:
        text = handle.read()
    if path.endswith(".json"):
        return json.loads(text)
    try:
        import yaml
    except ImportError:
        return json.loads(text)
    return yaml.safe_load(text)


def _url(project, value, kind):
    """Normalise a fixture reference to the self-link form the real API returns."""
    if not value:
        return value
    if value.startswith("https://") or value.startswith("http://"):
        return value
    if value.startswith("projects/"):
        return SELF_LINK_BASE + value
    if "/" in value:
        return SELF_LINK_BASE + "projects/%s/%s" % (project, value)
    return SELF_LINK_BASE + "projects/%s/%s/%s" % (project, kind, value)


def normalise_instance(project, raw, index):
    inst = copy.deepcopy(raw)
    zone = inst.get("zone", "zones/us-central1-a")
    zone_name = zone.rstrip("/").rsplit("/", 1)[-1]
    inst["zone"] = _url(project, "zones/" + zone_name, "zones")
    mtype = inst.get("machineType", "n2-standard-8")
    if mtype is None:  # a record that lacks its machine type, as a fixture says
        del inst["machineType"]
    else:
        inst["machineType"] = _url(project, "zones/%s/machineTypes/%s" % (zone_name, mtype.rsplit("/", 1)[-1])
                                   if not mtype.startswith(("https://", "projects/")) else mtype, "machineTypes")
    inst.setdefault("kind", "compute#instance")
    inst.setdefault("id", str(1000000000000 + index))
    inst.setdefault("status", "RUNNING")
    inst["selfLink"] = inst["zone"] + "/instances/" + inst.get("name", "vm-%d" % index)
    region = zone_name.rsplit("-", 1)[0]
    for i, nic in enumerate(inst.get("networkInterfaces") or []):
        nic.setdefault("name", "nic%d" % i)
        nic.setdefault("kind", "compute#networkInterface")
        if isinstance(nic.get("network"), str) and nic["network"]:  # a malformed one stays as given
            nic["network"] = _url(project, nic["network"] if "/" in nic["network"]
                                  else "global/networks/" + nic["network"], "global/networks")
        if nic.get("subnetwork"):
            nic["subnetwork"] = _url(project, nic["subnetwork"] if "/" in nic["subnetwork"]
                                     else "regions/%s/subnetworks/%s" % (region, nic["subnetwork"]),
                                     "subnetworks")
    inst["resourcePolicies"] = [_url(project, p if "/" in p else "regions/%s/resourcePolicies/%s" % (region, p),
                                     "resourcePolicies") for p in inst.get("resourcePolicies") or []]
    return inst


class State(object):
    """Fixture data, faults and request counters, shared by the handler threads."""

    def __init__(self, fixture, page_size=None):
        self.lock = threading.Lock()
        self.projects = {}
        for name, proj in (fixture.get("projects") or {}).items():
            proj = proj or {}
            insts = [normalise_instance(name, raw, i) for i, raw in enumerate(proj.get("instances") or [])]
            zones = {}
            for inst in insts:
                zones.setdefault(inst["zone"].rsplit("/", 1)[-1], []).append(inst)
            for zone in proj.get("zones") or []:
                zones.setdefault(zone, [])
            self.projects[name] = {
                "instances": insts,
                "zones": zones,
                "networks": dict(proj.get("networks") or {}),
                "subnetworks": dict(proj.get("subnetworks") or {}),
                "firewalls": list(proj.get("firewalls") or []),
            }
        self.page_size = int(page_size or fixture.get("page_size") or 500)
        self.faults = dict(fixture.get("faults") or {})
        self.service_accounts = dict(fixture.get("service_accounts") or {})
        # Cloud Storage (storage_api.py): the buckets there are, and the objects written to them
        self.buckets = dict(fixture.get("buckets") or {})
        # Encoded answers to GETs already served, by request path and query. The fixture never
        # changes and set_faults() clears it, so a repeated listing costs no emulator CPU and
        # answers in the configured latency, as a real server's cache would.
        self.responses = {}
        self.reset()

    def reset(self):
        with self.lock:
            self.counts = {"total": 0, "api": 0, "token": 0, "iam": 0, "by_kind": {}, "by_project": {},
                           "failed": 0, "busy_ms_max": 0.0, "busy_ms_total": 0.0, "late": 0, "gzip": 0,
                           "bytes": 0, "bytes_json": 0}
            self.failures_left = int((self.faults.get("fail_first") or {}).get("count", 0))
            self.resets_left = int(self.faults.get("reset_first") or 0)
            self.drops_left = int(self.faults.get("drop_body_first") or 0)
            self.tokens = set()
            self.reports = []
            self.objects = {}
            # zonal operations: [{project, zone, op (the resource), started (monotonic), forever}]
            self.operations = []
            for name, kind in sorted((self.faults.get("busy_instances") or {}).items()):
                for project, proj in self.projects.items():
                    for zone, insts in proj["zones"].items():
                        if any(i["name"] == name for i in insts):
                            self._start_operation(project, zone, name, kind, forever=True)

    def _start_operation(self, project, zone, name, kind, forever=False):
        """A new zonal operation on an instance (the caller holds the lock); its status follows the clock."""
        op = "operation-%d-%s" % (int(time.time() * 1000), uuid.uuid4().hex[:12])
        zone_link = SELF_LINK_BASE + "projects/%s/zones/%s" % (project, zone)
        resource = {
            "kind": "compute#operation", "id": str(uuid.uuid4().int % (10 ** 18)), "name": op, "zone": zone_link,
            "operationType": kind, "targetLink": zone_link + "/instances/" + name,
            "insertTime": _rfc3339(time.time()), "selfLink": zone_link + "/operations/" + op,
            "user": "emulator@stand-in"}
        self.operations.append({"project": project, "zone": zone, "op": resource, "started": time.monotonic(),
                                "wall": time.time(), "forever": forever,
                                "error": None if forever else self.faults.get("operation_error")})
        return op

    def operation(self, entry):
        """The operation resource as it stands now: PENDING, RUNNING, then DONE (with its error, if seeded)."""
        timing = dict(OPERATION_MS, **(self.faults.get("operation_ms") or {}))
        age = (time.monotonic() - entry["started"]) * 1000.0
        out = dict(entry["op"])
        if entry["forever"] or age < timing["pending"] + timing["running"]:
            out["status"] = "PENDING" if age < timing["pending"] and not entry["forever"] else "RUNNING"
            out["progress"] = 0
            if out["status"] == "RUNNING":
                out["startTime"] = _rfc3339(entry["wall"] + timing["pending"] / 1000.0)
            return out
        out.update(status="DONE", progress=100, startTime=_rfc3339(entry["wall"] + timing["pending"] / 1000.0),
                   endTime=_rfc3339(entry["wall"] + (timing["pending"] + timing["running"]) / 1000.0))
        error = entry.get("error")
        if error:
            out["error"] = {"errors": [{"code": error.get("code", "INTERNAL_ERROR"),
                                        "message": error.get("message", "Internal error.")}]}
            out["httpErrorStatusCode"] = int(error.get("status", 500))
            out["httpErrorMessage"] = error.get("http_message", "INTERNAL SERVER ERROR")
        return out

    def set_maintenance(self, change):
        """Schedule, reschedule or cancel an instance's host maintenance: {project, zone, instance,
        upcomingMaintenance} sets resourceStatus.upcomingMaintenance as given (the API's camel-case fields:
        type, maintenanceStatus, windowStartTime, windowEndTime, latestWindowStartTime, canReschedule); null
        or absent removes it, as Google does once the event is cancelled or done. (code, answer)."""
        if not isinstance(change, dict) or not change.get("instance"):
            return 400, {"error": "expected {project, zone, instance, upcomingMaintenance}"}
        upcoming = change.get("upcomingMaintenance")
        if upcoming is not None and not isinstance(upcoming, dict):
            return 400, {"error": "upcomingMaintenance must be an object or null"}
        with self.lock:
            found = [inst for project, proj in self.projects.items() if change.get("project") in (None, project)
                     for zone, insts in proj["zones"].items() if change.get("zone") in (None, zone)
                     for inst in insts if inst["name"] == change["instance"]]
            if len(found) != 1:
                return 404, {"error": "%d instances named %s" % (len(found), change["instance"])}
            status = found[0].setdefault("resourceStatus", {})
            if upcoming is None:
                status.pop("upcomingMaintenance", None)
            else:
                status["upcomingMaintenance"] = copy.deepcopy(upcoming)
            # listings are cached while the fixture stands still; this changed it
            self.responses.clear()
            return 200, {"ok": True, "instance": change["instance"], "upcomingMaintenance": upcoming}

    def set_faults(self, faults):
        with self.lock:
            self.faults = dict(faults or {})
            self.responses.clear()
        self.reset()

    def busy(self, seconds, late):
        """Record one answer's own work time, and whether it overran the latency."""
        with self.lock:
            ms = seconds * 1000.0
            self.counts["busy_ms_total"] = round(self.counts["busy_ms_total"] + ms, 3)
            self.counts["busy_ms_max"] = round(max(self.counts["busy_ms_max"], ms), 3)
            self.counts["late"] += 1 if late else 0

    def sent(self, json_bytes, wire_bytes):
        """Count one API answer's body: its JSON size and what crossed the wire (gzipped or not)."""
        with self.lock:
            self.counts["bytes_json"] += json_bytes
            self.counts["bytes"] += wire_bytes

    def count(self, kind, project=None):
        with self.lock:
            self.counts["total"] += 1
            if kind in ("token", "iam"):
                self.counts[kind] += 1
            else:
                self.counts["api"] += 1
            self.counts["by_kind"][kind] = self.counts["by_kind"].get(kind, 0) + 1
            if project:
                self.counts["by_project"][project] = self.counts["by_project"].get(project, 0) + 1

    def take_drop(self):
        """Whether the next API answer is cut off halfway through its body."""
        with self.lock:
            if self.drops_left > 0:
                self.drops_left -= 1
                self.counts["failed"] += 1
                return True
        return False

    def take_fault(self, kind=None):
        """('reset'|status, retry_after) for the next API request (of this kind), or (None, None)."""
        with self.lock:
            if self.resets_left > 0:
                self.resets_left -= 1
                self.counts["failed"] += 1
                return "reset", None
            spec = self.faults.get("fail_first") or {}
            if self.failures_left > 0 and kind in (spec.get("kinds") or [kind]):
                self.failures_left -= 1
                self.counts["failed"] += 1
                return int(spec.get("status", 503)), spec.get("retry_after")
        return None, None


def _page_token(offset):
    return base64.urlsafe_b64encode(("o:%d" % offset).encode()).decode()


def _offset(token):
    if not token:
        return 0
    try:
        return int(base64.urlsafe_b64decode(token.encode()).decode().split(":", 1)[1])
    except (ValueError, IndexError):
        raise FilterError("invalid pageToken")


def _rfc3339(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + ".%03d-00:00" % (int(seconds * 1000) % 1000)


def _google_error(code, status, reason, message):
    return code, {"error": {"code": code, "message": message, "status": status,
                            "errors": [{"message": message, "domain": "global", "reason": reason}]}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ComputeApiEmulator/1.0"
    state = None  # set by make_server

    def log_message(self, fmt, *args):  # keep test output quiet
        if os.environ.get("COMPUTE_API_EMULATOR_LOG"):
            sys.stderr.write("emulator: " + (fmt % args) + "\n")

    # -- plumbing ------------------------------------------------------------

    def _gzip_wanted(self):
        # Google's rule: gzip only when Accept-Encoding allows it and the user agent says "gzip"
        return ("gzip" in (self.headers.get("Accept-Encoding") or "")
                and "gzip" in (self.headers.get("User-Agent") or ""))

    def _send(self, code, body, headers=None, gzipped=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        if getattr(self, "_api_answer", False):
            self.state.sent(len(data), len(gzipped) if gzipped is not None else len(data))
        self._wait()
        self.send_response(code)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        if gzipped is not None:
            data = gzipped
            with self.state.lock:
                self.state.counts["gzip"] += 1
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        api = getattr(self, "_api_answer", False)
        self._api_answer = False
        if api and self.state.take_drop():
            self._headers_buffer.append(b"\r\n" + data[:len(data) // 2])
            self.flush_headers()
            self.close_connection = True
            self.connection.shutdown(2)
            return
        trickle = float(self.state.faults.get("trickle_ms") or 0) / 1000.0 if api else 0
        if trickle:
            self.flush_headers()
            self.wfile.write(b"\r\n")
            for i in range(len(data)):
                self.wfile.write(data[i:i + 1])
                self.wfile.flush()
                time.sleep(trickle)
            return
        # headers and body in one write: two small writes meet Nagle and delayed ACKs (40 ms each)
        self._headers_buffer.append(b"\r\n" + data)
        self.flush_headers()

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _latency(self):
        """Start this request's clock: its answer leaves no sooner than latency_ms from now."""
        self._started = time.monotonic()
        self._answer_at = self._started + float(self.state.faults.get("latency_ms") or 0) / 1000.0

    def _wait(self):
        started = getattr(self, "_started", None)
        if started is None:  # control endpoints have no latency
            return
        self._started = None
        now = time.monotonic()
        self.state.busy(now - started, now > self._answer_at)
        if now < self._answer_at:
            time.sleep(self._answer_at - now)

    # -- control and auth ----------------------------------------------------

    def do_POST(self):
        path = urlsplit(self.path).path
        body = self._body()
        if path == "/_emulator/reset":
            self.state.reset()
            return self._send(200, {"ok": True})
        if path == "/_emulator/faults":
            self.state.set_faults(json.loads(body or b"{}"))
            return self._send(200, {"ok": True, "faults": self.state.faults})
        if path == "/_emulator/maintenance":
            return self._send(*self.state.set_maintenance(json.loads(body or b"{}")))
        if path == "/token":
            return self._token(body)
        match = re.match(r"^/v1/projects/-/serviceAccounts/([^/:]+):generateAccessToken$", path)
        if match:
            return self._impersonate(match.group(1), body)
        match = re.match(r"^/compute/v1/projects/([^/]+)/zones/([^/]+)/instances/([^/]+)/reportHostAsFaulty$", path)
        if match:
            return self._report_faulty(match.group(1), match.group(2), match.group(3), body)
        match = re.match(r"^/upload/storage/v1/b/([^/]+)/o$", path)
        if match:
            if self._gate("storage_upload", None):
                return None
            query = dict((k, v[0]) for k, v in parse_qs(urlsplit(self.path).query, keep_blank_values=True).items())
            return self._send(*storage_api.upload(self, unquote(match.group(1)), query, body))
        return self._send(*_google_error(404, "NOT_FOUND", "notFound", "no such endpoint %s" % path))

    def _gate(self, kind, project):
        """What every project call meets first, as the API does: counted, delayed, a seeded fault, then the
        credential. True when the call is answered already."""
        self.state.count(kind, project)
        self._latency()
        if self._answer_fault(kind):
            return True
        if not self._authorised():
            self._send(*_google_error(401, "UNAUTHENTICATED", "authError",
                                      "Request had invalid authentication credentials."))
            return True
        return False

    def _report_faulty(self, project, zone, name, raw):
        """instances.reportHostAsFaulty: validated as the API does, refused as Google's troubleshooting page
        says it refuses (a VM not RUNNING, not reservation-bound, with a report in progress; the rest through
        the report_error fault), recorded for the tests, answered with a zonal Operation that runs for a
        short while. The emulated host is not replaced."""
        if self._gate("reportHostAsFaulty", project):
            return None
        if project in (self.state.faults.get("forbidden_projects") or []) + \
                (self.state.faults.get("forbidden_reports") or []):
            return self._send(*_google_error(
                403, "PERMISSION_DENIED", "forbidden",
                "Required 'compute.instances.reportHostAsFaulty' permission for 'projects/%s'" % project))
        proj = self.state.projects.get(project)
        inst = next((i for i in (proj or {"zones": {}})["zones"].get(zone, []) if i["name"] == name), None)
        if inst is None:
            return self._send(*_google_error(404, "NOT_FOUND", "notFound", "The resource 'projects/%s/zones/%s/"
                                             "instances/%s' was not found" % (project, zone, name)))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return self._send(*_google_error(400, "INVALID_ARGUMENT", "parseError", "Parse Error"))
        if not isinstance(body, dict) or body.get("disruptionSchedule") != "IMMEDIATE":
            return self._send(*_google_error(400, "INVALID_ARGUMENT", "invalid", "Invalid value for field "
                                             "'resource.disruptionSchedule': only IMMEDIATE is allowed"))
        reasons = body.get("faultReasons")
        if not reasons:
            return self._send(*_google_error(400, "INVALID_ARGUMENT", "invalid",
                                             "FAULT_REASONS_EMPTY_SHOULD_BE_SPECIFIED"))
        if not isinstance(reasons, list) or not all(
                isinstance(r, dict) and r.get("behavior") in FAULT_BEHAVIORS for r in reasons):
            return self._send(*_google_error(400, "INVALID_ARGUMENT", "invalid", "Invalid value for field "
                                             "'resource.faultReasons': each needs a behavior of %s"
                                             % ", ".join(FAULT_BEHAVIORS)))
        injected = self.state.faults.get("report_error")
        if injected:
            status = int(injected.get("status", 400))
            code = injected.get("code") or ""
            return self._send(*_google_error(status, injected.get("grpc", "FAILED_PRECONDITION"),
                                             injected.get("reason", "invalid"),
                                             ("%s: " % code if code else "") + injected.get("message", "refused")))
        if inst.get("status") != "RUNNING":
            return self._send(*_google_error(400, "FAILED_PRECONDITION", "invalid", "INSTANCE_SHOULD_BE_RUNNING: "
                                             "the instance is %s" % inst.get("status")))
        if (inst.get("scheduling") or {}).get("provisioningModel") != "RESERVATION_BOUND":
            return self._send(*_google_error(400, "FAILED_PRECONDITION", "invalid",
                                             "INSTANCES_WITHOUT_RESERVATION_NOT_SUPPORTED"))
        with self.state.lock:
            busy = [e for e in self.state.operations if e["op"]["targetLink"] == inst["selfLink"]
                    and self.state.operation(e)["status"] != "DONE"]
            if not busy:
                op = self.state._start_operation(project, zone, name, "reportHostAsFaulty")
                self.state.reports.append({"project": project, "zone": zone, "instance": name, "body": body,
                                           "operation": op})
                answer = self.state.operation(self.state.operations[-1])
        if busy:
            return self._send(*_google_error(409, "ABORTED", "resourceNotReady", "FAILED_WITH_UNEXPECTED_STATUS: "
                                             "operation %s is in progress on the instance" % busy[0]["op"]["name"]))
        return self._send(200, answer)

    def _dynamic(self, project, proj, rest, query):
        """(code, body) of the GETs whose answer changes with time (instances.get, zoneOperations), or None."""
        match = re.match(r"^zones/([^/]+)/instances/([^/]+)$", rest)
        if match:
            inst = next((i for i in proj["zones"].get(match.group(1), []) if i["name"] == match.group(2)), None)
            if inst is None:
                return _google_error(404, "NOT_FOUND", "notFound", "The resource 'projects/%s/%s' was not found"
                                     % (project, rest))
            return 200, inst
        match = re.match(r"^zones/([^/]+)/operations(?:/([^/]+))?$", rest)
        if not match:
            return None
        zone, name = match.groups()
        with self.state.lock:
            ops = [self.state.operation(e) for e in self.state.operations
                   if e["project"] == project and e["zone"] == zone]
        if name:
            found = next((op for op in ops if op["name"] == name), None)
            if found is None:
                return _google_error(404, "NOT_FOUND", "notFound", "The resource 'projects/%s/%s' was not found"
                                     % (project, rest))
            return 200, found
        page, token = self._page(self._matching(ops, query), query)
        body = {"kind": "compute#operationList", "id": "projects/%s/zones/%s/operations" % (project, zone),
                "items": page}
        if token:
            body["nextPageToken"] = token
        return 200, body

    def _issue(self):
        token = "emu-" + uuid.uuid4().hex
        with self.state.lock:
            self.state.tokens.add(token)
        return token

    def _token(self, body):
        self.state.count("token")
        self._latency()
        form = dict((k, v[0]) for k, v in parse_qs(body.decode()).items())
        if self.state.faults.get("bad_token_grants"):
            return self._send(400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."})
        grant = form.get("grant_type")
        if grant == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            problem = self._check_assertion(form.get("assertion", ""))
            if problem:
                return self._send(400, {"error": "invalid_grant", "error_description": problem})
        elif grant != "refresh_token":
            return self._send(400, {"error": "unsupported_grant_type", "error_description": str(grant)})
        return self._send(200, {"access_token": self._issue(), "expires_in": 3600, "token_type": "Bearer"})

    def _check_assertion(self, assertion):
        """Check the signed JWT a service account key produces; verify it when the key is known."""
        parts = assertion.split(".")
        if len(parts) != 3:
            return "assertion is not a JWT"
        try:
            claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
        except ValueError:
            return "assertion payload is not JSON"
        for claim in ("iss", "aud", "iat", "exp"):
            if claim not in claims:
                return "assertion lacks the %s claim" % claim
        if claims["exp"] < time.time():
            return "assertion expired"
        public_pem = self.state.service_accounts.get(claims["iss"])
        if public_pem:
            try:
                from cryptography.hazmat.primitives import hashes, serialization
                from cryptography.hazmat.primitives.asymmetric import padding
                key = serialization.load_pem_public_key(public_pem.encode())
                signature = base64.urlsafe_b64decode(parts[2] + "=" * (-len(parts[2]) % 4))
                key.verify(signature, (parts[0] + "." + parts[1]).encode(), padding.PKCS1v15(), hashes.SHA256())
            except Exception:  # any failure is a bad signature to the caller
                return "Invalid JWT Signature."
        elif self.state.service_accounts:
            return "unknown service account %s" % claims["iss"]
        return None

    def _impersonate(self, principal, body):
        self.state.count("iam")
        self._latency()
        if not self._authorised():
            return self._send(*_google_error(401, "UNAUTHENTICATED", "authError", "Request had invalid credentials."))
        expire = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
        return self._send(200, {"accessToken": self._issue(), "expireTime": expire, "principal": principal})

    def _answer_fault(self, kind=None):
        """Answer this API request with the next injected fault, if any: a reset connection, or a
        transient error status (429 or 5xx) refused before any work. True when it answered."""
        fault, retry_after = self.state.take_fault(kind)
        if fault == "reset":
            self._wait()
            self.close_connection = True
            self.connection.shutdown(2)
            return True
        if fault:
            code, body = _google_error(fault, "UNAVAILABLE" if fault != 429 else "RESOURCE_EXHAUSTED",
                                       "rateLimitExceeded" if fault == 429 else "backendError",
                                       "emulated transient failure")
            headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
            self._send(code, body, headers)
            return True
        return False

    def _authorised(self):
        header = self.headers.get("Authorization") or ""
        if not header.startswith("Bearer ") or not header[7:].strip():
            return False
        return not self.state.faults.get("unauthorized")

    # -- the Compute API -----------------------------------------------------

    def do_GET(self):
        try:
            return self._get()
        except Exception as exc:  # an emulator bug must show, not look like a flaky network
            import traceback
            traceback.print_exc()
            return self._send(500, {"error": {"code": 500, "message": "emulator bug: %r" % exc}})

    def _get(self):
        url = urlsplit(self.path)
        query = dict((k, v[0]) for k, v in parse_qs(url.query, keep_blank_values=True).items())
        if url.path == "/_emulator/stats":
            with self.state.lock:
                return self._send(200, copy.deepcopy(self.state.counts))
        if url.path == "/_emulator/reports":
            with self.state.lock:
                return self._send(200, copy.deepcopy(self.state.reports))
        if url.path == "/_emulator/objects":
            return self._send(200, storage_api.listing(self.state))
        match = re.match(r"^/storage/v1/b/([^/]+)/o(?:/(.+))?$", url.path)
        if match:
            if self._gate("storage_get" if match.group(2) else "storage_list", None):
                return None
            bucket = unquote(match.group(1))
            if match.group(2):
                return self._send(*storage_api.get(self, bucket, unquote(match.group(2)), query))
            return self._send(*storage_api.list_objects(self, bucket, query))
        match = re.match(r"^/compute/v1/projects/([^/]+)/(.+)$", url.path)
        if not match:
            return self._send(*_google_error(404, "NOT_FOUND", "notFound", "no such endpoint %s" % url.path))
        project, rest = match.groups()
        kind = rest.split("/", 1)[0] if not rest.startswith("zones/") else "zone_instances"
        kind = {"aggregated": "aggregated", "global": "network", "regions": "subnetwork"}.get(kind, kind)
        if rest == "global/networks":
            kind = "network_list"
        if rest == "global/firewalls":
            kind = "firewall_list"
        if re.match(r"^zones/[^/]+/instances/[^/]+$", rest):
            kind = "instance_get"
        elif re.match(r"^zones/[^/]+/operations$", rest):
            kind = "operation_list"
        elif re.match(r"^zones/[^/]+/operations/[^/]+$", rest):
            kind = "operation_get"
        if self._gate(kind, project):
            return None
        if project in (self.state.faults.get("disabled_projects") or []):
            return self._send(*_google_error(
                403, "PERMISSION_DENIED", "accessNotConfigured",
                "Compute Engine API has not been used in project %s before or it is disabled." % project))
        if project in (self.state.faults.get("forbidden_projects") or []):
            needs = {"instance_get": "compute.instances.get", "operation_list": "compute.zoneOperations.list",
                     "operation_get": "compute.zoneOperations.get"}.get(kind, "compute.instances.list")
            return self._send(*_google_error(
                403, "PERMISSION_DENIED", "forbidden", "Required '%s' permission for 'projects/%s'" % (needs, project)))
        proj = self.state.projects.get(project)
        if proj is None:
            return self._send(*_google_error(404, "NOT_FOUND", "notFound",
                                             "The resource 'projects/%s' was not found" % project))
        self._api_answer = True
        try:
            dynamic = self._dynamic(project, proj, rest, query)
            if dynamic is not None and dynamic[0] == 200 and "fields" in query \
                    and not self.state.faults.get("ignore_fields"):
                dynamic = (200, apply_fields(dynamic[1], parse_fields(query["fields"])))
        except FieldsError as exc:
            dynamic = _google_error(400, "INVALID_ARGUMENT", "invalidParameter", str(exc))
        except (FilterError, re.error) as exc:
            dynamic = _google_error(400, "INVALID_ARGUMENT", "invalid", "Invalid value for field 'filter': %s" % exc)
        if dynamic is not None:
            # never cached: an instance's status and an operation's change with time
            return self._send(*dynamic)
        key = (self.path, self._gzip_wanted())
        cached = self.state.responses.get(key)
        if cached is None:
            try:
                # a selection that does not parse is refused before any work, as Google's front end does
                selection = None
                if "fields" in query and not self.state.faults.get("ignore_fields"):
                    selection = parse_fields(query["fields"])
                code, body = self._route(project, proj, rest, query)
                if code == 200 and selection is not None:
                    body = apply_fields(body, selection)
                if code == 200 and rest.endswith("instances"):
                    body = self._malformed(body, query)
            except FieldsError as exc:
                code, body = _google_error(400, "INVALID_ARGUMENT", "invalidParameter", str(exc))
            except (FilterError, re.error) as exc:
                code, body = _google_error(400, "INVALID_ARGUMENT", "invalid",
                                           "Invalid value for field 'filter': %s" % exc)
            data = json.dumps(body).encode()
            cached = self.state.responses[key] = (code, data, None, gzip.compress(data, 6) if key[1] else None)
        return self._send(*cached)

    def _route(self, project, proj, rest, query):
        if rest == "aggregated/instances":
            return self._aggregated(project, proj, query)
        match = re.match(r"^zones/([^/]+)/instances$", rest)
        if match:
            return self._zone_list(project, proj, match.group(1), query)
        # a caller without compute.networks.get on a Shared VPC's host project, as the API refuses it
        if project in (self.state.faults.get("forbidden_network_projects") or []) and \
                re.match(r"^global/networks(/[^/]+)?$", rest):
            return _google_error(403, "PERMISSION_DENIED", "forbidden",
                                 "Required '%s' permission for 'projects/%s/%s'" % (
                                     "compute.networks.list" if rest == "global/networks" else "compute.networks.get",
                                     project, rest))
        if rest == "global/networks":
            if self.state.faults.get("forbidden_networks"):
                return _google_error(403, "PERMISSION_DENIED", "forbidden",
                                     "Required 'compute.networks.list' permission")
            nets = []
            for name in sorted(proj["networks"]):
                net = dict(proj["networks"][name])
                net.setdefault("name", name)
                net["selfLink"] = SELF_LINK_BASE + "projects/%s/global/networks/%s" % (project, name)
                nets.append(net)
            page, token = self._page(nets, query)
            body = {"kind": "compute#networkList", "items": page}
            if token:
                body["nextPageToken"] = token
            return 200, body
        if rest == "global/firewalls":
            rules = []
            for raw in proj["firewalls"]:
                rule = dict(raw)
                net = rule.get("network") or "default"
                rule["network"] = net if "/" in net else SELF_LINK_BASE + "projects/%s/global/networks/%s" % (project, net)
                rule.setdefault("direction", "INGRESS")
                rule.setdefault("priority", 1000)
                rule["selfLink"] = SELF_LINK_BASE + "projects/%s/global/firewalls/%s" % (project, rule["name"])
                rules.append(rule)
            page, token = self._page(rules, query)
            body = {"kind": "compute#firewallList", "items": page}
            if token:
                body["nextPageToken"] = token
            return 200, body
        match = re.match(r"^global/networks/([^/]+)$", rest)
        if match:
            name = match.group(1)
            if name in (self.state.faults.get("forbidden_networks") or []):
                return _google_error(403, "PERMISSION_DENIED", "forbidden",
                                     "Required 'compute.networks.get' permission")
            net = proj["networks"].get(name)
            if net is None:
                return _google_error(404, "NOT_FOUND", "notFound",
                                     "The resource 'projects/%s/global/networks/%s' was not found" % (project, name))
            net = dict(net)
            net.setdefault("name", name)
            net.setdefault("kind", "compute#network")
            net["selfLink"] = SELF_LINK_BASE + "projects/%s/global/networks/%s" % (project, name)
            return 200, net
        match = re.match(r"^regions/([^/]+)/subnetworks/([^/]+)$", rest)
        if match:
            key = "%s/%s" % match.groups()
            sub = proj["subnetworks"].get(key)
            if sub is None:
                return _google_error(404, "NOT_FOUND", "notFound", "The resource 'projects/%s/regions/%s/"
                                     "subnetworks/%s' was not found" % ((project,) + match.groups()))
            sub = dict(sub)
            sub.setdefault("name", match.group(2))
            sub["selfLink"] = SELF_LINK_BASE + "projects/%s/regions/%s/subnetworks/%s" % ((project,) + match.groups())
            return 200, sub
        return _google_error(404, "NOT_FOUND", "notFound", "no such resource %s" % rest)

    def _malformed(self, body, query):
        """Instance listings as the listing faults make them."""
        faults = self.state.faults
        stripped = set(faults.get("strip_zone") or [])
        no_link = set(faults.get("strip_self_link") or [])
        if stripped or no_link:
            body = copy.deepcopy(body)
            listed = [i for scope in (body.get("items") or {}).values() for i in scope.get("instances") or []] \
                if isinstance(body.get("items"), dict) else list(body.get("items") or [])
            for inst in listed:
                if inst.get("name") in stripped | no_link:
                    inst.pop("zone", None)
                if inst.get("name") in no_link:
                    inst.pop("selfLink", None)
        if faults.get("repeat_page_token"):
            body = dict(body, nextPageToken=_page_token(1))
        kind = faults.get("listing_body")
        if kind == "null":
            return None
        if kind == "list":
            return []
        if kind == "items_list":
            return dict(body, items=[i for scope in (body.get("items") or {}).values()
                                     for i in scope.get("instances") or []]
                        if isinstance(body.get("items"), dict) else body.get("items"))
        return body

    def _matching(self, instances, query):
        text = query.get("filter")
        if not text:
            return list(instances)
        tree = parse_filter(text)
        return [i for i in instances if evaluate(tree, i)]

    def _page(self, items, query):
        size = min(int(query.get("maxResults") or 500), 500, self.state.page_size)
        start = _offset(query.get("pageToken"))
        page = items[start:start + size]
        token = _page_token(start + size) if start + size < len(items) else None
        return page, token

    def _aggregated(self, project, proj, query):
        unreachable = set(self.state.faults.get("unreachable_zones") or [])
        reachable = [i for i in proj["instances"] if i["zone"].rsplit("/", 1)[-1] not in unreachable]
        page, token = self._page(self._matching(reachable, query), query)
        items = {}
        for zone in sorted(proj["zones"]):
            if zone in unreachable:
                continue
            items["zones/" + zone] = {"warning": {
                "code": "NO_RESULTS_ON_PAGE",
                "message": "There are no results for scope 'zones/%s' on this page." % zone}}
        for inst in page:
            scope = "zones/" + inst["zone"].rsplit("/", 1)[-1]
            items.setdefault(scope, {}).pop("warning", None)
            items[scope].setdefault("instances", []).append(inst)
        body = {"kind": "compute#instanceAggregatedList", "id": "projects/%s/aggregated/instances" % project,
                "items": items,
                "selfLink": SELF_LINK_BASE + "projects/%s/aggregated/instances" % project}
        zones_down = sorted(z for z in unreachable if z in proj["zones"])
        if zones_down:
            if query.get("returnPartialSuccess") == "true":
                body["unreachables"] = ["zones/" + z for z in zones_down]
            else:
                for zone in zones_down:
                    body["items"]["zones/" + zone] = {"warning": {
                        "code": "UNREACHABLE", "message": "Scope zones/%s is unreachable." % zone}}
        if token:
            body["nextPageToken"] = token
        return 200, body

    def _zone_list(self, project, proj, zone, query):
        if zone in (self.state.faults.get("unreachable_zones") or []):
            return _google_error(503, "UNAVAILABLE", "backendError", "zone %s is unreachable" % zone)
        if zone not in proj["zones"] and not re.match(r"^[a-z]+-[a-z]+\d+-[a-z]$", zone):
            return _google_error(400, "INVALID_ARGUMENT", "invalid", "Invalid value for field 'zone': '%s'" % zone)
        page, token = self._page(self._matching(proj["zones"].get(zone, []), query), query)
        body = {"kind": "compute#instanceList", "id": "projects/%s/zones/%s/instances" % (project, zone),
                "items": page}
        if token:
            body["nextPageToken"] = token
        return 200, body


class _Server(ThreadingHTTPServer):
    tls = None

    def finish_request(self, request, client_address):
        # Nagle would hold a short answer's last segment until the peer's delayed ACK (40 ms)
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # TLS handshakes happen in the connection's own thread, not the accept loop
        if self.tls is not None:
            try:
                request = self.tls.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError):
                return
        return ThreadingHTTPServer.finish_request(self, request, client_address)


def make_server(state, host="127.0.0.1", port=0, tls_cert=None, tls_key=None):
    handler = type("BoundHandler", (Handler,), {"state": state})
    server = _Server((host, port), handler)
    server.daemon_threads = True
    scheme = "http"
    if tls_cert:
        server.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server.tls.load_cert_chain(tls_cert, tls_key)
        scheme = "https"
    server.base_url = "%s://%s:%d" % (scheme, host, server.server_address[1])
    return server


def main(argv=None):
    parser = argparse.ArgumentParser(description="Compute Engine API emulator for tests")
    parser.add_argument("--fixture", required=True, help="YAML or JSON fixture file")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--ready-file", help="write the base URL here once listening")
    parser.add_argument("--page-size", type=int, help="most items per page (overrides the fixture)")
    parser.add_argument("--latency-ms", type=float, help="latency per request (overrides the fixture)")
    parser.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM)")
    parser.add_argument("--tls-key", help="private key for --tls-cert (PEM)")
    args = parser.parse_args(argv)
    try:
        fixture = load_fixture(args.fixture)
    except (IOError, OSError, ValueError) as exc:
        parser.exit(2, "compute_api.py: cannot load fixture %s: %s\n" % (args.fixture, exc))
    state = State(fixture or {}, page_size=args.page_size)
    if args.latency_ms is not None:
        state.faults["latency_ms"] = args.latency_ms
    server = make_server(state, args.host, args.port, args.tls_cert, args.tls_key)
    if args.ready_file:
        tmp = args.ready_file + ".tmp"
        with open(tmp, "w") as handle:
            handle.write(server.base_url + "\n")
        os.rename(tmp, args.ready_file)
    sys.stderr.write("compute API emulator listening on %s\n" % server.base_url)
    sys.stderr.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
