# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Alerts as data: read from the play's variables exactly as they were given, never templated.

An alert's labels and annotations are free text chosen by whoever can write a Prometheus rule or
post to the webhook. ansible-rulebook hands the event to the playbook as an extra variable
(ansible_eda.event.alert, by run_playbook and by the EDA controller's run_job_template alike); an
AWX job or a person hands a list (remediate_alerts). Templating either - a task argument such as
"{{ ansible_eda.event.alert }}", a role's argument validation, a default that refers to it - would
evaluate any Jinja expression in that text on the controller. So the guard reads these variables
from the task's variables as they are stored (unevaluated), copies them into plain JSON-shaped data
(bounded in depth and size) and marks every string unsafe before anything else sees it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

# an Alertmanager alert is three levels deep; the webhook body four
MAX_DEPTH = 16
MAX_ITEMS = 10000
MAX_TEXT = 64 * 1024
MAX_ALERTS = 1000


class AlertDataError(ValueError):
    """A variable that cannot be read as alerts; the message names it."""


def plain(value, where, depth=0, budget=None):
    """value as plain JSON-shaped data (dict, list, str, int, float, bool, None): ansible-core's own
    string types and tags are dropped, so nothing carries a mark that would let it be templated."""
    budget = budget if budget is not None else [MAX_ITEMS]
    budget[0] -= 1
    if budget[0] < 0:
        raise AlertDataError("%s holds more than %d items" % (where, MAX_ITEMS))
    if depth > MAX_DEPTH:
        raise AlertDataError("%s is nested deeper than %d levels" % (where, MAX_DEPTH))
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        # str's own __str__ copies a subclass into a plain str: ansible-core's string types (whose encode and
        # decode keep their type) and their tags stay behind
        text = str.__str__(value)
        return text if len(text) <= MAX_TEXT else text[:MAX_TEXT]
    if isinstance(value, Mapping):
        return dict((plain(key, where, depth + 1, budget) if isinstance(key, str) else str(key),
                     plain(item, where, depth + 1, budget)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [plain(item, where, depth + 1, budget) for item in value]
    raise AlertDataError("%s holds a %s, not JSON-shaped data" % (where, type(value).__name__))


def alerts_from_vars(task_vars, names):
    """The alerts in the named variables, as stored: a mapping with event.alert (ansible-rulebook's
    ansible_eda) gives that one alert, a list gives its items; an absent or empty variable gives none.

    A variable holding anything else (a template string, a number) raises AlertDataError naming it:
    alerts are data, so a template is never evaluated to find them."""
    alerts = []
    for name in names:
        if name not in task_vars:
            continue
        value = task_vars[name]
        if value is None or (isinstance(value, (list, tuple, str, Mapping)) and len(value) == 0):
            continue
        if isinstance(value, Mapping):
            event = value.get("event")
            alert = event.get("alert") if isinstance(event, Mapping) else None
            if alert is None:
                continue  # an event of another source, or a rule without an alert: nothing to judge
            found = [alert]
        elif isinstance(value, (list, tuple)):
            found = list(value)
        else:
            raise AlertDataError("%s must be a list of alerts (data, never a template), not a %s"
                                 % (name, type(value).__name__))
        if len(alerts) + len(found) > MAX_ALERTS:
            raise AlertDataError("%s holds more than %d alerts" % (name, MAX_ALERTS))
        alerts.extend(plain(item, name) for item in found)
    return alerts
