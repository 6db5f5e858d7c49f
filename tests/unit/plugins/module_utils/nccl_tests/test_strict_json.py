# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every JSON the project writes is strict: no NaN or Infinity, null for what is not known."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
import os

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_parse, nccl_report

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "..", "..", "fixtures", "nccl")


def strict(text):
    def refuse(constant):
        raise AssertionError("non-strict JSON constant %s" % constant)
    return json.loads(text, parse_constant=refuse)


def nan_output():
    with open(os.path.join(FIXTURES, "a3-mega_all_gather_2node_dstack.txt")) as fh:
        text = fh.read()
    lines = text.splitlines()
    out = []
    for line in lines:
        if "Avg bus bandwidth" in line:
            line = line.split(":", 1)[0] + ": nan"
        out.append(line)
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
def test_parser_gives_null_for_values_that_are_not_numbers(value):
    res = nccl_parse.parse(nan_output().replace(": nan", ": %s" % value), collective="all_gather")
    assert res["avg_busbw_reported_gbps"] is None
    strict(json.dumps(res))


def test_report_json_is_strict_whatever_it_is_given():
    result = {"verdict": "pass", "runs": [{"kind": "cluster", "rows": [{"size": 1, "busbw_oop": float("nan")}]}],
              "collectives": [{"collective": "all_gather", "avg_busbw_gbps": float("inf"),
                               "measured_busbw_gbps": -float("inf")}]}
    text = nccl_report.to_json(nccl_report.build_report(result, "r1"))
    doc = strict(text)
    assert doc["runs"][0]["rows"][0]["busbw_oop"] is None
    assert doc["collectives"][0]["avg_busbw_gbps"] is None
    assert not math.isnan(float(doc["summary"]["nodes"]))
