# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Google's rules for reportHostAsFaulty: the behavior table, the qualification, the outcomes, the follow loop."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import faulty_host as fh

RB = "RESERVATION_BOUND"


def vm(family="a3-mega", status="RUNNING", model=RB):
    out = {"name": "vm-1", "status": status, "selfLink": "https://x/vm-1",
           "machineType": "https://www.googleapis.com/compute/v1/projects/p/zones/z/machineTypes/%s"
                          % families.FAMILIES[family]["machine_type"]}
    if model is not None:
        out["scheduling"] = {"provisioningModel": model}
    return out


@pytest.mark.parametrize("finding, behavior", [
    # the causes the collection's checks write, each as its check spells it
    ({"component": "gpu", "subject": "GPU 3", "cause": "Xid 64 (GPU memory row remapping (or page retirement) "
      "failed) since boot"}, "UNRECOVERABLE_GPU_ERROR"),
    ({"component": "gpu", "subject": "GPU 3", "cause": "row remapping failed: the GPU's memory has no spare rows "
      "left"}, "UNRECOVERABLE_GPU_ERROR"),
    ({"component": "gpu", "subject": "GPUs", "cause": "7 GPU(s) on the PCI bus, the family has 8: a GPU is gone "
      "from the host"}, "UNRECOVERABLE_GPU_ERROR"),
    ({"component": "gpu", "subject": "GPU 1", "cause": "clocks held back: hw_slowdown active"}, "PERFORMANCE"),
    ({"component": "fabric", "subject": "busbw", "cause": "NCCL busbw below the family baseline in pairwise tests"},
     "PERFORMANCE"),
    ({"component": "nic", "subject": "gpu0rdma0", "cause": "GPU NIC gpu0rdma0 fails to reach 7 of 7 peers"},
     "PERFORMANCE"),
    ({"component": "fabric", "subject": "all_gather", "cause": "all_gather at 1048576 B: 12 wrong elements (out of "
      "place 12, in place 0)"}, "SILENT_DATA_CORRUPTION"),
    ({"component": "rdma", "subject": "mlx5_0 port 1", "cause": "flapping: link downed 3 times in 60s"},
     "PERFORMANCE"),
    (None, "PERFORMANCE"),
])
def test_each_finding_maps_to_the_behavior_of_its_row(finding, behavior):
    assert fh.behavior_from(finding)[0] == behavior


def test_every_row_names_a_behavior_the_method_takes():
    assert all(rule["behavior"] in fh.BEHAVIORS for rule in fh.BEHAVIOR_RULES)
    assert fh.BEHAVIOR_RULES[-1]["cause"] == "" and fh.BEHAVIOR_RULES[-1]["components"] is None


def test_a_new_row_reaches_the_mapping(monkeypatch):
    row = {"kind": "nvlink_down", "behavior": "BEHAVIOR_UNSPECIFIED", "components": ("gpu",), "cause": r"NVLink",
           "why": "throwaway"}
    monkeypatch.setattr(fh, "BEHAVIOR_RULES", (row,) + fh.BEHAVIOR_RULES)
    assert fh.behavior_from({"component": "gpu", "subject": "GPU 0", "cause": "NVLink 3 down"}) == (
        "BEHAVIOR_UNSPECIFIED", "nvlink_down")
    # its component limit holds
    assert fh.behavior_from({"component": "nic", "subject": "x", "cause": "NVLink"})[1] == "performance"


@pytest.mark.parametrize("name", sorted(families.FAMILIES))
def test_the_machine_types_accepted_are_the_family_tables(name):
    refusal = fh.qualify(vm(name))
    # Google's list: A4X Max, A4X, A4, A3 Ultra, A3 Mega, A3 High (8 GPUs); not A3 Edge
    if name == "a3-edge":
        assert refusal[0] == "machine_type_not_supported" and "a3-edgegpu-8g is not one" in refusal[1]
    else:
        assert refusal is None


def test_a_family_added_to_the_table_is_accepted_by_its_field(monkeypatch):
    monkeypatch.setitem(families.FAMILIES, "a9", dict(families.FAMILIES["a4"], machine_type="a9-highgpu-8g",
                                                      faulty_host_report=True))
    monkeypatch.setitem(families.MACHINE_TYPES, "a9-highgpu-8g", "a9")
    assert fh.qualify(dict(vm("a4"), machineType="zones/z/machineTypes/a9-highgpu-8g")) is None
    monkeypatch.setitem(families.FAMILIES, "a9", dict(families.FAMILIES["a9"], faulty_host_report=False))
    assert fh.qualify(dict(vm("a4"), machineType="a9-highgpu-8g"))[0] == "machine_type_not_supported"


@pytest.mark.parametrize("instance, outcome, words", [
    (vm(status="TERMINATED"), "not_running", "the VM is TERMINATED, not RUNNING"),
    (vm(status="REPAIRING"), "not_running", "REPAIRING"),
    (dict(vm(), status=None), "not_running", "unknown"),
    (vm(model="SPOT"), "not_reservation_bound", "SPOT VMs through the account team"),
    (vm(model="FLEX_START"), "not_reservation_bound", "FLEX_START VMs through the account team"),
    (vm(model=None), "not_reservation_bound", "provisioning model STANDARD, not RESERVATION_BOUND"),
    (dict(vm(), machineType="zones/z/machineTypes/n2-standard-8"), "machine_type_not_supported", "n2-standard-8"),
    (dict(vm(), machineType=None), "machine_type_not_supported", "machine type unknown"),
])
def test_a_vm_that_does_not_qualify_says_why(instance, outcome, words):
    got = fh.qualify(instance)
    assert got[0] == outcome and words in got[1], got


def test_in_flight_operations_are_those_on_the_vm_not_done():
    link = "https://www.googleapis.com/compute/v1/projects/p/zones/z/instances/vm-1"
    assert fh.in_flight_filter(link) == '(targetLink = "%s") AND (status != "DONE")' % link
    ops = [{"name": "a", "targetLink": link, "status": "RUNNING"}, {"name": "b", "targetLink": link, "status": "DONE"},
           {"name": "c", "targetLink": link + "0", "status": "PENDING"}, "junk"]
    assert [op["name"] for op in fh.in_flight(ops, link)] == ["a"]


@pytest.mark.parametrize("status, text, outcome", [
    (400, "HTTP 400: INSTANCE_SHOULD_BE_RUNNING", "not_running"),
    (409, "HTTP 409: FAILED_WITH_UNEXPECTED_STATUS", "in_flight"),
    (429, "HTTP 429: slow down", "rate_limited"),
    (400, "HTTP 400: RATE_LIMIT_EXCEEDED", "rate_limited"),
    (412, "HTTP 412", "precondition_failed"),
    (403, "permission denied (403)", "permission_denied"),
    (418, "HTTP 418", "error"),
    (None, "connection refused", "error"),
])
def test_a_refusal_is_its_documented_code_first_then_its_status(status, text, outcome):
    assert fh.outcome_of_error(status, text) == outcome


def test_every_outcome_a_mapping_names_is_in_the_outcome_table():
    named = set(fh.DOCUMENTED_CODES.values()) | set(fh.STATUS_OUTCOMES.values())
    assert named <= set(fh.OUTCOMES)
    assert [o for o in fh.OUTCOMES if not fh.failed(o)] == ["reported", "dry_run"]


def test_a_new_documented_code_reaches_refusals_and_operation_errors(monkeypatch):
    monkeypatch.setitem(fh.OUTCOMES, "quota", (True, "throwaway"))
    monkeypatch.setitem(fh.DOCUMENTED_CODES, "QUOTA_EXCEEDED", "quota")
    assert fh.outcome_of_error(400, "HTTP 400: QUOTA_EXCEEDED") == "quota" and fh.failed("quota")
    op = {"status": "DONE", "error": {"errors": [{"code": "QUOTA_EXCEEDED", "message": "no"}]}}
    assert fh.operation_error(op) == ("quota", "QUOTA_EXCEEDED: no")


def test_a_finished_operations_error_is_one_line():
    assert fh.operation_error({"status": "DONE"}) is None
    op = {"status": "DONE", "error": {"errors": [{"code": "INTERNAL_ERROR", "message": "Internal\n error."},
                                                 {"code": "OTHER"}]}}
    assert fh.operation_error(op) == ("operation_error", "INTERNAL_ERROR: Internal error.; OTHER")
    assert fh.operation_error({"status": "DONE", "httpErrorStatusCode": 503, "httpErrorMessage": "SERVICE "
                               "UNAVAILABLE"}) == ("operation_error", "HTTP 503 SERVICE UNAVAILABLE")
    assert fh.operation_error({"error": {"errors": [{"code": "INSTANCE_SHOULD_BE_RUNNING"}]}})[0] == "not_running"


class Clock(object):
    def __init__(self):
        self.now = 0.0
        self.slept = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_follow_polls_with_backoff_until_done_and_says_each_change():
    clock = Clock()
    states = iter(["PENDING", "RUNNING", "RUNNING", "RUNNING", "DONE"])
    lines = []
    last, took = fh.follow(lambda name: {"name": name, "status": next(states)}, {"name": "op-1", "status": "PENDING"},
                           900, say=lines.append, clock=clock, sleep=clock.sleep)
    assert last["status"] == "DONE" and took == sum(clock.slept)
    assert clock.slept == [0.25, 0.5, 1.0, 2.0, 4.0]
    assert [line.split(": ")[1].split()[0] for line in lines] == ["PENDING", "RUNNING", "DONE"]
    assert lines[-1] == "operation op-1: DONE after 8 s"


def test_follow_gives_up_at_wait_s_and_says_it_is_still_running_every_minute():
    clock = Clock()
    lines = []
    reads = []

    def read(name):
        reads.append(name)
        return {"name": name, "status": "RUNNING", "progress": 0}

    last, took = fh.follow(read, {"name": "op-1", "status": "RUNNING", "progress": 0}, 150, say=lines.append, clock=clock,
                           sleep=clock.sleep)
    assert last["status"] == "RUNNING" and took == 150
    assert max(clock.slept) == fh.POLL_MAX_S
    assert [line for line in lines if "RUNNING" in line][0] == "operation op-1: RUNNING after 0 s, progress 0%"
    assert len(lines) == 3  # at 0 s, then a minute apart


def test_follow_at_once_when_done():
    clock = Clock()
    last, took = fh.follow(None, {"name": "op-1", "status": "DONE"}, 900, clock=clock, sleep=clock.sleep)
    assert last["status"] == "DONE" and took == 0 and clock.slept == []
