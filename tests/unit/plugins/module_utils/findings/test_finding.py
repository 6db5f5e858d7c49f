# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The finding is defined once: what it may hold, and that a new component reaches every output."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
from xml.etree import ElementTree as ET

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import findings_report
from ansible_collections.gpudirect.gcp.plugins.module_utils.health import health_metrics, node_health
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import findings

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))


def test_a_finding_holds_what_is_given():
    item = fd.make("gpu", "GPU 3", "fail", "Xid 79", rung="reboot", action=None, phase=None)
    assert item == {"component": "gpu", "subject": "GPU 3", "severity": "fail", "cause": "Xid 79",
                    "rung": "reboot", "action": None, "phase": None}
    plain = {"component": "nic", "subject": "eth1", "severity": "warn", "cause": "x"}
    assert fd.make("nic", "eth1", "warn", "x") == plain


@pytest.mark.parametrize("args, kwargs, word", [
    (("gpus", "s", "fail", "c"), {}, "component 'gpus'"),
    (("gpu", "s", "error", "c"), {}, "severity 'error'"),
    (("gpu", "s", "fail", "c"), {"rung": "replace"}, "rung 'replace'"),
    (("gpu", "s", "fail", "c"), {"fix": "x", "zone": "z"}, "field(s) fix, zone")])
def test_what_is_not_defined_is_refused(args, kwargs, word):
    with pytest.raises(ValueError, match=re.escape(word)):
        fd.make(*args, **kwargs)


def test_the_controller_adds_host_and_repair():
    item = findings.finding("n0", "nic", "eth1", "fail", "mtu 1460", repair="ansible-playbook x")
    assert item["host"] == "n0" and item["repair"] == "ansible-playbook x"
    assert set(item) == set(fd.REQUIRED) | {"host", "repair"}


def test_rungs_order_from_least_disruptive():
    assert [fd.rung_order(r) for r in fd.RUNGS] == list(range(len(fd.RUNGS)))
    assert fd.rung_order("nonsense") == len(fd.RUNGS)


def test_the_reported_fields_are_the_required_ones_and_where():
    assert set(fd.REPORTED) == set(fd.REQUIRED) | {"host", "repair"}
    assert set(fd.REPORTED) <= set(fd.REQUIRED) | set(fd.OPTIONAL)


def _doc_table_values(field):
    with open(os.path.join(ROOT, "docs", "diagnose.md")) as fh:
        row = [line for line in fh if line.startswith("| `%s` |" % field)][0]
    return re.findall(r"`([a-z_]+)`", row.split("|")[2])


def test_the_docs_name_every_component_and_severity():
    assert _doc_table_values("component") == list(fd.COMPONENTS)
    assert _doc_table_values("severity") == list(fd.SEVERITIES)


def test_a_new_component_reaches_every_output(monkeypatch):
    """A throwaway component: adding it to finding.py is all the outputs need (the producer that names it
    and the docs' table are the other two files a real one touches)."""
    monkeypatch.setattr(fd, "COMPONENTS", fd.COMPONENTS + ("straggler",))
    node_item = node_health.finding("straggler", "all_reduce 64M", "fail", "busbw 0.42 of its peers' median")
    item = dict(node_item, host="n1", repair=None)
    other = findings.finding("n0", "nic", "eth1", "warn", "x")

    assert [f["component"] for f in findings.ordered([other, item])] == ["straggler", "nic"]
    assert findings.summary([item, other], ["n0", "n1"])["fail"] == 1
    clean = findings_report.clean([item])
    assert clean[0]["component"] == "straggler"
    suite = findings_report.junit_suite(ET.Element("testsuites"), clean, ["n1"])
    assert [c.get("name") for c in suite.findall("testcase")][-1] == "straggler"
    assert suite.findall("testcase")[-1].find("failure") is not None
    assert "<td>straggler</td>" in findings_report.html_section(clean, ["n1"])
    samples = health_metrics.samples({"findings": [node_item]}, now=0.0)
    assert ((("component", "straggler"), ("subject", "all_reduce 64M"), ("severity", "fail")), 1) in \
        samples["gpudirect_node_health_finding"]
    assert node_health.one_line([node_item]).startswith("fail straggler all_reduce 64M: ")
    json.dumps(item)


def test_a_running_jobs_component_is_a_testcase_only_where_it_has_a_finding():
    hang = dict(fd.make("job", "a3m-node-1 (10.0.0.3)", "fail", "communicator 0x7f3a hangs"), host="n1", repair=None)
    suite = findings_report.junit_suite(ET.Element("testsuites"), findings_report.clean([hang]), ["n0", "n1"])
    names = [(c.get("classname"), c.get("name")) for c in suite.findall("testcase")]
    assert ("diagnose.n1", "job") in names and ("diagnose.n0", "job") not in names
    assert len(names) == 2 * (len(fd.COMPONENTS) - len(fd.ONLY_WITH_FINDINGS)) + 1
