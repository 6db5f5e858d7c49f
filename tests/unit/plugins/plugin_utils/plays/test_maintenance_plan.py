# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The maintenance planner: scheduled, cancelled, rescheduled, done and foreign-owned events give one action
each from one table; a node is never drained twice, never left drained after a cancel, and a person's drain is
never resumed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import itertools

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.filter import maintenance as maintenance_filter
from ansible_collections.gpudirect.gcp.plugins.module_utils.host import maintenance
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import maintenance_plan as mp

NOW = maintenance.timestamp("2026-03-02T00:00:00Z")
LEAD = 4 * 3600
IDLE = {"node": "n1", "states": ["idle"], "out": False, "reason": "", "reason_user": ""}


def stamp(hours):
    return mp._stamp(NOW + hours * 3600)


def api(hours, end_hours=None, status="PENDING", kind="SCHEDULED"):
    """The API's upcomingMaintenance (camel case) for a window starting in hours."""
    return {"upcoming": {"type": kind, "maintenanceStatus": status, "windowStartTime": stamp(hours),
                         "windowEndTime": stamp(end_hours if end_hours is not None else hours + 4),
                         "canReschedule": True}, "error": None}


QUIET = {"upcoming": None, "error": None}


def drained(reason, user="root"):
    return {"node": "n1", "states": ["drained"], "out": True, "reason": reason, "reason_user": user}


def plan(**inputs):
    inputs.setdefault("slurm", IDLE)
    inputs.setdefault("api", QUIET)
    return mp.plan("n1", NOW, LEAD, **inputs)


def ours_after_drain(hours=2):
    """The Slurm record and the role's record after a drain for an event starting in hours."""
    first = plan(api=api(hours))
    assert first["action"] == "drain"
    return drained("%s %s" % (mp.OWNER, first["reason"])), first["record"]


def test_a_scheduled_event_within_the_lead_time_is_drained_with_its_window():
    out = plan(api=api(2, 6))
    assert (out["row"], out["action"], out["record_change"]) == ("due", "drain", True)
    assert out["reason"] == "SCHEDULED host maintenance, window %s to %s (drained 4 h ahead)" % (stamp(2), stamp(6))
    assert out["record"]["key"] == "SCHEDULED %s" % stamp(2) and out["record"]["drained_at"] == stamp(0)


def test_a_scheduled_event_beyond_the_lead_time_waits():
    out = plan(api=api(5))
    assert (out["row"], out["action"]) == ("scheduled", "none")
    assert "beyond the lead time of 4 h" in out["why"]


def test_metadata_alone_tells_the_event_and_under_way_maintenance():
    metadata = {"event": "NONE", "error": None,
                "upcoming": maintenance.normalize_upcoming({"maintenance_status": "PENDING", "type": "SCHEDULED",
                                                            "window_start_time": stamp(1)})}
    assert plan(api=None, metadata=metadata)["action"] == "drain"
    under_way = dict(metadata, event="TERMINATE_ON_HOST_MAINTENANCE", upcoming=None)
    slurm, record = ours_after_drain()
    out = plan(api=None, metadata=under_way, slurm=slurm, record=record)
    assert (out["row"], out["action"]) == ("under_way", "hold")


def test_never_drained_twice_for_the_same_event():
    slurm, record = ours_after_drain()
    again = plan(api=api(2), slurm=slurm, record=record)
    assert (again["row"], again["action"], again["record_change"]) == ("still_due", "hold", False)
    # someone returned the node: the same event does not drain it again
    returned = plan(api=api(2), record=record)
    assert (returned["row"], returned["action"]) == ("returned", "none")
    # a new event (another window) does
    assert plan(api=api(3), record=record)["action"] == "drain"


def test_a_cancelled_event_returns_the_node_at_once():
    slurm, record = ours_after_drain()
    out = plan(api=QUIET, slurm=slurm, record=record)
    assert (out["row"], out["action"], out["record"], out["owner"]) == ("cancelled", "resume", None, mp.OWNER)
    # the record lost: the window is read back from the drain reason
    assert plan(api=QUIET, slurm=slurm, record=None)["row"] == "cancelled"


def test_an_event_rescheduled_out_of_the_lead_window_returns_the_node():
    slurm, record = ours_after_drain()
    out = plan(api=api(30), slurm=slurm, record=record)
    assert (out["row"], out["action"]) == ("moved_out", "resume")
    # moved within the lead time: still drained, the record follows the new window
    held = plan(api=api(3), slurm=slurm, record=record)
    assert (held["row"], held["action"], held["record"]["window_start"]) == ("still_due", "hold", stamp(3))


def test_a_done_event_returns_the_node_only_after_a_passing_check():
    slurm, record = ours_after_drain(hours=-3)
    out = plan(api=QUIET, slurm=slurm, record=record)
    assert (out["row"], out["action"]) == ("done", "check")
    failed = plan(api=QUIET, slurm=slurm, record=record, check="fail", check_why="GPU 3 missing")
    assert (failed["row"], failed["action"]) == ("done_failed", "hold") and "GPU 3 missing" in failed["why"]
    passed = plan(api=QUIET, slurm=slurm, record=record, check="pass")
    assert (passed["row"], passed["action"], passed["record"]) == ("done_passed", "resume", None)


def test_a_persons_drain_is_reported_never_drained_over_nor_resumed():
    person = drained("RMA 4711: GPU 5 swapped", "alice")
    for upcoming in (api(2), api(30), QUIET):
        out = plan(api=upcoming, slurm=person)
        assert (out["row"], out["action"]) == ("not_ours", "report"), upcoming
        assert "alice" in out["why"] and "RMA 4711" in out["why"]
    # another part of the collection's drain is not this handling's either
    assert plan(api=QUIET, slurm=drained("gpudirect remediate: gpu GPU 3"))["action"] == "report"
    assert plan(api=QUIET, slurm=drained("gpudirect-upgrade upgrade_plugin"))["action"] == "report"


def test_a_slurm_maintenance_reservation_owns_the_event():
    text = ("ReservationName=n1_maintenance StartTime=2026-03-02T02:00:00 Nodes=n[1-2] Flags=MAINT,SPEC_NODES\n"
            "ReservationName=gpudirect-nccl-tests Nodes=n1 Flags=MAINT\n")
    reservations = mp.parse_reservations(text)
    out = plan(api=api(2), reservations=reservations)
    assert (out["row"], out["action"]) == ("reserved", "report") and "n1_maintenance" in out["why"]
    # the collection's own reservation, and one without the maint flag, are no other handler's
    assert plan(api=api(2), reservations=[reservations[1]])["action"] == "drain"
    assert plan(api=api(2), reservations=[{"name": "x", "nodes": ["n1"], "flags": []}])["action"] == "drain"


def test_the_node_agents_maintenance_drain_is_returned_as_ours():
    agent = drained("gpudirect: fail host maintenance: scheduled host maintenance in 1.0 h (window %s to %s): "
                    "drain the node before it starts" % (stamp(-1), stamp(3)))
    out = plan(api=QUIET, slurm=agent, check="pass")
    assert (out["action"], out["owner"]) == ("resume", "gpudirect")
    # with other failing findings it is the node check's drain: not ours
    assert plan(api=QUIET, slurm=drained(agent["reason"] + " (+1 more)"))["action"] == "report"


def test_nothing_read_changes_nothing():
    slurm, record = ours_after_drain()
    out = plan(api={"upcoming": None, "error": "HTTP 403"}, metadata=None, slurm=slurm, record=record)
    assert (out["row"], out["action"], out["record_change"]) == ("unread", "hold", False)
    assert "HTTP 403" in out["why"]


def test_a_node_slurm_does_not_list_is_left_alone():
    assert plan(api=api(1), slurm=None)["row"] == "unlisted"


# every situation the inputs can make: the invariants hold in each
SLURMS = [IDLE, drained("RMA", "alice"), drained(mp.OWNER + " SCHEDULED host maintenance, window %s to x" % stamp(2)),
          drained(mp.OWNER + " SCHEDULED host maintenance, window %s to x" % stamp(-2)), None]
EVENTS = [QUIET, api(1), api(2), api(30), api(-1, status="ONGOING"), {"upcoming": None, "error": "down"}]
RECORDS = [None, {"key": "SCHEDULED %s" % stamp(2), "window_start": stamp(2)}]
CHECKS = [None, "pass", "fail"]
RESERVED = [[], [{"name": "n1_maintenance", "nodes": ["n1"], "flags": ["maint"]}]]


@pytest.mark.parametrize("slurm,event,record,check,reservations",
                         list(itertools.product(SLURMS, EVENTS, RECORDS, CHECKS, RESERVED)))
def test_invariants(slurm, event, record, check, reservations):
    out = plan(slurm=slurm, api=event, record=record, check=check, reservations=reservations)
    assert out["action"] in mp.ACTIONS
    ours = bool(slurm and slurm["out"] and slurm["reason"].startswith(mp.OWNER + " "))
    # never drained twice, never a drained node drained over
    if slurm and slurm["out"]:
        assert out["action"] != "drain"
    # a person's drain is never resumed
    if out["action"] == "resume":
        assert ours
    # never left drained after a cancel (the event gone before its window)
    if ours and event is QUIET and "window %s" % stamp(2) in slurm["reason"] and record in (None, RECORDS[1]):
        assert out["action"] == "resume"
    # nothing read: nothing changes
    if event["error"]:
        assert out["action"] in ("hold", "none") and not out["record_change"]
    # a reservation of another handler: never drained by us
    if reservations:
        assert out["action"] != "drain"


def test_every_row_is_reachable_and_speaks_of_known_actions():
    assert len(set(mp.row_names())) == len(mp.ROWS)
    seen = set()
    for slurm, event, record, check, reservations in itertools.product(SLURMS, EVENTS, RECORDS, CHECKS, RESERVED):
        seen.add(plan(slurm=slurm, api=event, record=record, check=check, reservations=reservations)["row"])
    seen.add(plan(api=api(1.5), record={"key": "SCHEDULED %s" % stamp(1.5)})["row"])
    assert seen == set(mp.row_names())
    for _name, _test, action, record_rule, _why in mp.ROWS:
        assert action in mp.ACTIONS and record_rule in mp.RECORDS


def test_a_new_row_reaches_the_plan(monkeypatch):
    """A throwaway row ahead of the others decides, with its action, record rule and text."""
    row = ("frozen", lambda c: c["event"] is not None, "report", "keep", "frozen: {event_text}")
    monkeypatch.setattr(mp, "ROWS", (row,) + mp.ROWS)
    out = plan(api=api(1))
    assert (out["row"], out["action"], out["record_change"]) == ("frozen", "report", False)
    assert out["why"].startswith("frozen: SCHEDULED host maintenance")
    assert "frozen" in mp.row_names()


def test_the_filter_checks_its_inputs_in_one_line():
    with pytest.raises(AnsibleFilterError, match="expects a mapping with the node's Slurm name"):
        maintenance_filter.maintenance_plan({"slurm": IDLE})
    with pytest.raises(AnsibleFilterError, match="n1: unknown inputs colour"):
        maintenance_filter.maintenance_plan({"node": "n1", "colour": "red"})
    with pytest.raises(AnsibleFilterError, match="lead_h must be 0 or more"):
        maintenance_filter.maintenance_plan({"node": "n1"}, lead_h=-1)
    with pytest.raises(AnsibleFilterError, match="n1: check must be pass, fail or null"):
        maintenance_filter.maintenance_plan({"node": "n1", "check": "maybe"})
    with pytest.raises(AnsibleFilterError, match="cannot read the node list"):
        maintenance_filter.maintenance_plan({"node": "n1", "reservations": "ReservationName=r Nodes=n[1-"})
    out = maintenance_filter.maintenance_plan({"node": "n1", "slurm": IDLE, "api": api(1), "reservations": ""},
                                              lead_h=2, now=NOW)
    assert out["action"] == "drain" and "(drained 2 h ahead)" in out["reason"]
