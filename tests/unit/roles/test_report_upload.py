# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shared report_upload entry point, as the report-writing roles include it: nothing without a bucket,
the objects' links with one (uploaded to the emulator's Cloud Storage), and a dry run in check mode."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "playbooks"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "emulator"))

import _local_play  # noqa: E402
import compute_harness as harness  # noqa: E402

pytestmark = pytest.mark.emulator
PLAY = """
- hosts: n0
  gather_facts: false
  tasks:
    - name: Upload as a role does
      ansible.builtin.include_role:
        name: gpudirect.gcp._common
        tasks_from: report_upload
      vars:
        _common_report_dir: "{{ run_dir }}"
        _common_internal: true
      run_once: true
    - name: Show
      ansible.builtin.debug:
        msg: "OBJECTS={{ gpudirect_report_objects | to_json }}"
"""


def objects(out):
    (line,) = [line for line in out.splitlines() if '"msg": "OBJECTS=' in line]
    return json.loads(json.loads("{%s}" % line.strip())["msg"][len("OBJECTS="):])


@pytest.fixture
def run_dir(tmp_path):
    path = tmp_path / "run-7"
    path.mkdir()
    (path / "report.json").write_text("{}")
    return path


def test_without_a_bucket_nothing_is_sent_and_there_are_no_links(tmp_path, run_dir):
    rc, out = _local_play.run(tmp_path, PLAY, extra_vars={"run_dir": str(run_dir)})
    assert rc == 0, out
    assert objects(out) == []


@pytest.mark.parametrize("check", [False, True])
def test_with_a_bucket_the_links_are_kept_for_the_summary(tmp_path, run_dir, monkeypatch, check):
    with harness.ThreadEmulator({"buckets": {"reports-a": {}}}) as emu:
        monkeypatch.setenv("GCP_STORAGE_API_ENDPOINT", emu.url)
        monkeypatch.setenv("GCP_AUTH_KIND", "accesstoken")
        monkeypatch.setenv("GCP_ACCESS_TOKEN", "token-not-a-secret")
        play = PLAY.replace("gather_facts: false", "gather_facts: false\n  check_mode: %s" % str(check).lower())
        extra = {"run_dir": str(run_dir), "gpudirect_report_bucket": "reports-a"}
        rc, out = _local_play.run(tmp_path, play, extra_vars=extra)
        assert rc == 0, out
        assert objects(out) == ["gs://reports-a/gpudirect-gcp/reports/run-7/report.json"]
        assert len(emu.objects()) == (0 if check else 1)
