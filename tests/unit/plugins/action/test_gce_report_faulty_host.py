# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gce_report_faulty_host run by real ansible-playbook against the Compute API emulator over HTTP."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))

import compute_fleet as fx  # noqa: E402
import compute_harness as harness  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _playbook_result  # noqa: E402

pytestmark = pytest.mark.emulator
TOKEN = "report-test-token-not-a-secret"
PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Report
      gpudirect.gcp.gce_report_faulty_host:
        instance: "{{ vm }}"
        project: proj-a
        zone: us-central1-a
        behavior: "{{ behavior | default('PERFORMANCE') }}"
        description: NCCL busbw below the family baseline in pairwise tests
      register: out
    - name: Show
      ansible.builtin.debug:
        msg: "RESULT={{ out | to_json }}"
"""


@pytest.fixture
def emu():
    fleet = {"projects": {"proj-a": {"instances": [fx.gpu_instance("mega-0", "a3-mega", prefix="mega")]}}}
    with harness.ThreadEmulator(fleet) as emulator:
        yield emulator


def play(emu, tmp_path, *extra, vm="mega-0"):
    book = tmp_path / "play.yml"
    book.write_text(PLAY)
    return _playbook_result.run(
        ["-i", "localhost,", "-c", "local", book, "-e", "vm=%s" % vm] + list(extra),
        dict(GCP_COMPUTE_API_ENDPOINT=emu.url, GCP_AUTH_KIND="accesstoken", GCP_ACCESS_TOKEN=TOKEN))


def test_check_mode_sends_nothing_and_shows_the_request(emu, tmp_path):
    rc, out, result = play(emu, tmp_path, "--check")
    assert rc == 0, out
    assert emu.reports() == []
    assert result["dry_run"] and result["changed"]
    url = emu.url + "/compute/v1/projects/proj-a/zones/us-central1-a/instances/mega-0/reportHostAsFaulty"
    assert result["request"] == {
        "method": "POST", "url": url,
        "body": {"disruptionSchedule": "IMMEDIATE", "faultReasons": [
            {"behavior": "PERFORMANCE", "description": "NCCL busbw below the family baseline in pairwise tests"}]}}
    assert TOKEN not in out


def test_a_report_reaches_the_api_once_and_returns_its_operation(emu, tmp_path):
    rc, out, result = play(emu, tmp_path, "-e", "behavior=UNRECOVERABLE_GPU_ERROR")
    assert rc == 0, out
    (report,) = emu.reports()
    assert (report["project"], report["zone"], report["instance"]) == ("proj-a", "us-central1-a", "mega-0")
    assert report["body"]["faultReasons"][0]["behavior"] == "UNRECOVERABLE_GPU_ERROR"
    assert result["operation"] == report["operation"] and not result["dry_run"]
    assert TOKEN not in out


def test_a_refusal_before_any_work_is_retried_and_the_host_reported_once(emu, tmp_path):
    emu.set_faults({"fail_first": {"count": 1, "status": 503, "retry_after": 0}})
    rc, out, result = play(emu, tmp_path)
    assert rc == 0, out
    assert len(emu.reports()) == 1 and emu.stats()["by_kind"]["reportHostAsFaulty"] == 2
    assert result["operation"] == emu.reports()[0]["operation"]


@pytest.mark.parametrize("faults, vm, extra, expect", [
    ({}, "nope", [], "instance nope (project proj-a, zone us-central1-a) as faulty: not found (404)"),
    ({"forbidden_projects": ["proj-a"]}, "mega-0", [],
     "permission denied (403): the credentials lack compute.instances.reportHostAsFaulty"),
    ({}, "mega-0", ["-e", "behavior=BROKEN"], "behavior"),
    ({}, "../x", [], "gce_report_faulty_host: instance '../x' is not a valid GCE instance name"),
    # each would send the POST to another resource, or none, if it reached the URL as it is
    ({}, "..", [], "instance '..' is not a valid GCE instance name"),
    ({}, "mega-0?x=1", [], "instance 'mega-0?x=1' is not a valid GCE instance name"),
    ({}, "mega-0#frag", [], "instance 'mega-0#frag' is not a valid GCE instance name"),
    ({}, "Mega-0", [], "instance 'Mega-0' is not a valid GCE instance name"),
])
def test_a_refusal_is_one_line_and_nothing_is_reported(emu, tmp_path, faults, vm, extra, expect):
    emu.set_faults(faults)
    rc, out, _result = play(emu, tmp_path, *extra, vm=vm)
    assert rc != 0
    errors = [line for line in out.splitlines() if line.startswith("fatal:")]
    assert len(errors) == 1 and expect in errors[0], out
    assert "Traceback" not in out and TOKEN not in out
    assert emu.reports() == []
