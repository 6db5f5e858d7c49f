# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Google's rules for instances.reportHostAsFaulty, as the action gce_report_faulty_host follows them.

Google's "Report faulty host" guide and its troubleshooting page for the API say: a VM qualifies only
while it is RUNNING, on a machine type the method accepts (the family table's faulty_host_report), and
provisioned reservation-bound (scheduling.provisioningModel RESERVATION_BOUND; flex-start and spot VMs
go through the account team). A second report while one is in progress for the VM is refused; the
operation takes minutes, and the VM is stopped and restarted on another host when it ends. Each error
the troubleshooting page names (its codes in OUTCOMES) and each HTTP refusal is one outcome here.

Plain functions over plain data: the action does the calls.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils import families

# faultReasons[].behavior values of the method
BEHAVIORS = ("PERFORMANCE", "SILENT_DATA_CORRUPTION", "UNRECOVERABLE_GPU_ERROR", "BEHAVIOR_UNSPECIFIED")

# The behavior a finding is reported with: the first row whose component (None: any) and cause pattern
# match; the last row takes every other finding. kind: the row's name in the result (behavior_from).
BEHAVIOR_RULES = (
    {"kind": "silent_data_corruption", "behavior": "SILENT_DATA_CORRUPTION", "components": None,
     "cause": r"\bwrong (?:data|elements?|results?)\b|silent(?:ly)? (?:data )?corrupt|\bdata corruption\b",
     "why": "results came back wrong with no error (a data check found wrong elements)"},
    {"kind": "performance", "behavior": "PERFORMANCE", "components": None,
     "cause": r"\bbusbw\b|\bslow|clocks held back|\bbelow the family\b|\bthrottl",
     "why": "the host works, but too slowly: collectives below the family's bar, clocks held back"},
    {"kind": "unrecoverable_gpu_error", "behavior": "UNRECOVERABLE_GPU_ERROR", "components": ("gpu",),
     "cause": r"\bXid \d+|row remapping failed|fallen off the bus|gone from the host|uncorrect|\bECC\b",
     "why": "a GPU error the GPU does not recover from (an Xid that needs Google, failed row remapping, a GPU "
            "gone from the bus)"},
    {"kind": "performance", "behavior": "PERFORMANCE", "components": None, "cause": r"",
     "why": "any other fault of the host: NIC peers unreachable, RDMA links flapping"},
)

# Every way a report can end: code -> (whether the task fails, what it means). The codes in capitals
# that the troubleshooting page documents map onto these in DOCUMENTED_CODES.
OUTCOMES = {
    "reported": (False, "the operation ended without an error: Google repairs the host; the VM restarts"),
    "dry_run": (False, "check mode: the VM qualifies (or could not be read: see the warning); nothing sent"),
    "not_running": (True, "the VM is not RUNNING; Google takes reports of running VMs only"),
    "machine_type_not_supported": (True, "the VM's machine type is not one the method accepts"),
    "not_reservation_bound": (True, "the VM is not reservation-bound; for flex-start or spot VMs Google "
                                    "takes reports through the account team"),
    "in_flight": (True, "an operation on the VM is in progress; Google refuses a report until it ends"),
    "invalid": (True, "HTTP 400: the API refused the request as invalid"),
    "unauthenticated": (True, "HTTP 401: the credentials were rejected"),
    "permission_denied": (True, "HTTP 403: the credentials lack a permission"),
    "not_found": (True, "HTTP 404: the VM (or its project or zone) does not exist"),
    "conflict": (True, "HTTP 409: the VM is busy with another request"),
    "precondition_failed": (True, "HTTP 412: a condition of the request was not met"),
    "rate_limited": (True, "HTTP 429 or RATE_LIMIT_EXCEEDED: too many reports, or no capacity to take this one"),
    "unavailable": (True, "HTTP 5xx: the API could not take the request"),
    "operation_error": (True, "the operation ended with an error"),
    "timed_out": (True, "the operation had not ended within wait_s; it goes on at Google (never sent again)"),
    "error": (True, "the API could not be reached, or answered what it does not document"),
}

# The error codes Google's troubleshooting page for the API documents, in an HTTP error's message or a
# finished operation's error.errors[].code
DOCUMENTED_CODES = {
    "INSTANCE_SHOULD_BE_RUNNING": "not_running",
    "MACHINE_TYPE_NOT_SUPPORTED": "machine_type_not_supported",
    "INSTANCES_WITHOUT_RESERVATION_NOT_SUPPORTED": "not_reservation_bound",
    "FAILED_WITH_UNEXPECTED_STATUS": "in_flight",
    "FAULT_REASONS_EMPTY_SHOULD_BE_SPECIFIED": "invalid",
    "RATE_LIMIT_EXCEEDED": "rate_limited",
    "INTERNAL_ERROR": "operation_error",
}

STATUS_OUTCOMES = {400: "invalid", 401: "unauthenticated", 403: "permission_denied", 404: "not_found",
                   409: "conflict", 412: "precondition_failed", 429: "rate_limited", 500: "unavailable",
                   502: "unavailable", 503: "unavailable", 504: "unavailable"}

PROVISIONING = "RESERVATION_BOUND"
# The instance fields the qualification reads
INSTANCE_FIELDS = "name,status,machineType,selfLink,scheduling(provisioningModel)"
OPERATION_FIELDS = "items(name,operationType,status,targetLink,insertTime),nextPageToken"
# Polling the operation: the first look after POLL_FIRST_S, then twice as long each time up to POLL_MAX_S
POLL_FIRST_S = 0.25
POLL_MAX_S = 10.0
# how often -v says the operation is still at the same status
PROGRESS_EVERY_S = 60.0


def failed(outcome):
    return OUTCOMES[outcome][0]


def behavior_from(finding):
    """(behavior, kind) of a finding ({component, subject, cause, ...}), by the first BEHAVIOR_RULES row that
    matches it."""
    finding = finding if isinstance(finding, dict) else {}
    component = finding.get("component")
    text = "%s %s" % (finding.get("subject") or "", finding.get("cause") or "")
    for rule in BEHAVIOR_RULES:
        if rule["components"] is not None and component not in rule["components"]:
            continue
        if re.search(rule["cause"], text, re.I):
            return rule["behavior"], rule["kind"]
    raise AssertionError("the last BEHAVIOR_RULES row takes every finding")


def family_accepts(machine_type):
    """The family of a machine type (name or URL) when the method accepts it, else None."""
    name = families.family_for_machine_type(machine_type)
    return name if name and families.FAMILIES[name].get("faulty_host_report") else None


def qualify(instance):
    """None when the VM qualifies for a report, else (outcome, why in words)."""
    status = instance.get("status") or "unknown"
    if status != "RUNNING":
        return "not_running", "the VM is %s, not RUNNING" % status
    machine_type = families.machine_type_name(instance.get("machineType")) or "unknown"
    if not family_accepts(machine_type):
        accepted = sorted(f["machine_type"] for f in families.FAMILIES.values() if f.get("faulty_host_report"))
        return "machine_type_not_supported", "machine type %s is not one the method accepts (%s)" % (
            machine_type, ", ".join(accepted))
    model = (instance.get("scheduling") or {}).get("provisioningModel") or "STANDARD"
    if model != PROVISIONING:
        extra = "; Google takes reports of %s VMs through the account team" % model \
            if model in ("SPOT", "FLEX_START") else ""
        return "not_reservation_bound", "provisioning model %s, not %s%s" % (model, PROVISIONING, extra)
    return None


def in_flight_filter(target_link):
    """The zoneOperations.list filter for the operations on one VM that have not ended."""
    return '(targetLink = "%s") AND (status != "DONE")' % target_link


def in_flight(operations, target_link):
    """The operations of a listing that are on the VM and not DONE (the filter again: a server may ignore it)."""
    return [op for op in operations or [] if isinstance(op, dict) and op.get("targetLink") == target_link
            and op.get("status") != "DONE"]


def documented_code(text):
    """The first code of DOCUMENTED_CODES that text names, or None."""
    for code in DOCUMENTED_CODES:
        if code in (text or ""):
            return code
    return None


def outcome_of_error(status, text):
    """The outcome of a refused call: a documented code in its message first, then its HTTP status."""
    code = documented_code(text)
    if code:
        return DOCUMENTED_CODES[code]
    return STATUS_OUTCOMES.get(status, "error") if status else "error"


def operation_error(operation):
    """(outcome, one line) of a finished operation's error, or None when it ended well."""
    errors = ((operation.get("error") or {}).get("errors") or []) if isinstance(operation, dict) else []
    if not errors and not operation.get("httpErrorStatusCode"):
        return None
    parts = ["%s%s" % (e.get("code") or "?", (": " + " ".join(str(e.get("message")).split()))
                       if e.get("message") else "") for e in errors if isinstance(e, dict)]
    text = "; ".join(parts) or "HTTP %s %s" % (operation.get("httpErrorStatusCode"),
                                               operation.get("httpErrorMessage") or "")
    code = documented_code(text)
    return (DOCUMENTED_CODES[code] if code and DOCUMENTED_CODES[code] != "operation_error" else "operation_error",
            text[:300])


def follow(read, operation, wait_s, say=None, clock=time.monotonic, sleep=time.sleep):
    """Follow an operation until it is DONE or wait_s has passed: (last operation read, seconds waited).

    read(name) returns the operation as the API has it now; say(line) hears each change of status and,
    PROGRESS_EVERY_S apart, that it has not changed."""
    say = say or (lambda line: None)
    started = clock()
    deadline = started + wait_s
    delay = POLL_FIRST_S
    last_status, last_said = None, started
    while True:
        status = operation.get("status") or "unknown"
        now = clock()
        if status != last_status or now - last_said >= PROGRESS_EVERY_S:
            say("operation %s: %s after %.0f s%s" % (operation.get("name"), status, now - started,
                                                     (", progress %s%%" % operation["progress"])
                                                     if operation.get("progress") is not None else ""))
            last_status, last_said = status, now
        if status == "DONE" or now >= deadline:
            return operation, now - started
        sleep(min(delay, max(0.0, deadline - now)))
        delay = min(POLL_MAX_S, delay * 2)
        operation = read(operation["name"])
