# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Alertmanager source answers malformed requests with a 4xx, logs no traceback and passes no event
on; what it does pass on is JSON data of bounded depth. Raw bytes over a socket to a real server on
loopback: a client library would refuse to send most of these."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import asyncio
import importlib.util
import json
import logging
import os
import socket
import threading
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SOURCE = os.path.join(ROOT, "extensions", "eda", "plugins", "event_source", "alertmanager.py")
aiohttp = pytest.importorskip("aiohttp", reason="ansible-rulebook (requirements-dev.txt) brings aiohttp")

TOKEN = b"s3cr3t-t0ken"
AUTH = b"Authorization: Bearer " + TOKEN + b"\r\n"
JSON_TYPE = b"Content-Type: application/json\r\n"
GOOD = {"version": "4", "status": "firing", "receiver": "eda", "groupLabels": {"alertname": "X"},
        "truncatedAlerts": 0, "alerts": [
            {"status": "firing", "labels": {"alertname": "GPUDirectNodeRemediable", "instance": "a3m-1:9100"},
             "annotations": {"summary": "s"}, "startsAt": "2026-11-29T10:00:00Z", "fingerprint": "ab"}]}


def load():
    spec = importlib.util.spec_from_file_location("gpudirect_eda_alertmanager_malformed", SOURCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Collected(object):
    def __init__(self):
        self.events = []

    async def put(self, event):
        self.events.append(event)


class Logged(logging.Handler):
    def __init__(self):
        logging.Handler.__init__(self, logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture(scope="module")
def server():
    source = load()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    queue, loop = Collected(), asyncio.new_event_loop()
    task = loop.create_task(source.main(queue, {"port": port, "token": TOKEN.decode()}))
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    for _attempt in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    logged = Logged()
    logging.getLogger().addHandler(logged)
    try:
        yield source, port, queue, logged
    finally:
        logging.getLogger().removeHandler(logged)
        loop.call_soon_threadsafe(task.cancel)
        time.sleep(0.2)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)


def exchange(port, raw, close_write=False):
    """Send raw bytes, return the status of the first answer (None when the server closed without one)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(raw)
        if close_write:
            sock.shutdown(socket.SHUT_WR)
        answer = b""
        while b"\r\n" not in answer:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            answer += chunk
    line = answer.split(b"\r\n", 1)[0].split()
    return int(line[1]) if len(line) > 1 else None


def request(body, headers=AUTH + JSON_TYPE, path=b"/gpudirect", length=None):
    length = len(body) if length is None else length
    return (b"POST " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headers
            + b"Content-Length: " + str(length).encode() + b"\r\n\r\n" + body)


def webhook(**over):
    payload = json.loads(json.dumps(GOOD))
    alert = payload["alerts"][0]
    for key, value in over.items():
        if key.startswith("alert_"):
            alert[key[len("alert_"):]] = value
        else:
            payload[key] = value
    return json.dumps(payload).encode()


def settle(server, before_events, before_logs):
    _source, _port, queue, logged = server
    time.sleep(0.05)
    bad = [r for r in logged.records[before_logs:] if r.levelno >= logging.ERROR or r.exc_info]
    return queue.events[before_events:], ["%s: %s" % (r.name, r.getMessage()) for r in bad]


MALFORMED = [
    ("token in bytes that are not UTF-8", request(webhook(), b"Authorization: Bearer \xff\xfe\x80\r\n" + JSON_TYPE), 401),
    ("token in latin-1", request(webhook(), b"Authorization: Bearer s3cr3t-t0k\xe9n\r\n" + JSON_TYPE), 401),
    ("the right token twice", request(webhook(), AUTH + AUTH + JSON_TYPE), 401),
    ("no token", request(webhook(), JSON_TYPE), 401),
    ("content type not ASCII", request(webhook(), AUTH + b"Content-Type: application/json; charset=\xff\xfe\r\n"), 415),
    ("unknown charset", request(webhook(), AUTH + b"Content-Type: application/json; charset=x-no-such\r\n"), 415),
    ("a charset other than UTF-8", request(webhook(), AUTH + b"Content-Type: text/plain; charset=utf-16\r\n"), 415),
    ("body not UTF-8", request(b'{"alerts": [], "receiver": "\xff\xfe"}'), 400),
    ("body a lone surrogate", request(b'{"alerts": [], "receiver": "\\ud800"}'), 400),
    ("body not JSON", request(b"{not json"), 400),
    ("NaN", request(b'{"alerts": [], "x": NaN}'), 400),
    ("nested 100k levels", request(b"[" * 100000 + b"]" * 100000), 400),
    ("nested 100k levels, unclosed", request(b'{"alerts": [' + b"[" * 100000), 400),
    ("nested deeper than a webhook", request(webhook(x=json.loads("[" * 40 + "]" * 40))), 400),
    ("alerts not a list", request(b'{"alerts": {"0": {}}}'), 400),
    ("the body a list", request(b"[]"), 400),
    ("an alert not a dict", request(webhook(alerts=["firing"])), 400),
    ("labels not a dict", request(webhook(alert_labels=["instance", "a3m-1"])), 400),
    ("a label not a string", request(webhook(alert_labels={"instance": 9100})), 400),
    ("a label a dict", request(webhook(alert_labels={"instance": {"host": "a3m-1"}})), 400),
    ("an annotation not a string", request(webhook(alert_annotations={"summary": ["s"]})), 400),
    ("common labels not strings", request(webhook(commonLabels={"a": None})), 400),
    ("a status not a string", request(webhook(alert_status=["firing"])), 400),
    ("the webhook status not a string", request(webhook(status=1)), 400),
    ("content length not a number", request(webhook(), length="abc"), 400),
    ("content length negative", request(webhook(), length=-1), 400),
    ("content length too short", request(webhook(), length=5), 400),
    ("body over the limit announced", request(b"", length=64 * 1024 * 1024), 413),
]


@pytest.mark.parametrize("name,raw,status", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_request_gets_a_4xx_no_event_and_no_traceback(server, name, raw, status):
    before_events, before_logs = len(server[2].events), len(server[3].records)
    assert exchange(server[1], raw) == status, name
    assert settle(server, before_events, before_logs) == ([], [])


def test_a_body_over_the_limit_sent_in_chunks_gets_413(server):
    _source, port, queue, logged = server
    before_events, before_logs = len(queue.events), len(logged.records)
    chunk = b"[" + b" " * (1024 * 1024 - 2) + b"]"
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _n in range(6)) + b"0\r\n\r\n"
    raw = (b"POST /gpudirect HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + AUTH + JSON_TYPE
           + b"Transfer-Encoding: chunked\r\n\r\n" + body)
    assert exchange(port, raw) == 413
    assert settle(server, before_events, before_logs) == ([], [])


def test_a_body_shorter_than_its_content_length_gives_no_event_and_no_traceback(server):
    _source, port, queue, logged = server
    before_events, before_logs = len(queue.events), len(logged.records)
    status = exchange(port, request(webhook(), length=len(webhook()) + 100), close_write=True)
    assert status is None or 400 <= status < 500
    assert settle(server, before_events, before_logs) == ([], [])


def test_a_path_that_is_not_utf8_is_refused_or_named_as_text(server):
    _source, port, queue, logged = server
    for path in (b"/gp\xffdu", b"/gp%FFdu", b"/%00"):
        before_events, before_logs = len(queue.events), len(logged.records)
        status = exchange(port, request(webhook(), path=path))
        events, errors = settle(server, before_events, before_logs)
        assert errors == [] and status in (202, 400, 404), path
        for event in events:
            endpoint = event["meta"]["endpoint"]
            endpoint.encode("utf-8")
            assert endpoint.isprintable()


def test_a_webhook_is_still_taken_and_its_events_are_json_data(server):
    _source, port, queue, logged = server
    before_events, before_logs = len(queue.events), len(logged.records)
    charset = AUTH + b"Content-Type: application/json; charset=UTF-8\r\n"
    assert exchange(port, request(webhook(), charset)) == 202
    assert exchange(port, request(webhook(), AUTH + b"Content-Type: application/x-www-form-urlencoded\r\n")) == 202
    events, errors = settle(server, before_events, before_logs)
    assert errors == [] and len(events) == 4
    assert [e["meta"].get("node") for e in events if "alert" in e] == ["a3m-1", "a3m-1"]
    for event in events:
        assert json.loads(json.dumps(event, allow_nan=False)) == event


def test_events_refuses_what_is_not_json_data_when_called_directly():
    source = load()
    for payload in ({"alerts": [{"status": float("nan")}]}, {"alerts": [{"labels": {"a": b"x"}}]},
                    {"alerts": [], "x": {1: "a"}}, {"alerts": [], "x": object()}):
        with pytest.raises(ValueError):
            source.events(payload, "gpudirect")
