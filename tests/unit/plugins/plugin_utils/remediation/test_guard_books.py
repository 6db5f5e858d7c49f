# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guard's books in Cloud Storage (guard_store.CloudBooks) against the emulator's JSON API over HTTP: the
runs outlive the call, a lost race for the state is decided again and said so in the audit, concurrent
callers never take more than the caps allow, and every failure is one line naming the bucket or object."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import os
import sys
import threading
from urllib.request import Request, urlopen
from urllib.error import HTTPError

import pytest

from ansible_collections.gpudirect.gcp.plugins.action import remediation_guard as action
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import guard, guard_store

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))
import compute_harness as harness  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = pytest.mark.emulator
HOSTS = ["a3m-%d" % n for n in range(20)]
PREFIX = "clusters/a/remediate"
NOW = 100000.0


def alert(node):
    return {"status": "firing", "labels": {"alertname": "GPUDirectNodeRemediable", "instance": "%s:9100" % node,
                                           "component": "gpu", "subject": "GPU 1"}, "annotations": {}}


@pytest.fixture
def emu():
    with harness.ThreadEmulator({"buckets": {"ops-a": {}, "locked-b": {"forbidden": True}}}) as emulator:
        yield emulator


def args(**over):
    out = dict((name, spec.get("default")) for name, spec in action.ARGUMENT_SPEC.items())
    out.update(hosts=HOSTS, state_bucket="ops-a", state_prefix=PREFIX, max_share=1.0, dry_run=False)
    out.update(over)
    return out


def env(emu):
    return {"GCP_STORAGE_API_ENDPOINT": emu.url, "GCP_AUTH_KIND": "accesstoken", "GCP_ACCESS_TOKEN": "not-a-secret"}


def apply(emu, check=False, now=NOW, **over):
    return guard.apply(args(**over), check, now, environ=env(emu))


def objects(emu, bucket="ops-a"):
    return dict((o["name"], base64.b64decode(o["data"]).decode("utf-8")) for o in emu.objects() if o["bucket"] == bucket)


def state(emu):
    return json.loads(objects(emu)[PREFIX + "/state.json"])


def audit(emu):
    """Every audit line, and the batches that lost the race for the state (their lines were never kept)."""
    lines = [json.loads(line) for name, text in sorted(objects(emu).items()) if name.startswith(PREFIX + "/audit/")
             for line in text.splitlines()]
    lost = set(line["batch"] for line in lines if line["decision"] == "retried")
    return lines, lost


def kept(lines, lost, decision):
    return [line for line in lines if line["decision"] == decision and line["batch"] not in lost]


def test_runs_in_a_bucket_outlive_the_call_and_every_decision_is_in_an_audit_object(emu):
    _lines, out = apply(emu, alerts=[alert("a3m-1")])
    assert [a["node"] for a in out["act"]] == ["a3m-1"] and out["changed"] is True
    assert out["books"] == {"location": "gs://ops-a/%s/state.json" % PREFIX, "retries": 0}
    # a later call, with nothing of the first one's but the bucket, sees its run
    lines, out = apply(emu, now=NOW + 60, alerts=[alert("a3m-1"), alert("a3m-2")])
    assert [(x["node"], x["decision"]) for x in lines] == [("a3m-1", "ignored"), ("a3m-2", "act")]
    assert sorted(r["node"] for r in state(emu)["runs"]) == ["a3m-1", "a3m-2"]
    logged, lost = audit(emu)
    assert lost == set() and [(x["node"], x["decision"]) for x in logged] == [
        ("a3m-1", "act"), ("a3m-1", "ignored"), ("a3m-2", "act")]
    assert apply(emu, held=True)[1]["held_nodes"] == ["a3m-1", "a3m-2"]


def test_check_mode_and_held_read_the_bucket_and_write_nothing(emu):
    apply(emu, alerts=[alert("a3m-1")])
    before = objects(emu)
    lines, out = apply(emu, check=True, alerts=[alert("a3m-2")])
    assert [x["decision"] for x in lines] == ["act"]
    apply(emu, check=True, preview={"node": "a3m-2", "plan": "would drain a3m-2"})
    apply(emu, held=True)
    assert objects(emu) == before
    # an empty bucket reads as no runs, and still nothing is made
    assert apply(emu, held=True, state_prefix="elsewhere")[1]["held_nodes"] == []
    assert objects(emu) == before


class Racing(guard_store.CloudBooks):
    """Books whose first state write meets another job's, written just before it."""

    def __init__(self, emu, rival, *pos, **kw):
        super(Racing, self).__init__(*pos, **kw)
        self.rival, self.raced = rival, False

    def _put(self, name, lines_or_state, generation, what):
        if name == self.state_name and not self.raced:
            self.raced = True
            self.rival()
        return super(Racing, self)._put(name, lines_or_state, generation, what)


def test_a_lost_race_for_the_last_slot_is_decided_again_and_said_so_in_the_audit(emu):
    rival = []
    cloud = args(max_per_hour=1)
    real = guard_store.books_for(dict(cloud), env(emu), check=guard.runs_of)
    books = Racing(emu, lambda: rival.append(apply(emu, max_per_hour=1, alerts=[alert("a3m-9")])),
                   real.client, real.endpoint, "ops-a", PREFIX, check=guard.runs_of, sleep=lambda s: None)
    lines, out = guard.apply(dict(cloud, alerts=[alert("a3m-1")]), False, NOW, books=books)
    # the rival took the one slot of the hour; this call's act was not kept, and its decision again is held
    assert [a["node"] for a in rival[0][1]["act"]] == ["a3m-9"]
    assert [x["decision"] for x in lines] == ["held"] and out["act"] == [] and out["books"]["retries"] == 1
    assert [r["node"] for r in state(emu)["runs"]] == ["a3m-9"]
    logged, lost = audit(emu)
    assert len(lost) == 1
    assert [x["node"] for x in kept(logged, lost, "act")] == ["a3m-9"]
    assert [x["node"] for x in kept(logged, lost, "held")] == ["a3m-1"]
    superseded = [x for x in logged if x["batch"] in lost and x["decision"] == "act"]
    assert [x["node"] for x in superseded] == ["a3m-1"]


def test_callers_at_once_never_start_more_than_the_cap(emu):
    """Twelve calls in threads, each about its own node, over the same bucket: three runs an hour."""
    results, errors = [], []

    def one(node):
        try:
            results.append(apply(emu, max_per_hour=3, alerts=[alert(node)]))
        except guard.GuardError as exc:  # pragma: no cover - shown by the assertion below
            errors.append(str(exc))

    threads = [threading.Thread(target=one, args=("a3m-%d" % n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == [] and len(results) == 12
    acted = sorted(a["node"] for _lines, out in results for a in out["act"])
    assert len(acted) == 3
    assert sorted(r["node"] for r in state(emu)["runs"]) == acted
    logged, lost = audit(emu)
    assert sorted(x["node"] for x in kept(logged, lost, "act")) == acted
    assert len(kept(logged, lost, "held")) == 9
    assert sum(out["books"]["retries"] for _lines, out in results) == len(lost)


def _call(emu, method, path, body=None, headers=None):
    request = Request(emu.url + path, data=body, method=method,
                      headers=dict({"Authorization": "Bearer t"}, **(headers or {})))
    try:
        with urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except HTTPError as exc:
        return exc.code, exc.read()


def test_the_emulator_answers_preconditions_as_cloud_storage_does(emu):
    put = "/upload/storage/v1/b/ops-a/o?uploadType=media&name=x%2Fy.json"
    status, first = _call(emu, "POST", put + "&ifGenerationMatch=0", b"{}")
    assert status == 200
    generation = json.loads(first)["generation"]
    status, refused = _call(emu, "POST", put + "&ifGenerationMatch=0", b"[]")
    assert status == 412 and json.loads(refused)["error"]["errors"][0]["reason"] == "conditionNotMet"
    status, second = _call(emu, "POST", put + "&ifGenerationMatch=%s" % generation, b"[1]")
    assert status == 200 and int(json.loads(second)["generation"]) > int(generation)
    assert _call(emu, "POST", put + "&ifGenerationMatch=%s" % generation, b"[2]")[0] == 412
    assert _call(emu, "GET", "/storage/v1/b/ops-a/o/x%2Fy.json?alt=media") == (200, b"[1]")
    assert _call(emu, "GET", "/storage/v1/b/ops-a/o/x%2Fy.json?alt=media&generation=" + generation)[0] == 404
    assert json.loads(_call(emu, "GET", "/storage/v1/b/ops-a/o/x%2Fy.json")[1])["generation"] == \
        json.loads(second)["generation"]
    assert [o["name"] for o in json.loads(_call(emu, "GET", "/storage/v1/b/ops-a/o?prefix=x/")[1])["items"]] == \
        ["x/y.json"]
    assert _call(emu, "GET", "/storage/v1/b/ops-a/o/none")[0] == 404
    assert _call(emu, "GET", "/storage/v1/b/no-such/o/x")[0] == 404


@pytest.mark.parametrize("over, says", [
    ({"state_bucket": "no-such"}, "gs://no-such/%s/state.json: not found (404)" % PREFIX),
    ({"state_bucket": "locked-b"}, "gs://locked-b/%s/state.json: permission denied (403)" % PREFIX),
    ({"state_bucket": "Not A Bucket"}, "state_bucket/state_prefix: bucket 'Not A Bucket' is not a valid"),
    ({"state_prefix": "a/../b"}, "state_bucket/state_prefix: prefix 'a/../b' is not a usable"),
    ({"state_bucket": None, "state_file": None}, "state_file and audit_log are needed where state_bucket is not set"),
])
def test_books_that_cannot_be_used_fail_in_one_line_naming_them(emu, over, says):
    with pytest.raises(guard.GuardError) as excinfo:
        apply(emu, alerts=[alert("a3m-1")], **over)
    assert says in str(excinfo.value) and "\n" not in str(excinfo.value)


@pytest.mark.parametrize("text, says", [
    ("{not json", "state object gs://ops-a/%s/state.json returned a body that is not JSON" % PREFIX),
    ('{"version": 9, "runs": []}', "state object gs://ops-a/%s/state.json is version 9, newer" % PREFIX),
    ('{"runs": [{"id": "r"}]}', "state object gs://ops-a/%s/state.json: its run at index 0 has no node" % PREFIX),
])
def test_a_state_object_the_guard_cannot_read_is_refused_never_read_as_empty(emu, text, says):
    _call(emu, "POST", "/upload/storage/v1/b/ops-a/o?uploadType=media&name=" + PREFIX.replace("/", "%2F")
          + "%2Fstate.json", text.encode())
    with pytest.raises(guard.GuardError) as excinfo:
        apply(emu, alerts=[alert("a3m-1")])
    assert says in str(excinfo.value) and "\n" not in str(excinfo.value)
    assert [n for n in objects(emu) if "/audit/" in n] == []


class AnswerLost(guard_store.CloudBooks):
    """Books whose state write lands but whose answer is lost: the client's retry then meets 412."""

    def _put(self, name, lines_or_state, generation, what):
        written = super(AnswerLost, self)._put(name, lines_or_state, generation, what)
        return written and name != self.state_name


def test_a_state_write_whose_answer_was_lost_is_known_as_written_and_not_decided_again(emu):
    real = guard_store.books_for(args(), env(emu), check=guard.runs_of)
    books = AnswerLost(real.client, real.endpoint, "ops-a", PREFIX, check=guard.runs_of)
    lines, out = guard.apply(args(alerts=[alert("a3m-1")]), False, NOW, books=books)
    assert [x["decision"] for x in lines] == ["act"] and out["books"]["retries"] == 0
    assert [r["id"] for r in state(emu)["runs"]] == [out["act"][0]["run"]]
    logged, lost = audit(emu)
    assert lost == set() and [x["decision"] for x in logged] == ["act"]
