# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""fleet_ledger run by real ansible-playbook: findings and records recorded by physical host, check mode and diff,
a query that knows a VM re-created on a host with history and names the report candidates, bad input in one
line; and its documentation matching its argument spec."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import sys
import time

import yaml

from ansible_collections.gpudirect.gcp.plugins.action import fleet_ledger as action
from ansible_collections.gpudirect.gcp.plugins.doc_fragments import gce_auth
from ansible_collections.gpudirect.gcp.plugins.modules import fleet_ledger as module_doc
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.fleet import ledger

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _playbook_result  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
PLACES = {"vm-a": {"block": "b1", "subblock": "s1", "host": "h-1"},
          "vm-b": {"block": "b1", "subblock": "s2", "host": "h-2"}}


def play(tmp_path, task, *extra):
    book = tmp_path / "play.yml"
    book.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "tasks": [
        dict({"name": "Ledger", "register": "out", "ignore_errors": True}, **{"gpudirect.gcp.fleet_ledger": task}),
        {"name": "Show", "ansible.builtin.debug": {"msg": "RESULT={{ out | to_json }}"}}]}]))
    return _playbook_result.run(["-i", "localhost,", "-c", "local", book] + list(extra), {})


def test_failing_findings_and_records_are_kept_by_physical_host_and_a_rerun_adds_nothing(tmp_path):
    store = str(tmp_path / "fleet" / "ledger.json")
    when = int(time.time()) - 60
    task = {"state": "recorded", "store": store, "places": PLACES, "source": "diagnose",
            "findings": [{"host": "vm-a", "component": "gpu", "subject": "GPU 0", "severity": "fail",
                          "cause": "Xid 79 password=hunter2hunter2"},
                         {"host": "vm-a", "component": "gpu", "subject": "GPU 1", "severity": "warn", "cause": "slow"},
                         {"host": "vm-x", "component": "nic", "subject": "eth1", "severity": "fail", "cause": "down"}],
            "records": [{"kind": "outcome", "node": "vm-b", "outcome": "cleared", "rung": "reboot", "time": when},
                        {"kind": "outcome", "node": "vm-b", "time": when}]}
    rc, out, result = play(tmp_path, task, "--check", "--diff")
    assert rc == 0, out
    assert result["added"] == 2 and result["changed"] and not os.path.exists(store)
    assert "changed: [localhost]" in out
    assert "+ %s physical host h-2 (VM vm-b): remediation ended cleared after rung reboot\n" % ledger.stamp(when) in out
    rc, out, result = play(tmp_path, task)
    assert rc == 0, out
    assert result["added"] == 2 and result["records"] == 2 and result["location"] == store
    assert result["left_out"] == [
        "finding nic eth1 about VM vm-x: its physical host is not known (the inventory gives it no gce_topology "
        "host); not recorded",
        "record 1 (outcome) lacks its outcome; not recorded"]
    kept = json.loads(open(store).read())["records"]
    assert [(r["host"], r["kind"]) for r in kept] == [("h-2", "outcome"), ("h-1", "finding")]
    # a node's text is masked
    assert kept[1]["cause"] == "Xid 79 password=********"
    assert kept[1]["source"] == "diagnose" and kept[1]["place"] == {"block": "b1", "subblock": "s1"}
    # the outcome given with its time is the same record again; the finding stamped now is a new one
    rc, out, result = play(tmp_path, dict(task, findings=[]))
    assert rc == 0 and result["added"] == 0 and not result["changed"], out


def test_a_query_knows_a_vm_re_created_on_a_host_with_history_and_names_the_candidates(tmp_path):
    store = tmp_path / "ledger.json"
    now = 1800000000
    records = [
        {"kind": "finding", "host": "h-1", "node": "vm-old", "time": now - 5000, "component": "gpu",
         "subject": "GPU 0", "cause": "Xid 79"},
        {"kind": "outcome", "host": "h-1", "node": "vm-old", "time": now - 4000, "outcome": "cleared",
         "rung": "reset_gpu"},
        {"kind": "finding", "host": "h-1", "node": "vm-old", "time": now - 3000, "component": "gpu",
         "subject": "GPU 0", "cause": "Xid 79"},
        {"kind": "finding", "host": "h-2", "time": now - 3000, "component": "nic", "subject": "eth1",
         "cause": "down"},
        {"kind": "report", "host": "h-9"}]
    store.write_text(json.dumps({"version": 1, "records": records}))
    store.chmod(0o600)
    # vm-new was never seen: its physical host was
    places = {"vm-new": {"block": "b1", "subblock": "s1", "host": "h-1"}, "vm-b": PLACES["vm-b"]}
    rc, out, result = play(tmp_path, {"store": str(store), "nodes": ["vm-new", "vm-b", "vm-c"], "places": places,
                                      "days": 3650})
    assert rc == 0, out
    assert not result["changed"] and result["records"] == 4
    assert result["left_out"] == [
        "fleet ledger %s: record 4 (report) has a time that is not seconds since the epoch (None); skipped" % store]
    assert result["nodes"]["vm-new"]["host"] == "h-1" and result["nodes"]["vm-new"]["recent"].startswith(
        "physical host h-1: 3 record(s), 2 failure(s) in the last 3650 day(s)")
    assert result["candidate_nodes"] == {"vm-new": {"rung": "reset_gpu", "why": result["candidates"][0]["why"]}}
    assert result["nodes"]["vm-b"]["recent"].startswith("physical host h-2: 1 record(s), 1 failure(s)")
    assert result["nodes"]["vm-b"]["candidate"] is None
    assert result["nodes"]["vm-c"] == {"host": None, "recent": None, "candidate": None}
    assert len(result["history"]["h-1"]) == 3 and len(result["history"]["h-2"]) == 1
    assert [s["host"] for s in result["summary"]["hosts"]] == ["h-1", "h-2"]
    assert result["summary"]["subblocks"][0]["repeat_hosts"] == ["h-1"]


def test_a_query_draws_the_fleet_page_whole_only_when_it_differs_and_not_in_check_mode(tmp_path):
    store = tmp_path / "ledger.json"
    now = int(time.time())
    store.write_text(json.dumps({"version": 1, "records": [
        {"kind": "finding", "host": "h-1", "node": "vm-a", "time": now - 60, "component": "gpu", "subject": "GPU 0",
         "cause": "<b>Xid 79</b>", "place": {"block": "b1", "subblock": "s1"}}]}))
    store.chmod(0o600)
    page = tmp_path / "report" / "fleet.html"
    rc, out, result = play(tmp_path, {"store": str(store), "page": str(page)})
    assert rc == 0 and result["failed"] and result["msg"].startswith(
        "fleet_ledger: page %s: its directory %s does not exist" % (page, page.parent)), out
    page.parent.mkdir()
    rc, out, result = play(tmp_path, {"store": str(store), "page": str(page)}, "--check")
    assert rc == 0 and result["changed"] and result["page"] == str(page) and not page.exists(), out
    # a link where the page goes is replaced, never written through
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("kept")
    page.symlink_to(elsewhere)
    day = time.strftime("%Y-%m-%d", time.gmtime())
    rc, out, result = play(tmp_path, {"store": str(store), "page": str(page)})
    assert rc == 0 and result["changed"], out
    assert elsewhere.read_text() == "kept" and not page.is_symlink()
    text = page.read_text()
    assert "<td>h-1</td>" in text and "&lt;b&gt;Xid 79&lt;/b&gt;" in text
    assert sorted(os.listdir(str(page.parent))) == ["fleet.html"]
    # the same ledger draws the same page, unless the day changed in between (the strips end today)
    rc, out, result = play(tmp_path, {"store": str(store), "page": str(page)})
    assert rc == 0 and result["changed"] == (time.strftime("%Y-%m-%d", time.gmtime()) != day), out
    rc, out, result = play(tmp_path, {"store": str(store), "state": "recorded", "page": str(page)})
    assert rc == 0 and result["failed"] and result["msg"] == (
        "fleet_ledger: page is drawn with state=query, after the records are added"), out


def test_bad_input_fails_in_one_line_naming_it(tmp_path):
    for task, says in (
            ({"store": str(tmp_path / "l.json"), "days": 0}, "fleet_ledger: days must be 1 or more, not 0"),
            ({"store": str(tmp_path / "l.json"), "state": "recorded", "max_bytes": 0},
             "fleet_ledger: max_bytes must be a whole number of 1 or more, not 0"),
            ({"store": "gs://Bad/x"}, "fleet_ledger: fleet ledger store gs://Bad/x: bucket 'Bad' is not a valid"),
            ({"store": str(tmp_path / "l.json"), "places": {"vm-a": {"rack": "r"}}},
             "fleet_ledger: places: vm-a: unknown place part(s) rack")):
        rc, out, result = play(tmp_path, task)
        assert rc == 0 and result["failed"] and result["msg"].startswith(says), out
        assert "Traceback" not in out


def test_every_option_is_documented_as_the_action_reads_it():
    doc = yaml.safe_load(module_doc.DOCUMENTATION)
    options = dict(doc["options"], **yaml.safe_load(gce_auth.ModuleDocFragment.DOCUMENTATION)["options"])
    assert sorted(options) == sorted(action.ARGUMENT_SPEC)
    for name, spec in action.ARGUMENT_SPEC.items():
        for key in ("type", "elements", "default", "required", "choices"):
            assert options[name].get(key) == spec.get(key), (name, key)
    # every kind is named where the description lists them
    text = " ".join(doc["description"])
    assert [kind for kind in ledger.kinds() if "C(%s)" % kind not in text] == []
    returned = yaml.safe_load(module_doc.RETURN)
    assert {"history", "recent", "candidates", "nodes", "candidate_nodes", "summary", "added", "left_out"} <= set(returned)


def test_the_action_is_in_the_google_auth_group():
    with open(os.path.join(ROOT, "meta", "runtime.yml"), encoding="utf-8") as fh:
        assert "fleet_ledger" in yaml.safe_load(fh)["action_groups"]["gce"]
