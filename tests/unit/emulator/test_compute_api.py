# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulator's latency model and response cache, which the benchmark relies on."""

import gzip
import json
import os
import sys
import time
from urllib.request import Request, urlopen

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))

import compute_fleet as fx  # noqa: E402
import compute_harness as harness  # noqa: E402

pytestmark = pytest.mark.emulator
LIST = "/compute/v1/projects/%s/aggregated/instances?maxResults=500"


def _get(emu, path, headers=None):
    req = Request(emu.url + path, headers=dict({"Authorization": "Bearer test"}, **(headers or {})))
    started = time.monotonic()
    with urlopen(req, timeout=10) as resp:
        data = resp.read()
        if resp.headers.get("Content-Encoding") == "gzip":
            data = gzip.decompress(data)
        body = json.loads(data.decode())
    return body, time.monotonic() - started


def _names(body):
    return sorted(i["name"] for scope in body["items"].values() for i in scope.get("instances", []))


@pytest.fixture
def emu():
    with harness.ThreadEmulator(fx.mixed_fleet()) as emulator:
        yield emulator


def test_latency_includes_the_emulators_own_work(emu):
    emu.set_faults({"latency_ms": 150})
    project = sorted(fx.mixed_fleet()["projects"])[0]
    _body, took = _get(emu, LIST % project)
    stats = emu.stats()
    assert took >= 0.15
    # the work is done inside the latency, not added to it
    assert 0 < stats["busy_ms_max"] < 150
    assert stats["late"] == 0 and stats["api"] == 1


def test_repeated_listing_is_answered_from_the_cache(emu):
    project = sorted(fx.mixed_fleet()["projects"])[0]
    first = _get(emu, LIST % project)[0]
    cold = emu.stats()["busy_ms_total"]
    again = _get(emu, LIST % project)[0]
    assert again == first
    assert emu.stats()["busy_ms_total"] - cold < cold


def test_changing_faults_drops_cached_answers(emu):
    project = sorted(fx.mixed_fleet()["projects"])[0]
    before = _get(emu, LIST % project)[0]
    zones = sorted(k.split("/", 1)[1] for k, v in before["items"].items() if v.get("instances"))
    emu.set_faults({"unreachable_zones": [zones[0]]})
    after = _get(emu, LIST % project)[0]
    assert after["items"]["zones/" + zones[0]] == {"warning": {
        "code": "UNREACHABLE", "message": "Scope zones/%s is unreachable." % zones[0]}}
    assert len(_names(after)) < len(_names(before))


@pytest.mark.parametrize("agent, compressed", [("tool/1.0 (gzip)", 1), ("tool/1.0", 0)])
def test_gzip_only_when_the_user_agent_asks_for_it(emu, agent, compressed):
    project = sorted(fx.mixed_fleet()["projects"])[0]
    plain = _get(emu, LIST % project)[0]
    emu.reset()
    body = _get(emu, LIST % project, {"Accept-Encoding": "gzip", "User-Agent": agent})[0]
    assert body == plain
    assert emu.stats()["gzip"] == compressed
