# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Alerts read from the play's variables as stored: plain JSON data, bounded, and never a template
evaluated to find them (the real runs are tests/integration/remediation/)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.utils.unsafe_proxy import AnsibleUnsafeText

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import alert_data

TEMPLATE = "{{ lookup('ansible.builtin.pipe', 'id') }}"
ALERT = {"status": "firing", "labels": {"instance": "node-a:9100", "alertname": TEMPLATE}}


def test_the_rulebooks_event_gives_its_alert_and_a_list_gives_its_items():
    found = alert_data.alerts_from_vars(
        {"ansible_eda": {"ruleset": "r", "rule": "x", "event": {"alert": ALERT, "meta": {"node": "node-a"}}},
         "remediate_alerts": [ALERT, ALERT]}, ["ansible_eda", "remediate_alerts"])
    assert found == [ALERT] * 3
    assert found[0]["labels"]["alertname"] == TEMPLATE


@pytest.mark.parametrize("task_vars", [{}, {"remediate_alerts": []}, {"remediate_alerts": None},
                                       {"ansible_eda": {"event": {"payload": {}}}}, {"remediate_alerts": ""}])
def test_no_variable_or_an_event_without_an_alert_gives_none(task_vars):
    assert alert_data.alerts_from_vars(task_vars, ["ansible_eda", "remediate_alerts"]) == []


@pytest.mark.parametrize("value, message", [
    (TEMPLATE, "remediate_alerts must be a list of alerts (data, never a template), not a str"),
    (42, "remediate_alerts must be a list of alerts (data, never a template), not a int"),
    ([{"labels": {"x": object()}}], "remediate_alerts holds a object, not JSON-shaped data")])
def test_what_is_not_a_list_of_json_data_is_refused_in_one_line_naming_the_variable(value, message):
    with pytest.raises(alert_data.AlertDataError) as caught:
        alert_data.alerts_from_vars({"remediate_alerts": value}, ["remediate_alerts"])
    assert str(caught.value) == message


def test_depth_items_and_count_are_bounded():
    deep = {}
    node = deep
    for _level in range(alert_data.MAX_DEPTH + 2):
        node["x"] = {}
        node = node["x"]
    with pytest.raises(alert_data.AlertDataError, match="nested deeper than"):
        alert_data.alerts_from_vars({"remediate_alerts": [deep]}, ["remediate_alerts"])
    with pytest.raises(alert_data.AlertDataError, match="more than %d items" % alert_data.MAX_ITEMS):
        alert_data.plain([1] * (alert_data.MAX_ITEMS + 1), "alerts")
    with pytest.raises(alert_data.AlertDataError, match="more than %d alerts" % alert_data.MAX_ALERTS):
        alert_data.alerts_from_vars({"remediate_alerts": [{}] * (alert_data.MAX_ALERTS + 1)}, ["remediate_alerts"])
    assert len(alert_data.plain("x" * (alert_data.MAX_TEXT + 10), "alerts")) == alert_data.MAX_TEXT


def test_strings_come_out_plain_whatever_type_ansible_core_gave_them():
    out = alert_data.plain({AnsibleUnsafeText("k"): [AnsibleUnsafeText(TEMPLATE), True, 1.5, None]}, "alerts")
    assert out == {"k": [TEMPLATE, True, 1.5, None]}
    # exact type, not isinstance: a str subclass is what must not survive
    assert {type(list(out)[0]), type(out["k"][0])} == {str}
