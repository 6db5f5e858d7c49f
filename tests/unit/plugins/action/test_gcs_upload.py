# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gcs_upload run by real ansible-playbook against the emulator's Cloud Storage JSON API over HTTP."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))

import compute_harness as harness  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _playbook_result  # noqa: E402

pytestmark = pytest.mark.emulator
TOKEN = "upload-test-token-not-a-secret"
PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Upload
      gpudirect.gcp.gcs_upload:
        src: "{{ src }}"
        bucket: "{{ bucket | default('reports-a') }}"
        prefix: "{{ prefix | default('clusters/a') }}"
      register: out
    - name: Show
      ansible.builtin.debug:
        msg: "RESULT={{ out | to_json }}"
"""


@pytest.fixture
def emu():
    with harness.ThreadEmulator({"buckets": {"reports-a": {}, "locked-b": {"forbidden": True}}}) as emulator:
        yield emulator


@pytest.fixture
def reports(tmp_path):
    run = tmp_path / "diagnose-20261129T000000Z"
    (run / "sub").mkdir(parents=True)
    (run / "report.json").write_text('{"verdict": "fail"}')
    (run / "report.html").write_text("<html>\u00e9</html>", encoding="utf-8")
    (run / "sub" / "junit.xml").write_text("<testsuites/>")
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the bucket")
    (run / "link.txt").symlink_to(secret)
    return run


def play(emu, tmp_path, src, *extra):
    book = tmp_path / "play.yml"
    book.write_text(PLAY)
    return _playbook_result.run(
        ["-i", "localhost,", "-c", "local", book, "-e", "src=%s" % src] + list(extra),
        dict(GCP_STORAGE_API_ENDPOINT=emu.url, GCP_AUTH_KIND="accesstoken", GCP_ACCESS_TOKEN=TOKEN))


def test_every_file_lands_under_the_runs_folder_with_its_links(emu, tmp_path, reports):
    rc, out, result = play(emu, tmp_path, reports)
    assert rc == 0, out
    base = "clusters/a/diagnose-20261129T000000Z/"
    stored = dict((o["name"], o) for o in emu.objects())
    assert sorted(stored) == [base + "report.html", base + "report.json", base + "sub/junit.xml"]
    assert base64.b64decode(stored[base + "report.html"]["data"]).decode("utf-8") == "<html>\u00e9</html>"
    assert stored[base + "report.json"]["contentType"] == "application/json"
    assert result["changed"] and not result["dry_run"]
    assert [o["uri"] for o in result["objects"]] == ["gs://reports-a/" + n for n in sorted(stored)]
    assert result["objects"][0]["url"] == "https://storage.cloud.google.com/reports-a/" + base + "report.html"
    assert TOKEN not in out


def test_a_transient_refusal_is_retried(emu, tmp_path, reports):
    emu.set_faults({"fail_first": {"count": 2, "status": 503}})
    rc, out, result = play(emu, tmp_path, reports)
    assert rc == 0, out
    assert len(emu.objects()) == 3
    assert emu.stats()["failed"] == 2


def test_check_mode_sends_nothing_and_lists_the_objects(emu, tmp_path, reports):
    rc, out, result = play(emu, tmp_path, reports, "--check")
    assert rc == 0, out
    assert emu.objects() == []
    assert result["dry_run"] and len(result["objects"]) == 3


@pytest.mark.parametrize("extra, message", [
    (["-e", "bucket=locked-b"], "uploading clusters/a/diagnose-20261129T000000Z/report.html to bucket locked-b: "
                                "permission denied (403): the credentials lack storage.objects.create on bucket locked-b"),
    (["-e", "bucket=missing-c"], "to bucket missing-c: not found (404): unknown project or resource: The specified "
                                 "bucket does not exist."),
    (["-e", "bucket=gs://reports-a"], "bucket 'gs://reports-a' is not a valid Cloud Storage bucket name"),
    (["-e", "prefix=a/../b"], "prefix 'a/../b' is not a usable object name prefix"),
])
def test_a_failure_is_one_line_naming_the_bucket_or_prefix(emu, tmp_path, reports, extra, message):
    rc, out, _result = play(emu, tmp_path, reports, *extra)
    assert rc == 2, out
    # the message is whole on one line (another test's callback settings may print it twice)
    lines = [line for line in out.splitlines() if "gcs_upload:" in line]
    assert any(message in line for line in lines), lines
    assert "Traceback" not in out


def test_a_missing_directory_is_named(emu, tmp_path):
    rc, out, _result = play(emu, tmp_path, tmp_path / "nothing-here")
    assert rc == 2 and "gcs_upload: src %s is not a directory" % (tmp_path / "nothing-here") in out


def test_a_dry_run_before_the_directory_exists_lists_nothing(emu, tmp_path):
    rc, out, result = play(emu, tmp_path, tmp_path / "not-yet", "--check")
    assert rc == 0, out
    assert result["objects"] == [] and not result["changed"]
