# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The findings part of the report: JUnit cases per host and component, and the HTML section that
opens the page (findings grouped by host, then by cause and repair command). A node's findings carry its
place (cluster, block, sub-block, physical host, NVLink domain): a JUnit testcase of the node has it as
properties place.<part>, the HTML row in words.  The finding itself is
defined in finding.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
from xml.etree import ElementTree as ET

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding

esc = safe_text.html


def clean(items):
    """Only the documented fields, each one line of text with secrets masked (or null), so nothing
    else reaches the report and no finding can forge a line of it."""
    out = []
    for item in items or []:
        if not isinstance(item, dict):
            continue
        shown = dict((k, None if item.get(k) is None else safe_text.one_line(safe_text.mask_text(item.get(k))))
                     for k in finding.REPORTED)
        # a place only where the finding has one: the report holds the findings as the run has them
        where = _place(item.get("place"))
        if where:
            shown["place"] = where
        out.append(shown)
    return out


def _place(value):
    """A finding's place as a report shows it: its known parts, one bounded line each; None for none or for
    one of a shape no finding has (a report is written whatever a finding holds)."""
    try:
        return finding.place(value)
    except ValueError:
        return None


def _host_place(items, host):
    """The place of a host's findings (one node is in one place): the first one given, or None."""
    return next((f.get("place") for f in items if f["host"] == host and f.get("place")), None)


def _place_properties(case, value):
    """A testcase's place as JUnit properties (place.block, ...), in PLACE_PARTS order; none for none."""
    parts = [(part, value[part]) for part in finding.place_parts() if (value or {}).get(part)]
    if parts:
        props = ET.SubElement(case, "properties")
        for part, text in parts:
            ET.SubElement(props, "property", name="place.%s" % part, value=text)


def _host_order(items, hosts):
    order = list(hosts or [])
    for item in items:
        if item["host"] is not None and item["host"] not in order:
            order.append(item["host"])
    return order


def junit_suite(root, items, hosts):
    """One testcase per host and component (failing with its findings), and one per cluster finding."""
    suite = ET.SubElement(root, "testsuite", name="diagnose")
    for host in _host_order(items, hosts):
        for comp in finding.COMPONENTS:
            mine = [f for f in items if f["host"] == host and f["component"] == comp]
            if comp in finding.ONLY_WITH_FINDINGS and not mine:
                continue  # never a passing testcase for what was not checked
            case = ET.SubElement(suite, "testcase", classname="diagnose.%s" % host, name=comp)
            _place_properties(case, _host_place(items, host))
            fails = [f for f in mine if f["severity"] == "fail"]
            if fails:
                node = ET.SubElement(case, "failure", type=comp,
                                     message=("; ".join("%s: %s" % (f["subject"], f["cause"]) for f in fails))[:500])
                node.text = "\n".join(json.dumps(f, sort_keys=True) for f in mine)
            elif mine:
                out = ET.SubElement(case, "system-out")
                out.text = "\n".join(json.dumps(f, sort_keys=True) for f in mine)
    for item in items:
        if item["host"] is None:
            case = ET.SubElement(suite, "testcase", classname="diagnose.cluster",
                                 name="%s %s" % (item["component"], item["subject"]))
            if item["severity"] == "fail":
                node = ET.SubElement(case, "failure", type=item["component"], message=(item["cause"] or "")[:500])
                node.text = json.dumps(item, sort_keys=True)
            else:
                out = ET.SubElement(case, "system-out")
                out.text = json.dumps(item, sort_keys=True)
    return suite


def html_section(items, hosts):
    """Findings grouped by host; within a host one row per cause with its repair command."""
    fails = sum(1 for f in items if f["severity"] == "fail")
    warns = len(items) - fails
    parts = ["<h2>Findings</h2>"]
    if not items:
        parts.append("<p class=\"pass\">No findings on %d node(s).</p>" % len(hosts or []))
        return "".join(parts)
    parts.append("<p>%d failing, %d warning, on %d node(s); %d node(s) clean.</p>"
                 % (fails, warns, len(set(f["host"] for f in items if f["host"] is not None)),
                    len([h for h in hosts or [] if h not in set(f["host"] for f in items)])))
    for host in _host_order(items, hosts) + [None]:
        mine = [f for f in items if f["host"] == host]
        if not mine:
            continue
        parts.append("<h3>%s</h3><table><tr><th>severity</th><th>component</th><th>subject</th><th>cause</th>"
                     "<th>repair</th><th>place</th></tr>" % esc(host if host is not None else finding.CLUSTER))
        for f in mine:
            parts.append("<tr><td class=\"%s\">%s</td><td>%s</td><td>%s</td><td>%s</td><td><code>%s</code></td>"
                         "<td>%s</td></tr>"
                         % (esc(f["severity"]), esc(f["severity"]), esc(f["component"]), esc(f["subject"]),
                            esc(f["cause"]), esc(f["repair"] or ""), esc(finding.place_words(f.get("place")))))
        parts.append("</table>")
    return "".join(parts)
