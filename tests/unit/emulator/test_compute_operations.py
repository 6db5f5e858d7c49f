# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulator's stand-in of reportHostAsFaulty: instances.get with the instance's status, the operation's
lifecycle (PENDING, RUNNING, DONE over a short time), zoneOperations.list filtered by targetLink and status,
and the refusals Google documents."""

import json
import os
import sys
import time
from urllib.error import HTTPError
from urllib.parse import quote
from urllib.request import Request, urlopen

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))

import compute_fleet as fx  # noqa: E402
import compute_harness as harness  # noqa: E402

pytestmark = pytest.mark.emulator
BASE = "/compute/v1/projects/proj-a/zones/us-central1-a/"
BODY = {"disruptionSchedule": "IMMEDIATE", "faultReasons": [{"behavior": "PERFORMANCE", "description": "slow"}]}


def call(emu, path, body=None):
    """(status, JSON) of one API call with a bearer token."""
    data = None if body is None else json.dumps(body).encode()
    req = Request(emu.url + path, data=data, method="POST" if data is not None else "GET",
                  headers={"Authorization": "Bearer test", "Content-Type": "application/json"})
    try:
        with urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read().decode())
    except HTTPError as exc:
        return exc.code, json.loads(exc.read().decode())


@pytest.fixture
def emu():
    fleet = {"projects": {"proj-a": {"instances": [
        fx.gpu_instance("mega-0", "a3-mega", prefix="mega", provisioning_model="RESERVATION_BOUND"),
        fx.gpu_instance("mega-1", "a3-mega", prefix="mega", index=1, provisioning_model="RESERVATION_BOUND",
                        status="TERMINATED"),
        fx.gpu_instance("mega-2", "a3-mega", prefix="mega", index=2),
    ]}}}
    with harness.ThreadEmulator(fleet) as emulator:
        emulator.set_faults({"operation_ms": {"pending": 150, "running": 300}})
        yield emulator


def in_flight(emu, vm):
    link = "https://www.googleapis.com/compute/v1/projects/proj-a/zones/us-central1-a/instances/" + vm
    text = '(targetLink = "%s") AND (status != "DONE")' % link
    return call(emu, BASE + "operations?filter=" + quote(text))[1]["items"]


def test_an_operation_goes_pending_running_done_and_leaves_the_in_flight_list(emu):
    code, op = call(emu, BASE + "instances/mega-0/reportHostAsFaulty", BODY)
    assert code == 200 and op["status"] == "PENDING" and op["operationType"] == "reportHostAsFaulty"
    assert op["targetLink"].endswith("/zones/us-central1-a/instances/mega-0")
    assert [o["name"] for o in in_flight(emu, "mega-0")] == [op["name"]] and in_flight(emu, "mega-1") == []
    time.sleep(0.2)
    assert call(emu, BASE + "operations/" + op["name"])[1]["status"] == "RUNNING"
    time.sleep(0.35)
    done = call(emu, BASE + "operations/" + op["name"])[1]
    assert done["status"] == "DONE" and done["progress"] == 100 and "error" not in done
    assert done["insertTime"] <= done["startTime"] <= done["endTime"]
    assert in_flight(emu, "mega-0") == []
    # never answered from the GET cache
    assert call(emu, BASE + "operations?fields=items(name,status)")[1] == {
        "items": [{"name": op["name"], "status": "DONE"}]}


def test_a_second_report_while_one_runs_is_refused_and_recorded_once(emu):
    first = call(emu, BASE + "instances/mega-0/reportHostAsFaulty", BODY)[1]
    code, body = call(emu, BASE + "instances/mega-0/reportHostAsFaulty", BODY)
    assert code == 409 and body["error"]["message"].startswith("FAILED_WITH_UNEXPECTED_STATUS")
    assert first["name"] in body["error"]["message"]
    assert len(emu.reports()) == 1


@pytest.mark.parametrize("vm, faults, code, words", [
    ("mega-1", {}, 400, "INSTANCE_SHOULD_BE_RUNNING"),
    ("mega-2", {}, 400, "INSTANCES_WITHOUT_RESERVATION_NOT_SUPPORTED"),
    ("mega-0", {"report_error": {"status": 400, "code": "MACHINE_TYPE_NOT_SUPPORTED"}}, 400,
     "MACHINE_TYPE_NOT_SUPPORTED"),
    ("mega-0", {"report_error": {"status": 429, "code": "RATE_LIMIT_EXCEEDED"}}, 429, "RATE_LIMIT_EXCEEDED"),
    ("mega-0", {"forbidden_reports": ["proj-a"]}, 403, "compute.instances.reportHostAsFaulty"),
    ("mega-0", {"busy_instances": {"mega-0": "stop"}}, 409, "FAILED_WITH_UNEXPECTED_STATUS"),
])
def test_the_documented_refusals(emu, vm, faults, code, words):
    emu.set_faults(faults)
    got, body = call(emu, BASE + "instances/%s/reportHostAsFaulty" % vm, BODY)
    assert got == code and words in body["error"]["message"]
    assert emu.reports() == []


def test_an_empty_fault_reason_list_is_refused_as_google_names_it(emu):
    code, body = call(emu, BASE + "instances/mega-0/reportHostAsFaulty", dict(BODY, faultReasons=[]))
    assert code == 400 and body["error"]["message"] == "FAULT_REASONS_EMPTY_SHOULD_BE_SPECIFIED"


def test_a_seeded_operation_error_comes_with_the_finished_operation(emu):
    emu.set_faults({"operation_ms": {"pending": 0, "running": 0}, "operation_error": {"code": "INTERNAL_ERROR"}})
    op = call(emu, BASE + "instances/mega-0/reportHostAsFaulty", BODY)[1]
    assert op["status"] == "DONE" and op["error"]["errors"][0]["code"] == "INTERNAL_ERROR"
    assert op["httpErrorStatusCode"] == 500


def test_instances_get_gives_the_status_and_honours_fields(emu):
    code, body = call(emu, BASE + "instances/mega-1?fields=name,status,scheduling(provisioningModel)")
    assert code == 200 and body == {"name": "mega-1", "status": "TERMINATED",
                                    "scheduling": {"provisioningModel": "RESERVATION_BOUND"}}
    assert call(emu, BASE + "instances/nope")[0] == 404
    assert emu.stats()["by_kind"]["instance_get"] == 2


def test_a_busy_instance_has_an_operation_that_never_ends(emu):
    emu.set_faults({"busy_instances": {"mega-0": "stop"}, "operation_ms": {"pending": 0, "running": 0}})
    (op,) = in_flight(emu, "mega-0")
    assert op["operationType"] == "stop" and op["status"] == "RUNNING"
