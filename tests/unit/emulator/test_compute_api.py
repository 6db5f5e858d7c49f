# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulator's latency model, response cache, byte counts and field masks, which the tests and the
benchmark rely on."""

import gzip
import json
import os
import sys
import time
from urllib.request import Request, urlopen

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))

import compute_api  # noqa: E402
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


# --- field masks (the `fields` parameter) --------------------------------------


@pytest.mark.parametrize("text, tree", [
    ("name", {"name": None}),
    (" name , zone ", {"name": None, "zone": None}),
    ("a/b/c", {"a": {"b": {"c": None}}}),
    ("a.b", {"a": {"b": None}}),
    ("a(b,c(d)),e", {"a": {"b": None, "c": {"d": None}}, "e": None}),
    ("a/b,a(c)", {"a": {"b": None, "c": None}}),
    ("a,a(b)", {"a": None}),
    ("a(b),a", {"a": None}),
    ("a/b,a/b/c", {"a": {"b": None}}),
    ("items/*/instances(name),items/*/warning(code)",
     {"items": {"*": {"instances": {"name": None}, "warning": {"code": None}}}}),
    ("*", {"*": None}),
])
def test_fields_parse(text, tree):
    assert compute_api.parse_fields(text) == tree


@pytest.mark.parametrize("text, where", [
    ("", "empty"), ("  ", "empty"), ("a,,b", "character 3"), ("a(b", "missing )"), ("a)b", "unexpected ')'"),
    ("a(b)c", "unexpected 'c'"), ("a/", "character 3"), ("(a)", "character 1"), ("a b", "unexpected 'b'"),
    ("a(b),", "character 6"), ("a()", "character 3"), ("a-b", "unexpected '-'"), ("a(b))", "unexpected ')'"),
])
def test_fields_that_do_not_parse_are_named(text, where):
    with pytest.raises(compute_api.FieldsError) as err:
        compute_api.parse_fields(text)
    assert str(err.value).startswith("Invalid field selection") and where in str(err.value)


def test_fields_select_within_arrays_wildcards_and_nesting():
    resource = {"kind": "list", "nextPageToken": "t", "items": {
        "zones/a": {"instances": [{"name": "x", "zone": "a", "nics": [{"ip": "1", "mac": "m"}, {"ip": "2"}]},
                                  {"name": "y", "status": "RUNNING"}]},
        "zones/b": {"warning": {"code": "NO_RESULTS_ON_PAGE", "message": "none", "data": [{"key": "scope"}]}}}}
    mask = compute_api.parse_fields("items/*/instances(name,nics(ip)),items/*/warning(code),nextPageToken,absent")
    assert compute_api.apply_fields(resource, mask) == {"nextPageToken": "t", "items": {
        "zones/a": {"instances": [{"name": "x", "nics": [{"ip": "1"}, {"ip": "2"}]}, {"name": "y"}]},
        "zones/b": {"warning": {"code": "NO_RESULTS_ON_PAGE"}}}}
    assert compute_api.apply_fields({"a": 1, "b": {"c": 2, "d": 3}}, compute_api.parse_fields("*")) == {
        "a": 1, "b": {"c": 2, "d": 3}}
    # a named key beside the wildcard widens that key's selection
    assert compute_api.apply_fields({"a": {"b": 1, "c": 2}, "x": {"b": 5}},
                                    compute_api.parse_fields("*(b),a(c)")) == {"a": {"b": 1, "c": 2}, "x": {"b": 5}}


def test_fields_over_http(emu):
    project = sorted(fx.mixed_fleet()["projects"])[0]
    body = _get(emu, LIST % project + "&fields=items/*/instances(name,status),nextPageToken")[0]
    listed = [i for scope in body["items"].values() for i in scope.get("instances", [])]
    assert listed and all(set(i) == {"name", "status"} for i in listed)
    assert set(body) == {"items"}  # one page: no nextPageToken to keep
    assert all(set(scope) <= {"instances"} for scope in body["items"].values())


@pytest.mark.parametrize("fields", ["items(name", "items/", ""])
def test_a_selection_that_does_not_parse_is_400(emu, fields):
    from urllib.error import HTTPError
    project = sorted(fx.mixed_fleet()["projects"])[0]
    with pytest.raises(HTTPError) as err:
        _get(emu, LIST % project + "&fields=" + fields)
    assert err.value.code == 400
    error = json.loads(err.value.read().decode())["error"]
    assert error["message"].startswith("Invalid field selection")
    assert error["errors"][0]["reason"] == "invalidParameter"


def test_bytes_are_counted_and_ignore_fields_answers_in_full(emu):
    project = sorted(fx.mixed_fleet()["projects"])[0]
    masked = LIST % project + "&fields=items/*/instances(name)"
    gzipped = {"Accept-Encoding": "gzip", "User-Agent": "tool/1.0 (gzip)"}
    small = _get(emu, masked, gzipped)[0]
    stats = emu.stats()
    assert 0 < stats["bytes"] < stats["bytes_json"]  # gzip on the wire
    assert stats["bytes_json"] == len(json.dumps(small).encode())
    emu.set_faults({"ignore_fields": True})  # zeroes the counters too
    full = _get(emu, masked, gzipped)[0]
    assert emu.stats()["bytes_json"] == len(json.dumps(full).encode()) > 10 * stats["bytes_json"]
    assert full == _get(emu, LIST % project)[0]
