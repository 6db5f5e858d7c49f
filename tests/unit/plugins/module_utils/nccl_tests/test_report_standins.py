# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A report whose figures or evidence came from the sandbox's stand-ins says so: in the JSON, at the top
of the HTML page and in the JUnit properties; a real report says nothing of the kind."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from xml.etree import ElementTree as ET

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_report

RUN = {"kind": "cluster", "collective": "all_gather", "rows": [], "output_tail": "# nccl-tests\n"}
STANDIN_RUN = dict(RUN, output_tail="STAND-IN all_gather_perf: replay of a recorded run\n")


def reports(runs, standins=False, diagnosis=None):
    result = {"verdict": "pass", "runs": runs, "collectives": [{"collective": "all_gather", "status": "pass"}]}
    return nccl_report.build_report(result, "r1", diagnosis=diagnosis, hosts=["n0"], standins=standins)


@pytest.mark.parametrize("report", [reports([STANDIN_RUN]), reports([RUN], standins=True),
                                    reports([], standins=True, diagnosis={"verdict": "pass"})])
def test_standin_report_says_so_everywhere(report):
    assert report["from_standins"] is True
    html = nccl_report.to_html(report)
    assert html.index("STAND-IN") < html.index("<h1>")
    root = ET.fromstring(nccl_report.to_junit(report).split("\n", 1)[1])
    suites = root.findall("testsuite")
    assert suites
    for suite in suites:
        props = dict((p.get("name"), p.get("value")) for p in suite.findall("properties/property"))
        assert props.get("from_standins") == "true"


def test_real_report_says_nothing_of_stand_ins():
    report = reports([RUN])
    assert report["from_standins"] is False
    assert "STAND-IN" not in nccl_report.to_html(report)
    assert "from_standins\" value=\"true" not in nccl_report.to_junit(report)
