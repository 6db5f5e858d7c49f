# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host maintenance notices served per node by the metadata stand-in, read by the real client
(module_utils/host/maintenance.py, which the module and the node health agent share) and judged."""

import calendar

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import maintenance
from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health
# metadata: the running metadata stand-in, a fixture
from ansible_collections.gpudirect.gcp.tests.unit.emulator.test_guest_services_topology import (  # noqa: F401 pylint: disable=unused-import
    NODE, metadata)

pytestmark = pytest.mark.emulator
NOW = calendar.timegm((2026, 11, 26, 12, 0, 0, 0, 0, 0))


def upcoming(start, status="PENDING", can_reschedule=True):
    return {"maintenance_status": status, "type": "SCHEDULED", "window_start_time": start,
            "window_end_time": "2026-11-27T10:00:00Z", "latest_window_start_time": "2026-11-30T06:00:00Z",
            "can_reschedule": can_reschedule}


def test_nothing_scheduled_is_no_finding(metadata):
    state = maintenance.read(metadata.url, 5)
    assert state == {"event": "NONE", "upcoming": None, "error": None}
    assert maintenance.judge(state, now=NOW) == []


def test_a_window_within_the_warning_time_is_a_warning_with_its_times(metadata):
    metadata.place({NODE: {"upcoming-maintenance": upcoming("2026-11-26T15:00:00Z")}})
    state = maintenance.read(metadata.url, 5)
    assert state["upcoming"]["window_start"] == "2026-11-26T15:00:00Z" and state["upcoming"]["can_reschedule"]
    found = maintenance.judge(state, now=NOW, warn_within_s=24 * 3600)
    assert [(f["subject"], f["severity"], f["can_reschedule"]) for f in found] == [("maintenance", "warn", True)]
    assert found[0]["cause"].startswith("scheduled host maintenance in 3.0 h (window 2026-11-26T15:00:00Z to "
                                        "2026-11-27T10:00:00Z): drain the node before it starts")
    assert maintenance.judge(state, now=NOW, warn_within_s=3600) == []


@pytest.mark.parametrize("entry", [
    {"maintenance-event": "TERMINATE_ON_HOST_MAINTENANCE"},
    {"upcoming-maintenance": upcoming("2026-11-26T15:00:00Z", status="ONGOING")},
    {"upcoming-maintenance": upcoming("2026-11-26T11:00:00+00:00")}])
def test_maintenance_under_way_fails(metadata, entry):
    metadata.place({NODE: entry})
    found = maintenance.judge(maintenance.read(metadata.url, 5), now=NOW)
    assert [f["severity"] for f in found] == ["fail"] and "the VM stops, and its jobs with it" in found[0]["cause"]


def test_a_server_that_cannot_answer_is_could_not_run(metadata):
    metadata.place(["not", "a", "mapping"])
    found = maintenance.judge(maintenance.read(metadata.url, 5), now=NOW)
    assert [f["severity"] for f in found] == ["warn"]
    assert found[0]["cause"].startswith("could not run: metadata server %s/instance/maintenance-event answered "
                                        "HTTP 500" % metadata.url)
    found = maintenance.judge(maintenance.read("http://127.0.0.1:9/computeMetadata/v1", 2), now=NOW)
    assert found[0]["cause"].startswith("could not run: metadata server http://127.0.0.1:9/computeMetadata/v1/"
                                        "instance/maintenance-event cannot be reached")


def test_the_agent_part_reads_the_same(metadata):
    metadata.place({NODE: {"upcoming-maintenance": upcoming("2026-11-26T13:30:00Z", can_reschedule=False)}})
    state, found = node_health.check_maintenance({"metadata_url": metadata.url, "warn_within_h": 2},
                                                 clock=lambda: NOW)
    assert state["event"] == "NONE" and [(f["component"], f["subject"], f["severity"]) for f in found] == [
        ("host", "maintenance", "warn")]
    assert "in 1.5 h" in found[0]["cause"] and "started now" not in found[0]["cause"]


def test_the_module_reports_it_and_changes_nothing(metadata, capsys):
    from ansible_collections.gpudirect.gcp.plugins.modules import gce_maintenance_info
    from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run
    metadata.place({NODE: {"maintenance-event": "TERMINATE_ON_HOST_MAINTENANCE"}})
    out = run(gce_maintenance_info, {"metadata_url": metadata.url, "timeout": 5}, capsys, check_mode=True)
    assert out["changed"] is False and out["event"] == "TERMINATE_ON_HOST_MAINTENANCE" and out["upcoming"] is None
    assert [(f["subject"], f["severity"]) for f in out["findings"]] == [("maintenance", "fail")]
