# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet ledger's records: one table of kinds that everything follows, masked and bounded texts, identical
records added once, retention by age, count and bytes (oldest first), a malformed record skipped and named,
history and recent by physical host (whatever VM is on it), a repeat after a clear, and the summaries."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.fleet import ledger

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))))
DAY = ledger.DAY
NOW = 400 * DAY
PLACE = {"cluster": "c1", "block": "b1", "subblock": "s1", "host": "h-1"}


def finding(host="h-1", when=NOW - DAY, node="vm-a", cause="Xid 79: fallen off the bus", **more):
    out = {"kind": "finding", "host": host, "time": when, "node": node, "component": "gpu", "subject": "GPU 3",
           "cause": cause}
    out.update(more)
    return out


def outcome(host="h-1", when=NOW - 2 * DAY, result="cleared", rung="reset_gpu"):
    return {"kind": "outcome", "host": host, "time": when, "outcome": result, "rung": rung, "node": "vm-a"}


def added(raws):
    records, _new, problems = ledger.add([], raws)
    assert problems == []
    return records


def test_every_kind_row_has_every_part_and_a_row_short_of_one_fails_in_one_line(monkeypatch):
    assert ledger.kinds() == ("finding", "remediation", "outcome", "report")
    monkeypatch.setattr(ledger, "KINDS", ledger.KINDS + ({"kind": "probe", "required": ()},))
    with pytest.raises(ValueError, match=r"row probe: lacks optional, says, failure, clears, reported$"):
        ledger.table()


def test_a_throwaway_kind_reaches_check_says_history_the_summaries_the_repeat_and_the_docs(monkeypatch):
    row = {"kind": "probe", "required": ("note",), "optional": (), "says": lambda r: "probe says %s" % r["note"],
           "failure": lambda r: True, "clears": lambda r: False, "reported": lambda r: False}
    monkeypatch.setattr(ledger, "KINDS", ledger.KINDS + (row,))
    assert ledger.table()[-1] is row
    probe = {"kind": "probe", "host": "h-1", "time": NOW, "note": "token=s3cr3tvalue1234 seen"}
    records = added([outcome(), probe])
    assert records[-1]["note"] == "token=********" + " seen"
    assert ledger.says(records[-1]).endswith("physical host h-1: probe says token=******** seen")
    assert [r["kind"] for r in ledger.history(records, "h-1")] == ["outcome", "probe"]
    summary = ledger.by_host(records)[0]
    assert summary["counts"]["probe"] == 1 and summary["failures"] == 1
    assert ledger.by_subblock(records)[0]["counts"]["probe"] == 1
    # a failure of the new kind after a clear is a repeat
    assert ledger.repeat_after_clear(records, "h-1")["why"].startswith("physical host h-1 failed again (")
    assert "| `probe` | `note` | - |" in ledger.doc_table()
    # a field the row does not name is malformed for it
    assert ledger.check(dict(probe, cause="x"))[1] == "(probe) has unknown field(s) cause"


def test_the_docs_list_every_kind_as_the_table_has_it():
    with open(os.path.join(ROOT, "docs", "fleet.md"), encoding="utf-8") as fh:
        text = fh.read()
    assert "\n".join(ledger.doc_table()) in text


def test_texts_are_masked_bounded_one_line_and_cleaning_twice_changes_nothing():
    for cause in ("Authorization: Bearer abcdefghijklmnop0123456789\nnext line", "x\n" * 2000):
        record, why = ledger.check(finding(cause=cause, subject="GPU 3\x1b[31m"))
        assert why is None and "abcdefghijklmnop" not in record["cause"] and "\n" not in record["cause"]
        assert record["subject"] == "GPU 3\\x1b[31m"
        assert ledger.check(record) == (record, None)
        assert ledger.check(record, mask=False) == (record, None)
    assert len(record["cause"]) == ledger.MAX_TEXT and record["cause"].endswith("...")
    assert ledger.check(finding(node="n" * 300))[0]["node"] == "n" * 197 + "..."


@pytest.mark.parametrize("raw, says", [
    ("text", "is not a mapping"),
    ({"kind": "nope", "host": "h", "time": 1}, "has an unknown kind 'nope' (the kinds: finding, remediation, outcome, "
                                               "report)"),
    (dict(finding(), host=""), "(finding) names no physical host"),
    (dict(finding(), time="yesterday"), "(finding) has a time that is not seconds since the epoch ('yesterday')"),
    (dict(finding(), time=True), "(finding) has a time that is not seconds since the epoch (True)"),
    (dict(finding(), cause=None), "(finding) lacks its cause"),
    (dict(finding(), subject=["GPU 1"]), "(finding) has a subject that is not text (list)"),
    (dict(finding(), place={"rack": "r1"}),
     "(finding) has a place of another shape: unknown place part(s) rack (the parts: cluster, block, subblock, host, "
     "nvlink_domain)"),
    (dict(finding(), decision="act"), "(finding) has unknown field(s) decision"),
])
def test_a_malformed_record_is_skipped_and_named_in_one_line_and_never_costs_the_others(raw, says):
    records, new, problems = ledger.add([], [finding(when=NOW - 5), raw, finding(when=NOW - 4)])
    assert [r["time"] for r in new] == [NOW - 5, NOW - 4] and len(records) == 2
    assert problems == ["a new record 1 %s; skipped" % says]
    stored, problems = ledger.load({"version": 1, "records": [finding(when=NOW - 5), raw]}, "ledger L")
    assert len(stored) == 1 and problems == ["ledger L: record 1 %s; skipped" % says]


@pytest.mark.parametrize("doc, says", [
    ([], "ledger L is not a JSON object"),
    ({"version": 2, "records": []}, "ledger L is version 2, newer than this collection reads (1)"),
    ({"version": "1", "records": []}, "ledger L has version '1', not a version number"),
    ({"version": 1, "records": {}}, "ledger L: its records is not a list"),
])
def test_a_ledger_of_another_shape_is_refused_never_read_as_empty(doc, says):
    with pytest.raises(ledger.LedgerError, match="^" + says.replace("(", r"\(").replace(")", r"\)")):
        ledger.load(doc, "ledger L")


def test_identical_records_are_added_once_and_a_batch_added_twice_adds_nothing():
    batch = [finding(), finding(), outcome()]
    records, new, _problems = ledger.add([], batch)
    assert len(records) == 2 and len(new) == 2
    again, new, _problems = ledger.add(records, batch)
    assert again == records and new == []
    # the same finding at another time is another event
    assert len(ledger.add(records, [finding(when=NOW)])[1]) == 1


def test_retention_drops_by_age_then_count_then_bytes_oldest_first():
    records = added([finding(when=NOW - d * DAY, cause="cause %d" % d) for d in (400, 100, 3, 2, 1)])
    kept, dropped = ledger.retain(records, NOW, max_age_days=365)
    assert dropped == 1 and [r["cause"] for r in kept] == ["cause 100", "cause 3", "cause 2", "cause 1"]
    kept, dropped = ledger.retain(records, NOW, max_records=2)
    assert dropped == 3 and [r["cause"] for r in kept] == ["cause 2", "cause 1"]
    # the bound is on the JSON the store writes: the largest ledger that fits is kept, the oldest dropped
    two = ledger.size(records[-2:])
    kept, dropped = ledger.retain(records, NOW, max_bytes=two)
    assert [r["cause"] for r in kept] == ["cause 2", "cause 1"]
    assert len(json.dumps(ledger.document(kept), sort_keys=True)) + 1 == two
    kept, _dropped = ledger.retain(records, NOW, max_bytes=two - 1)
    assert [r["cause"] for r in kept] == ["cause 1"]
    assert ledger.retain(records, NOW, max_bytes=10)[0] == []
    with pytest.raises(ValueError, match="max_records must be a whole number of 1 or more, not 0"):
        ledger.retain(records, NOW, max_records=0)


def test_a_vm_re_created_on_a_host_with_history_is_known_by_its_physical_host():
    places = {"vm-new": dict(PLACE), "vm-elsewhere": {"block": "b2", "subblock": "s9", "host": "h-9"}}
    old = added([finding(node="vm-old", when=NOW - 2 * DAY)])
    records, problems = ledger.from_findings(
        [{"host": "vm-new", "component": "nic", "subject": "eth1", "severity": "fail", "cause": "link down"},
         {"host": "vm-new", "component": "nic", "subject": "eth2", "severity": "warn", "cause": "slow"},
         {"host": None, "component": "fabric", "subject": "busbw", "severity": "fail", "cause": "low"},
         {"host": "vm-unplaced", "component": "gpu", "subject": "GPU 0", "severity": "fail", "cause": "Xid 48"}],
        places, NOW)
    assert problems == ["finding gpu GPU 0 about VM vm-unplaced: its physical host is not known (the inventory gives it "
                        "no gce_topology host); not recorded"]
    merged = ledger.add(old, records)[0]
    assert [(r["node"], r["subject"]) for r in ledger.history(merged, "h-1")] == [
        ("vm-old", "GPU 3"), ("vm-new", "eth1")]
    assert merged[-1]["place"] == {"cluster": "c1", "block": "b1", "subblock": "s1"}
    recent = ledger.recent_hosts(merged, 30, NOW)
    assert [r["host"] for r in recent] == ["h-1"] and recent[0]["why"].startswith(
        "physical host h-1: 2 record(s), 2 failure(s) in the last 30 day(s); the latest ")
    assert ledger.recent(merged, "h-1", 1, NOW) == merged[-1:]


def test_a_gpu_is_known_by_its_uuid_or_serial_where_a_finding_names_one():
    uuid = "GPU-0a1b2c3d-1111-2222-3333-444455556666"
    records = ledger.from_findings([{"host": "vm-a", "component": "gpu", "subject": "GPU 1 (%s)" % uuid,
                                     "severity": "fail", "cause": "ECC"},
                                    {"host": "vm-a", "component": "gpu", "subject": "GPU 2", "severity": "fail",
                                     "cause": "Xid 79 on the GPU with serial number 1652221234567"}],
                                   {"vm-a": PLACE}, NOW)[0]
    assert [r["gpu"] for r in records] == [uuid, "1652221234567"]
    assert ledger.history(added(records), gpu=uuid)[0]["subject"] == "GPU 1 (%s)" % uuid


def test_a_host_that_fails_again_after_a_clear_is_a_candidate_until_it_is_reported():
    records = added([finding(when=NOW - 3 * DAY), outcome(when=NOW - 2 * DAY),
                     finding(when=NOW - DAY, node="vm-b", host="h-1")])
    repeat = ledger.repeat_after_clear(records, "h-1")
    assert repeat["rung"] == "reset_gpu" and repeat["node"] == "vm-b"
    assert repeat["why"] == ("physical host h-1 failed again (1971-02-04T00:00:00Z, gpu GPU 3: Xid 79: fallen off the "
                             "bus) after a remediation cleared it at rung reset_gpu (1971-02-03T00:00:00Z): a "
                             "candidate for a report to Google as faulty")
    assert [c["host"] for c in ledger.candidates(records)] == ["h-1"]
    # a clear with no rung run (the check passed before any repair) is no repair that held or did not
    assert ledger.repeat_after_clear(added([outcome(rung=None), finding()]), "h-1") is None
    # not cleared, or no failure since: no candidate
    assert ledger.repeat_after_clear(added([outcome(result="not_cleared"), finding()]), "h-1") is None
    assert ledger.repeat_after_clear(added([finding(when=NOW - 3 * DAY), outcome()]), "h-1") is None
    # a report that reached Google ends it; one that was refused does not
    report = {"kind": "report", "host": "h-1", "time": NOW, "outcome": "reported", "behavior": "PERFORMANCE"}
    assert ledger.repeat_after_clear(ledger.add(records, [report])[0], "h-1") is None
    assert ledger.repeat_after_clear(ledger.add(records, [dict(report, outcome="not_running")])[0], "h-1")


def test_summaries_put_repeat_offenders_first_with_counts_over_time():
    records = added([
        finding(host="h-2", when=NOW - 3 * DAY, place={"block": "b1", "subblock": "s2"}),
        finding(host="h-2", when=NOW - 3 * DAY + 60, cause="other", place={"block": "b1", "subblock": "s2"}),
        finding(host="h-2", when=NOW - 2 * DAY, place={"block": "b1", "subblock": "s2"}),
        finding(host="h-1", when=NOW - 3 * DAY, place={"block": "b1", "subblock": "s1"}),
        outcome(host="h-1", when=NOW - 2 * DAY), finding(host="h-1", when=NOW - DAY),
        finding(host="h-3", when=NOW - DAY, place={"block": "b2", "subblock": "s1"})])
    summary = ledger.by_host(records)
    assert [s["host"] for s in summary] == ["h-1", "h-2", "h-3"]
    assert summary[0]["repeat"] and summary[1]["repeat"] is None
    assert summary[1]["days"] == {"1971-02-02": 2, "1971-02-03": 1}
    assert summary[0]["counts"] == {"finding": 2, "remediation": 0, "outcome": 1, "report": 0}
    assert summary[0]["place"] == {"block": "b1", "subblock": "s1"}
    blocks = ledger.by_subblock(records)
    assert [(b["block"], b["subblock"], b["repeat_hosts"]) for b in blocks] == [
        ("b1", "s1", ["h-1"]), ("b1", "s2", []), ("b2", "s1", [])]
    assert blocks[1]["failures"] == 3 and blocks[1]["hosts"] == ["h-2"]


def test_records_given_by_vm_are_keyed_by_its_physical_host():
    raw = {"kind": "remediation", "node": "vm-a", "decision": "act", "time": NOW}
    record, why = ledger.placed(raw, {"vm-a": PLACE})
    assert why is None and record["host"] == "h-1"
    assert ledger.check(record)[0]["place"] == {"cluster": "c1", "block": "b1", "subblock": "s1"}
    assert ledger.placed(raw, {})[1].startswith("about VM vm-a: its physical host is not known")


def test_the_guards_decisions_and_outcomes_become_records_at_their_own_time():
    lines = [{"time": "1971-02-05T00:00:00Z", "decision": "act", "node": "vm-a", "rung": "reset_gpu", "run": "r1",
              "reason": "drain vm-a", "finding": "gpu GPU 1", "alert": "GPUDirectNodeRemediable", "status": "firing"},
             {"time": "1971-02-05T00:00:00Z", "decision": "ignored", "node": "vm-a", "reason": "resolved"},
             {"time": "1971-02-05T00:00:00Z", "decision": "held", "node": None, "reason": "names no node"},
             {"time": "1971-02-05T01:00:00Z", "decision": "outcome", "node": "vm-a", "run": "r1", "rung": "reset_gpu",
              "outcome": "cleared", "returned": False, "detail": "passed"},
             {"time": "1971-02-05T01:00:00Z", "decision": "held", "node": "vm-z", "reason": "cap"}]
    records, problems = ledger.from_audit(lines, {"vm-a": PLACE}, NOW, "remediate")
    assert [(r["kind"], r["time"] - NOW) for r in records] == [("remediation", 0), ("outcome", 3600)]
    assert records[0]["decision"] == "act" and records[1]["outcome"] == "cleared" and records[1]["source"] == "remediate"
    assert problems == ["remediation of the guard about VM vm-z: its physical host is not known (the inventory gives "
                        "it no gce_topology host); not recorded"]
    assert all(ledger.check(r)[1] is None for r in records)
    # read twice, the same records
    assert ledger.from_audit(lines, {"vm-a": PLACE}, NOW + 5)[0][0]["time"] == records[0]["time"]
