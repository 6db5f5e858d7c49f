# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gce_report_faulty_host run by real ansible-playbook against the Compute API emulator over HTTP: Google's
conditions read before sending, the operation followed to its end, every documented refusal one outcome."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
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
DESCRIPTION = "NCCL busbw below the family baseline in pairwise tests"
PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Report
      gpudirect.gcp.gce_report_faulty_host:
        instance: "{{ vm }}"
        project: proj-a
        zone: us-central1-a
        behavior: "{{ behavior | default(omit) }}"
        finding: "{{ finding | default(omit) }}"
        wait_s: "{{ wait_s | default(omit) }}"
        description: %s
      register: out
      ignore_errors: true
    - name: Show
      ansible.builtin.debug:
        msg: "RESULT={{ out | to_json }}"
""" % DESCRIPTION
RB = "RESERVATION_BOUND"


@pytest.fixture
def emu():
    fleet = {"projects": {"proj-a": {"instances": [
        fx.gpu_instance("mega-0", "a3-mega", prefix="mega", provisioning_model=RB),
        fx.gpu_instance("mega-stopped", "a3-mega", prefix="mega", provisioning_model=RB, status="TERMINATED"),
        fx.gpu_instance("mega-spot", "a3-mega", prefix="mega", provisioning_model="SPOT"),
        fx.gpu_instance("mega-std", "a3-mega", prefix="mega"),
        fx.gpu_instance("edge-0", "a3-edge", prefix="edge", provisioning_model=RB),
    ]}}}
    with harness.ThreadEmulator(fleet) as emulator:
        yield emulator


def play(emu, tmp_path, *extra, vm="mega-0"):
    book = tmp_path / "play.yml"
    book.write_text(PLAY)
    return _playbook_result.run(
        ["-i", "localhost,", "-c", "local", book, "-e", "vm=%s" % vm] + list(extra),
        dict(GCP_COMPUTE_API_ENDPOINT=emu.url, GCP_AUTH_KIND="accesstoken", GCP_ACCESS_TOKEN=TOKEN))


def fatal_line(out):
    """The task's one failure line (ignore_errors keeps the play going to show the result)."""
    errors = [line for line in out.splitlines() if line.startswith("fatal:")]
    assert len(errors) == 1, out
    return errors[0]


def sent(emu):
    return emu.stats()["by_kind"].get("reportHostAsFaulty", 0)


def test_check_mode_reads_the_conditions_sends_nothing_and_shows_the_request(emu, tmp_path):
    rc, out, result = play(emu, tmp_path, "--check", "-e", "behavior=PERFORMANCE")
    assert rc == 0, out
    assert emu.reports() == [] and sent(emu) == 0
    kinds = emu.stats()["by_kind"]
    assert kinds["instance_get"] == 1 and kinds["operation_list"] == 1
    assert result["dry_run"] and result["changed"] and result["outcome"] == "dry_run"
    assert "it qualifies" in result["msg"]
    url = emu.url + "/compute/v1/projects/proj-a/zones/us-central1-a/instances/mega-0/reportHostAsFaulty"
    assert result["request"] == {
        "method": "POST", "url": url,
        "body": {"disruptionSchedule": "IMMEDIATE", "faultReasons": [
            {"behavior": "PERFORMANCE", "description": DESCRIPTION}]}}
    assert (result["instance_status"], result["machine_type"], result["provisioning_model"]) == (
        "RUNNING", "a3-megagpu-8g", RB)
    assert TOKEN not in out


def test_check_mode_refuses_a_vm_that_does_not_qualify(emu, tmp_path):
    _rc, out, result = play(emu, tmp_path, "--check", vm="mega-stopped")
    assert result["failed"] and result["outcome"] == "not_running" and result["dry_run"]
    assert "the VM is TERMINATED, not RUNNING" in fatal_line(out)
    assert sent(emu) == 0


def test_a_report_is_sent_once_and_followed_to_its_end_with_progress(emu, tmp_path):
    rc, out, result = play(emu, tmp_path, "-v", "-e", "behavior=UNRECOVERABLE_GPU_ERROR")
    assert rc == 0, out
    (report,) = emu.reports()
    assert (report["project"], report["zone"], report["instance"]) == ("proj-a", "us-central1-a", "mega-0")
    assert report["body"]["faultReasons"][0]["behavior"] == "UNRECOVERABLE_GPU_ERROR"
    assert result["operation"] == report["operation"] and not result["dry_run"] and result["changed"]
    assert result["outcome"] == "reported" and result["operation_status"] == "DONE"
    # the emulator's operation is PENDING 0.1 s, then RUNNING 0.3 s
    assert 0.3 <= result["elapsed_s"] < 30
    assert result["msg"].startswith("reported the host of instance mega-0 (project proj-a, zone us-central1-a) "
                                    "as faulty (UNRECOVERABLE_GPU_ERROR): operation %s DONE after" % report["operation"])
    progress = [line for line in out.splitlines() if "gce_report_faulty_host: instance mega-0" in line]
    assert any(": DONE after" in line for line in progress), out
    assert any("PENDING" in line or "RUNNING" in line for line in progress), out
    assert emu.stats()["by_kind"]["operation_get"] >= 1
    assert sent(emu) == 1 and TOKEN not in out


def test_wait_s_0_sends_and_does_not_follow(emu, tmp_path):
    rc, out, result = play(emu, tmp_path, "-e", "wait_s=0")
    assert rc == 0, out
    assert result["outcome"] == "reported" and "not followed (wait_s 0)" in result["msg"]
    assert "operation_get" not in emu.stats()["by_kind"] and sent(emu) == 1


def test_a_refusal_before_any_work_is_retried_and_the_host_reported_once(emu, tmp_path):
    emu.set_faults({"fail_first": {"count": 1, "status": 503, "retry_after": 0, "kinds": ["reportHostAsFaulty"]}})
    rc, out, result = play(emu, tmp_path)
    assert rc == 0, out
    assert len(emu.reports()) == 1 and sent(emu) == 2
    assert result["operation"] == emu.reports()[0]["operation"] and result["outcome"] == "reported"


@pytest.mark.parametrize("vm, faults, outcome, expect", [
    ("mega-stopped", {}, "not_running", "the VM is TERMINATED, not RUNNING"),
    ("mega-std", {}, "not_reservation_bound", "provisioning model STANDARD, not RESERVATION_BOUND"),
    ("mega-spot", {}, "not_reservation_bound", "Google takes reports of SPOT VMs through the account team"),
    ("edge-0", {}, "machine_type_not_supported", "machine type a3-edgegpu-8g is not one the method accepts ("),
    ("mega-0", {"busy_instances": {"mega-0": "stop"}}, "in_flight", "stop operation-"),
    ("mega-0", {"busy_instances": {"mega-0": "reportHostAsFaulty"}}, "in_flight",
     "reportHostAsFaulty operation-"),
    ("nope", {}, "not_found", "was not reported (not_found): reading the VM: not found (404)"),
    ("mega-0", {"forbidden_projects": ["proj-a"]}, "permission_denied",
     "permission denied (403): the credentials lack compute.instances.get"),
    ("mega-0", {"unauthorized": True}, "unauthenticated", "authentication failed (401)"),
])
def test_a_vm_that_does_not_qualify_is_one_outcome_and_nothing_is_sent(emu, tmp_path, vm, faults, outcome, expect):
    emu.set_faults(faults)
    rc, out, result = play(emu, tmp_path, vm=vm)
    assert rc == 0, out
    line = fatal_line(out)
    assert result["failed"] and result["outcome"] == outcome and not result["changed"]
    assert expect in line and ("was not reported (%s)" % outcome) in line, line
    assert "Traceback" not in out and TOKEN not in out
    assert sent(emu) == 0 and emu.reports() == []


@pytest.mark.parametrize("faults, outcome, expect, tries", [
    # the API's own refusals, where its view differs from what was read a moment before
    ({"report_error": {"status": 400, "code": "INSTANCE_SHOULD_BE_RUNNING"}}, "not_running",
     "sending the report: HTTP 400: INSTANCE_SHOULD_BE_RUNNING", 1),
    ({"report_error": {"status": 400, "code": "MACHINE_TYPE_NOT_SUPPORTED"}}, "machine_type_not_supported",
     "MACHINE_TYPE_NOT_SUPPORTED", 1),
    ({"report_error": {"status": 400, "code": "INSTANCES_WITHOUT_RESERVATION_NOT_SUPPORTED"}},
     "not_reservation_bound", "INSTANCES_WITHOUT_RESERVATION_NOT_SUPPORTED", 1),
    ({"report_error": {"status": 400, "message": "Invalid value for field 'resource'"}}, "invalid", "HTTP 400", 1),
    ({"forbidden_reports": ["proj-a"]}, "permission_denied",
     "permission denied (403): the credentials lack compute.instances.reportHostAsFaulty", 1),
    ({"report_error": {"status": 404, "message": "The resource was not found"}}, "not_found", "not found (404)", 1),
    ({"report_error": {"status": 409, "code": "FAILED_WITH_UNEXPECTED_STATUS"}}, "in_flight", "HTTP 409", 1),
    ({"report_error": {"status": 409, "message": "The resource is not ready"}}, "conflict", "HTTP 409", 1),
    ({"report_error": {"status": 412, "message": "Condition not met"}}, "precondition_failed", "HTTP 412", 1),
    # 429 is one of the two answers (with 503) that say the request was not acted on: retried 3 times, then one line
    ({"report_error": {"status": 429, "code": "RATE_LIMIT_EXCEEDED"}}, "rate_limited", "RATE_LIMIT_EXCEEDED", 4),
    # a 500 may have been acted on: never sent again
    ({"report_error": {"status": 500, "message": "Internal error"}}, "unavailable", "HTTP 500", 1),
])
def test_each_documented_refusal_of_the_report_is_one_outcome_never_retried_blindly(
        emu, tmp_path, faults, outcome, expect, tries):
    emu.set_faults(faults)
    rc, out, result = play(emu, tmp_path)
    assert rc == 0, out
    line = fatal_line(out)
    assert result["outcome"] == outcome and result["failed"], line
    assert expect in line and "instance mega-0 (project proj-a, zone us-central1-a)" in line, line
    assert sent(emu) == tries and emu.reports() == []
    assert "Traceback" not in out and TOKEN not in out


def test_an_operation_that_ends_with_an_error_is_its_outcome(emu, tmp_path):
    emu.set_faults({"operation_error": {"code": "INTERNAL_ERROR", "message": "Internal error. Please try again."}})
    rc, out, result = play(emu, tmp_path)
    assert rc == 0, out
    line = fatal_line(out)
    assert result["outcome"] == "operation_error" and result["changed"] and result["operation_status"] == "DONE"
    assert "ended with an error after" in line and "INTERNAL_ERROR: Internal error. Please try again." in line
    assert sent(emu) == 1


def test_an_operation_past_wait_s_times_out_and_the_next_run_finds_it_in_flight(emu, tmp_path):
    emu.set_faults({"operation_ms": {"pending": 50, "running": 60000}})
    rc, out, result = play(emu, tmp_path, "-e", "wait_s=1")
    assert rc == 0, out
    assert result["outcome"] == "timed_out" and result["operation_status"] == "RUNNING" and result["changed"]
    assert 1 <= result["elapsed_s"] < 10
    assert "is still RUNNING after" in fatal_line(out) and "not sent again" in fatal_line(out)
    rc, out, again = play(emu, tmp_path)
    assert again["outcome"] == "in_flight" and result["operation"] in fatal_line(out)
    assert sent(emu) == 1 and len(emu.reports()) == 1


BEHAVIOR_PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Report, the behavior from the finding
      gpudirect.gcp.gce_report_faulty_host:
        instance: mega-0
        project: proj-a
        zone: us-central1-a
        finding: {component: gpu, subject: GPU 3, cause: "row remapping failed: the GPU's memory has no spare rows left"}
        description: gpu GPU 3
      check_mode: true
      register: from_finding
    - name: Report, the option over the finding
      gpudirect.gcp.gce_report_faulty_host:
        instance: mega-0
        project: proj-a
        zone: us-central1-a
        behavior: SILENT_DATA_CORRUPTION
        finding: {component: gpu, subject: GPU 3, cause: "row remapping failed"}
        description: gpu GPU 3
      check_mode: true
      register: from_option
    - name: A wait that cannot be
      gpudirect.gcp.gce_report_faulty_host:
        instance: mega-0
        project: proj-a
        zone: us-central1-a
        description: x
        wait_s: -1
      register: bad_wait
      ignore_errors: true
    - name: Show
      ansible.builtin.debug:
        msg: "RESULT={{ {'finding': from_finding, 'option': from_option, 'bad_wait': bad_wait} | to_json }}"
"""


def test_the_behavior_comes_from_the_finding_unless_the_option_gives_it(emu, tmp_path):
    book = tmp_path / "behavior.yml"
    book.write_text(BEHAVIOR_PLAY)
    rc, out, result = _playbook_result.run(
        ["-i", "localhost,", "-c", "local", book],
        dict(GCP_COMPUTE_API_ENDPOINT=emu.url, GCP_AUTH_KIND="accesstoken", GCP_ACCESS_TOKEN=TOKEN))
    assert rc == 0, out
    finding, option = result["finding"], result["option"]
    assert finding["request"]["body"]["faultReasons"][0]["behavior"] == "UNRECOVERABLE_GPU_ERROR"
    assert finding["behavior_from"] == "finding (unrecoverable_gpu_error)"
    assert option["request"]["body"]["faultReasons"][0]["behavior"] == "SILENT_DATA_CORRUPTION"
    assert option["behavior_from"] == "option"
    assert result["bad_wait"]["failed"] and result["bad_wait"]["msg"] == (
        "gce_report_faulty_host: wait_s is -1; it must be 0 (do not follow the operation) or more")
    assert sent(emu) == 0


@pytest.mark.parametrize("vm, extra, expect", [
    ("mega-0", ["-e", "behavior=BROKEN"], "behavior"),
    ("../x", [], "gce_report_faulty_host: instance '../x' is not a valid GCE instance name"),
    # each would send the POST to another resource, or none, if it reached the URL as it is
    ("..", [], "instance '..' is not a valid GCE instance name"),
    ("mega-0?x=1", [], "instance 'mega-0?x=1' is not a valid GCE instance name"),
    ("mega-0#frag", [], "instance 'mega-0#frag' is not a valid GCE instance name"),
    ("Mega-0", [], "instance 'Mega-0' is not a valid GCE instance name"),
])
def test_bad_options_are_one_line_and_nothing_is_read_or_sent(emu, tmp_path, vm, extra, expect):
    rc, out, _result = play(emu, tmp_path, *extra, vm=vm)
    assert rc == 0, out
    assert expect in fatal_line(out)
    assert "Traceback" not in out and TOKEN not in out
    assert emu.stats()["api"] == 0 and emu.reports() == []


def test_the_request_body_is_what_the_api_was_sent(emu, tmp_path):
    _rc, _out, dry = play(emu, tmp_path, "--check")
    rc, out, _result = play(emu, tmp_path)
    assert rc == 0, out
    assert json.dumps(emu.reports()[0]["body"], sort_keys=True) == json.dumps(dry["request"]["body"], sort_keys=True)
