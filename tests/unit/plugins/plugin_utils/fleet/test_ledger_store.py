# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet ledger's store: a local file (locked, its own, never through a link) or one Cloud Storage object
against the emulator's JSON API, written over the generation it was read at - a lost race reads again and adds
again, nothing lost and nothing doubled; retention on every write; check mode writes nothing."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import os
import sys
import threading

import pytest

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.fleet import ledger, ledger_store

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))
import compute_harness as harness  # noqa: E402  pylint: disable=wrong-import-position

NOW = 400 * ledger.DAY
BOUNDS = {"max_age_days": 365, "max_records": 100, "max_bytes": 1 << 20}
OBJECT = "clusters/a/fleet/ledger.json"


def finding(host, when=NOW, cause="Xid 79"):
    return {"kind": "finding", "host": host, "time": when, "component": "gpu", "subject": "GPU 0", "cause": cause}


def args(store, emu=None):
    out = {"store": store, "auth_kind": "accesstoken", "access_token": "not-a-secret"}
    if emu is not None:
        out["storage_endpoint"] = emu.url
    return out


# --- a local file

def test_a_local_ledger_is_made_0600_in_a_0700_directory_and_added_to_under_its_lock(tmp_path):
    path = tmp_path / "fleet" / "ledger.json"
    store = ledger_store.store_for(args(str(path)), {})
    assert isinstance(store, ledger_store.LocalLedger) and store.read() == {}
    out, retries = store.update(ledger_store.recorder([finding("h-1")], NOW, BOUNDS), False)
    assert len(out["added"]) == 1 and retries == 0 and out["records"] == 1
    assert oct(path.stat().st_mode & 0o777) == "0o600" and oct(path.parent.stat().st_mode & 0o777) == "0o700"
    out, _retries = store.update(ledger_store.recorder([finding("h-1"), finding("h-2")], NOW, BOUNDS), False)
    assert [r["host"] for r in out["added"]] == ["h-2"]
    assert [r["host"] for r in json.loads(path.read_text())["records"]] == ["h-1", "h-2"]
    assert ledger_store.read_records(str(path)) == (ledger.load(json.loads(path.read_text()))[0], [])


def test_check_mode_computes_and_writes_nothing_and_makes_no_file(tmp_path):
    path = tmp_path / "fleet" / "ledger.json"
    store = ledger_store.LocalLedger(str(path))
    out, _retries = store.update(ledger_store.recorder([finding("h-1")], NOW, BOUNDS), True)
    assert len(out["added"]) == 1 and not path.parent.exists()


def test_retention_and_the_size_bound_apply_on_every_write(tmp_path):
    path = tmp_path / "ledger.json"
    store = ledger_store.LocalLedger(str(path))
    old = [finding("h-%d" % n, when=NOW - (380 - n) * ledger.DAY) for n in range(3)]
    # written by hand: older than the age bound already
    path.write_text(json.dumps(ledger.document(ledger.add([], old)[0])))
    path.chmod(0o600)
    out, _retries = store.update(ledger_store.recorder([finding("h-9")], NOW, dict(BOUNDS, max_records=2)), False)
    assert out["dropped"] == 3 and out["records"] == 1
    many = [finding("h-%d" % n, when=NOW - 100 + n) for n in range(20)]
    out, _retries = store.update(ledger_store.recorder(many, NOW, dict(BOUNDS, max_records=5)), False)
    assert [r["host"] for r in ledger_store.read_records(str(path))[0]] == ["h-%d" % n for n in range(16, 20)] + ["h-9"]
    out, _retries = store.update(ledger_store.recorder([], NOW, dict(BOUNDS, max_bytes=400)), False)
    assert len(path.read_bytes()) <= 400 and out["records"] >= 1 and out["dropped"] >= 1


def test_a_stored_record_of_another_shape_is_named_and_left_out_the_others_kept(tmp_path):
    path = tmp_path / "ledger.json"
    path.write_text(json.dumps({"version": 1, "records": [finding("h-1"), {"kind": "finding", "host": "h-2"}]}))
    path.chmod(0o600)
    out, _retries = ledger_store.LocalLedger(str(path)).update(ledger_store.recorder([], NOW, BOUNDS), False)
    assert out["skipped"] == ["the stored ledger: record 1 (finding) has a time that is not seconds since the epoch "
                              "(None); skipped"]
    assert [r["host"] for r in json.loads(path.read_text())["records"]] == ["h-1"]


@pytest.mark.parametrize("setup, says", [
    (lambda p: p.write_text("{not json"), "fleet ledger file %s is not JSON: remove it, or repair it, to let the "
                                          "ledger be kept again"),
    (lambda p: p.write_text('{"version": 7, "records": []}'), "the stored ledger is version 7, newer"),
    (lambda p: os.symlink("/etc/hostname", str(p)), "fleet ledger file %s is a symbolic link"),
])
def test_a_ledger_file_that_cannot_be_used_fails_in_one_line_naming_it(tmp_path, setup, says):
    path = tmp_path / "ledger.json"
    setup(path)
    if not path.is_symlink():
        path.chmod(0o600)
    with pytest.raises((ledger_store.StoreError, ledger.LedgerError)) as excinfo:
        ledger_store.LocalLedger(str(path)).update(ledger_store.recorder([finding("h-1")], NOW, BOUNDS), False)
    assert (says % path if "%s" in says else says) in str(excinfo.value) and "\n" not in str(excinfo.value)


@pytest.mark.parametrize("store, says", [
    ("", "the fleet ledger's store is empty"),
    ("gs://Bad_Bucket/x", "fleet ledger store gs://Bad_Bucket/x: bucket 'Bad_Bucket' is not a valid"),
    ("gs://ops-a/a/../b", "fleet ledger store gs://ops-a/a/../b: prefix 'a/../b' is not a usable"),
])
def test_a_store_setting_that_cannot_be_used_is_named(store, says):
    with pytest.raises(ledger_store.StoreError) as excinfo:
        ledger_store.parse(store)
    assert says in str(excinfo.value)


def test_a_bucket_alone_names_the_default_object():
    assert ledger_store.parse("gs://ops-a") == ("object", "ops-a", ledger_store.DEFAULT_OBJECT)
    assert ledger_store.parse("gs://ops-a/" + OBJECT) == ("object", "ops-a", OBJECT)


# --- a Cloud Storage object, against the emulator

@pytest.fixture
def emu():
    with harness.ThreadEmulator({"buckets": {"ops-a": {}, "locked-b": {"forbidden": True}}}) as emulator:
        yield emulator


def stored(emu):
    found = [o for o in emu.objects() if o["bucket"] == "ops-a" and o["name"] == OBJECT]
    return json.loads(base64.b64decode(found[0]["data"]).decode("utf-8")) if found else None


class Racing(ledger_store.CloudLedger):
    """A ledger whose first write meets another run's, written just before it."""

    def __init__(self, rival, *pos, **kw):
        super(Racing, self).__init__(*pos, **kw)
        self.rival, self.raced = rival, 0

    def _put(self, name, lines_or_state, generation, what):
        if not self.raced:
            self.raced += 1
            self.rival()
        return super(Racing, self)._put(name, lines_or_state, generation, what)


@pytest.mark.emulator
def test_a_ledger_object_outlives_the_call_and_check_mode_writes_nothing(emu):
    store = ledger_store.store_for(args("gs://ops-a/" + OBJECT, emu), {})
    assert store.location == "gs://ops-a/" + OBJECT and store.read() == {}
    store.update(ledger_store.recorder([finding("h-1")], NOW, BOUNDS), True)
    assert stored(emu) is None
    out, retries = store.update(ledger_store.recorder([finding("h-1")], NOW, BOUNDS), False)
    assert retries == 0 and [r["host"] for r in stored(emu)["records"]] == ["h-1"]
    again = ledger_store.store_for(args("gs://ops-a/" + OBJECT, emu), {})
    out, _retries = again.update(ledger_store.recorder([finding("h-1")], NOW, BOUNDS), False)
    assert out["added"] == [] and len(stored(emu)["records"]) == 1
    store.close()
    again.close()


@pytest.mark.emulator
def test_a_lost_race_reads_again_and_adds_again_nothing_lost_nothing_doubled(emu):
    def rival():
        other = ledger_store.store_for(args("gs://ops-a/" + OBJECT, emu), {})
        other.update(ledger_store.recorder([finding("h-rival"), finding("h-both")], NOW, BOUNDS), False)
        other.close()

    real = ledger_store.store_for(args("gs://ops-a/" + OBJECT, emu), {})
    store = Racing(rival, real.client, real.endpoint, "ops-a", OBJECT, sleep=lambda s: None)
    out, retries = store.update(ledger_store.recorder([finding("h-mine"), finding("h-both")], NOW, BOUNDS), False)
    assert retries == 1 and [r["host"] for r in out["added"]] == ["h-mine"]
    assert sorted(r["host"] for r in stored(emu)["records"]) == ["h-both", "h-mine", "h-rival"]
    store.close()


@pytest.mark.emulator
def test_writers_at_once_each_keep_their_records(emu):
    errors = []

    def write(n):
        try:
            store = ledger_store.store_for(args("gs://ops-a/" + OBJECT, emu), {})
            store.sleep = lambda s: None
            store.tries = 20
            store.update(ledger_store.recorder([finding("h-%d" % n)], NOW, BOUNDS), False)
            store.close()
        except Exception as exc:  # pylint: disable=broad-except
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(r["host"] for r in stored(emu)["records"]) == ["h-%d" % n for n in range(5)]


@pytest.mark.emulator
def test_a_race_lost_on_every_try_fails_in_one_line_and_a_forbidden_bucket_is_named(emu):
    real = ledger_store.store_for(args("gs://ops-a/" + OBJECT, emu), {})

    class AlwaysLost(ledger_store.CloudLedger):
        def _put(self, name, lines_or_state, generation, what):
            return False

    store = AlwaysLost(real.client, real.endpoint, "ops-a", OBJECT, sleep=lambda s: None, tries=3)
    with pytest.raises(ledger_store.StoreError, match="fleet ledger object gs://ops-a/%s: another run wrote it first "
                                                      "on each of 3 tries; nothing was recorded" % OBJECT):
        store.update(ledger_store.recorder([finding("h-1")], NOW, BOUNDS), False)
    locked = ledger_store.store_for(args("gs://locked-b/" + OBJECT, emu), {})
    with pytest.raises(ledger_store.StoreError) as excinfo:
        locked.read()
    assert "locked-b" in str(excinfo.value) and "\n" not in str(excinfo.value)
    real.close()
    locked.close()
