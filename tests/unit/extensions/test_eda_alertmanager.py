# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rulebook's Alertmanager source, over real HTTP on loopback."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import asyncio
import importlib.util
import json
import os
import socket
import urllib.error
import urllib.request

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SOURCE = os.path.join(ROOT, "extensions", "eda", "plugins", "event_source", "alertmanager.py")
RULEBOOK = os.path.join(ROOT, "extensions", "eda", "rulebooks", "gpudirect_remediate.yml")
aiohttp = pytest.importorskip("aiohttp", reason="ansible-rulebook (requirements-dev.txt) brings aiohttp")

WEBHOOK = {"version": "4", "status": "firing", "receiver": "eda", "alerts": [
    {"status": "firing", "labels": {"alertname": "GPUDirectNodeRemediable", "instance": "a3m-1:9100",
                                    "remediate": "true"}, "annotations": {}, "startsAt": "2026-11-29T10:00:00Z"},
    {"status": "resolved", "labels": {"alertname": "GPUDirectNodeRemediable", "instance": "a3m-2"}}]}


def load():
    spec = importlib.util.spec_from_file_location("gpudirect_eda_alertmanager", SOURCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def post(port, body, token=None):
    request = urllib.request.Request("http://127.0.0.1:%d/gpudirect" % port, data=body, method="POST")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status
    except urllib.error.HTTPError as exc:
        return exc.code


def serve_and_post(args, bodies):
    source = load()

    async def scenario():
        queue = asyncio.Queue()
        task = asyncio.ensure_future(source.main(queue, args))
        loop = asyncio.get_event_loop()
        for _attempt in range(100):
            try:
                socket.create_connection(("127.0.0.1", args["port"]), timeout=0.2).close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        codes = []
        for body, token in bodies:
            codes.append(await loop.run_in_executor(None, post, args["port"], body, token))
        task.cancel()
        events = []
        while not queue.empty():
            events.append(queue.get_nowait())
        return codes, events

    return asyncio.run(scenario())


def test_each_alert_is_an_event_naming_its_node_and_the_headers_stay_out():
    codes, events = serve_and_post({"port": free_port(), "token": "s3cr3t-t0ken"},
                                   [(json.dumps(WEBHOOK).encode(), "s3cr3t-t0ken")])
    assert codes == [202]
    assert [sorted(e) for e in events] == [["meta", "payload"], ["alert", "meta"], ["alert", "meta"]]
    assert [e["meta"].get("node") for e in events[1:]] == ["a3m-1", "a3m-2"]
    assert events[1]["alert"]["labels"]["remediate"] == "true" and events[2]["alert"]["status"] == "resolved"
    assert "s3cr3t-t0ken" not in json.dumps(events)


def test_a_wrong_token_and_a_body_that_is_not_a_webhook_are_refused_and_give_no_event():
    codes, events = serve_and_post({"port": free_port(), "token": "right", "skip_original_data": True},
                                   [(json.dumps(WEBHOOK).encode(), "wrong"), (b"{not json", "right"),
                                    (b'{"alerts": 3}', "right")])
    assert codes == [401, 400, 400] and events == []


def test_the_rulebook_acts_only_on_the_collections_remediable_alerts_through_its_playbook():
    with open(RULEBOOK) as handle:
        ruleset = yaml.safe_load(handle)[0]
    assert list(ruleset["sources"][0]) == ["name", "gpudirect.gcp.alertmanager"]
    conditions = [rule["condition"] for rule in ruleset["rules"]]
    assert all('event.alert.labels.remediate == "true"' in c for c in conditions)
    assert sorted(c.split(" and ")[0] for c in conditions) == [
        'event.alert.status == "firing"', 'event.alert.status == "resolved"']
    assert set(rule["action"]["run_playbook"]["name"] for rule in ruleset["rules"]) == {"gpudirect.gcp.remediate"}
