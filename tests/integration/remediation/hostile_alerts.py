# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Alertmanager alerts whose every field is a template that would leave a file behind if evaluated.

Each field's template touches a file named after the field under MARKS, through each way Jinja could
run it: an expression with a lookup, a statement, a query, and (in keys) a label name. A run that
evaluated any field leaves its file; the tests assert MARKS stays empty and the text reaches the audit
as it was sent.
  python hostile_alerts.py MARKS NODE     prints an Alertmanager webhook body (JSON) about NODE
"""

import json
import sys


def expression(marks, field):
    return "{{ lookup('ansible.builtin.pipe', 'touch %s/%s') }}" % (marks, field)


def statement(marks, field):
    return "{%% set _ = query('ansible.builtin.pipe', 'touch %s/%s') %%}x" % (marks, field)


def alert(marks, instance, alertname=None):
    """One firing alert with the remediate label the rulebook's condition needs (it must read "true") and
    every other field a template; instance names the node (a template too, where None)."""
    return {
        "status": "firing",
        "labels": {
            "alertname": alertname or expression(marks, "alertname"),
            "instance": instance if instance is not None else expression(marks, "instance"),
            "remediate": "true",
            "component": expression(marks, "component"),
            "subject": statement(marks, "subject"),
            "rung": expression(marks, "rung"),
            expression(marks, "label-name"): expression(marks, "label-value"),
        },
        "annotations": {"summary": expression(marks, "summary"), "description": statement(marks, "description")},
        "startsAt": expression(marks, "startsAt"),
        "generatorURL": "http://{{ lookup('ansible.builtin.pipe', 'touch %s/url') }}" % marks,
        "fingerprint": expression(marks, "fingerprint"),
    }


def webhook(marks, node):
    """A webhook body: one alert about an inventory node, one whose node is a template too."""
    return {
        "version": "4", "status": "firing", "receiver": expression(marks, "receiver"),
        "groupKey": expression(marks, "groupKey"), "groupLabels": {"instance": expression(marks, "group")},
        "commonLabels": {}, "commonAnnotations": {}, "externalURL": expression(marks, "externalURL"),
        "alerts": [alert(marks, node), alert(marks, None)],
    }


if __name__ == "__main__":
    print(json.dumps(webhook(sys.argv[1], sys.argv[2])))
