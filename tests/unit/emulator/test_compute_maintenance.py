# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The emulator's host maintenance: an instance's resourceStatus.upcomingMaintenance is set, rescheduled and
cancelled while it runs, and instances.get and the listings (cached otherwise) show each change."""

import json
import os
import sys
from urllib.error import HTTPError
from urllib.request import Request, urlopen

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))

import compute_harness as harness  # noqa: E402

pytestmark = pytest.mark.emulator
FIXTURE = {"projects": {"proj-m": {"instances": [{"name": "vm-1", "zone": "zones/us-central1-a"},
                                                 {"name": "vm-2", "zone": "zones/us-central1-b"}]}}}
GET = "/compute/v1/projects/proj-m/zones/us-central1-a/instances/vm-1"
LIST = "/compute/v1/projects/proj-m/aggregated/instances"


def get(emu, path):
    req = Request(emu.url + path, headers={"Authorization": "Bearer test"})
    with urlopen(req, timeout=10) as resp:
        return json.loads(resp.read().decode())


def upcoming_of(emu):
    listed = [i for scope in get(emu, LIST)["items"].values() for i in scope.get("instances", [])
              if i["name"] == "vm-1"][0]
    return (get(emu, GET).get("resourceStatus") or {}).get("upcomingMaintenance"), \
        (listed.get("resourceStatus") or {}).get("upcomingMaintenance")


def test_set_reschedule_and_cancel_show_on_get_and_listings():
    event = {"type": "SCHEDULED", "maintenanceStatus": "PENDING", "windowStartTime": "2026-03-02T04:00:00Z",
             "windowEndTime": "2026-03-02T08:00:00Z", "canReschedule": True}
    with harness.ThreadEmulator(FIXTURE) as emu:
        assert upcoming_of(emu) == (None, None)
        emu.set_maintenance("vm-1", event)
        assert upcoming_of(emu) == (event, event)
        moved = dict(event, windowStartTime="2026-03-05T04:00:00Z")
        emu.set_maintenance("vm-1", moved, project="proj-m", zone="us-central1-a")
        assert upcoming_of(emu) == (moved, moved)
        emu.set_maintenance("vm-1", None)
        assert upcoming_of(emu) == (None, None)
        assert get(emu, GET + "?fields=name,resourceStatus(upcomingMaintenance)") == {"name": "vm-1",
                                                                                      "resourceStatus": {}}


def test_an_unknown_instance_or_a_bad_body_is_refused():
    with harness.ThreadEmulator(FIXTURE) as emu:
        with pytest.raises(HTTPError) as info:
            emu.set_maintenance("vm-9", {"type": "SCHEDULED"})
        assert info.value.code == 404
        with pytest.raises(HTTPError) as info:
            emu.set_maintenance("vm-1", "soon")
        assert info.value.code == 400
