# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gce_instance_maintenance_info: the instance comes from the host's gce_* variables, the API's camel-case
upcomingMaintenance becomes the metadata module's shape, and a host it cannot name says why."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.action import gce_instance_maintenance_info as action


def test_the_api_answer_takes_the_metadata_modules_shape():
    resource = {"name": "vm-1", "status": "RUNNING", "resourceStatus": {"upcomingMaintenance": {
        "type": "SCHEDULED", "maintenanceStatus": "PENDING", "windowStartTime": "2026-03-02T04:00:00Z",
        "windowEndTime": "2026-03-02T08:00:00Z", "latestWindowStartTime": "2026-03-09T04:00:00Z",
        "canReschedule": True}}}
    assert action.answer(resource) == {"status": "RUNNING", "upcoming": {
        "status": "PENDING", "type": "SCHEDULED", "window_start": "2026-03-02T04:00:00Z",
        "window_end": "2026-03-02T08:00:00Z", "latest_start": "2026-03-09T04:00:00Z", "can_reschedule": True}}
    assert action.answer({"status": "RUNNING", "resourceStatus": {}}) == {"status": "RUNNING", "upcoming": None}
    assert action.answer(None) == {"status": None, "upcoming": None}


def test_a_host_without_its_instance_variables_is_named():
    assert action.instance_of("n1", {"gce_project": "p", "gce_zone": "z", "gce_name": "vm"}) == (("p", "z", "vm"), None)
    assert action.instance_of("n2", {"gce_project": "p"}) == (None, "the inventory gives n2 no gce_zone, gce_name")
