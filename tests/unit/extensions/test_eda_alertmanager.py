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
import sys

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))
from webhook_client import free_port, post  # noqa: E402  pylint: disable=wrong-import-position
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


def test_one_per_node_gives_one_event_per_node_its_first_firing_alert_with_the_others_named():
    source = load()
    alerts = [
        {"status": "resolved", "labels": {"instance": "a3m-1:9100", "component": "nic"}, "startsAt": "2026-11-29T09:00:00Z"},
        {"status": "firing", "labels": {"instance": "a3m-1:9100", "component": "rxdm"}, "startsAt": "2026-11-29T10:05:00Z"},
        {"status": "firing", "labels": {"instance": "a3m-1", "component": "gpu"}, "startsAt": "2026-11-29T10:00:00Z"},
        {"status": "firing", "labels": {"instance": "a3m-2", "component": "gpu"}},
        {"status": "firing", "labels": {"component": "gpu"}},
        {"status": "firing", "labels": {"component": "nic"}}]
    found = source.events({"alerts": alerts}, "gpudirect", skip_original_data=True, one_per_node=True)
    assert [(e["meta"]["node"], e["alert"]["labels"]["component"]) for e in found] == [
        ("a3m-1", "gpu"), ("a3m-2", "gpu"), (None, "gpu"), (None, "nic")]
    assert [(a["component"], a["status"]) for a in found[0]["meta"]["also"]] == [("nic", "resolved"), ("rxdm", "firing")]
    # the default stays one event per alert, as ansible.eda.alertmanager gives them
    assert len(source.events({"alerts": alerts}, "gpudirect", skip_original_data=True)) == len(alerts)


@pytest.mark.parametrize("args, problem", [
    ({"host": "0.0.0.0"}, "host 0.0.0.0 is reachable from other machines and no token is set"),
    ({"host": "10.0.0.5", "token": ""}, "host 10.0.0.5 is reachable from other machines"),
    ({"port": "http"}, "port must be a number from 1 to 65535, not 'http'"),
    ({"port": 70000, "token": "t"}, "port must be a number"),
    ({"host": "0.0.0.0", "token": "t"}, None),
    ({"host": "127.0.0.1"}, None),
    ({"host": "localhost"}, None),
    ({"host": "::1"}, None),
])
def test_a_source_open_beyond_this_machine_needs_a_token(args, problem):
    found = load().startup_problem(args)
    if problem is None:
        assert found is None
    else:
        assert problem in found and found.count("\n") == 0


def test_the_controller_rulebook_acts_on_the_same_alerts_through_the_remediation_template():
    with open(RULEBOOK) as handle:
        cli = yaml.safe_load(handle)[0]
    with open(RULEBOOK.replace("gpudirect_remediate.yml", "gpudirect_remediate_controller.yml")) as handle:
        controller = yaml.safe_load(handle)[0]
    assert [r["condition"] for r in controller["rules"]] == [r["condition"] for r in cli["rules"]]
    assert controller["hosts"] == cli["hosts"] and controller["execution_strategy"] == "sequential"
    templates = set(r["action"]["run_job_template"]["name"] for r in controller["rules"])
    assert templates == {"{{ gpudirect_remediate_template | default('GPU cluster - remediate') }}"}
    source = controller["sources"][0]["gpudirect.gcp.alertmanager"]
    # the token has no default: an activation without one does not start
    assert source["token"] == "{{ gpudirect_eda_token }}" and source["one_per_node"] is True
    assert cli["sources"][0]["gpudirect.gcp.alertmanager"]["one_per_node"] is True
