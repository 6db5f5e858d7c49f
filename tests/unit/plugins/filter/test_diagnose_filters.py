# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""_diagnose_add_fabric as diagnose's report step calls it: the NCCL tests' own busy findings added."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.filter.diagnose import FilterModule

DIAGNOSE = FilterModule().filters()
PASSED = {"verdict": "pass", "collectives": [{"collective": "all_gather", "status": "pass"}]}


def test_a_node_left_out_just_before_the_tests_is_named_and_not_tested():
    checks = {"n0": {"state": "idle"}, "n1": {"state": "busy", "reasons": ["Slurm node n1 is mixed"]}}
    late = DIAGNOSE["_diagnose_busy"](checks, ["n0", "n1"])
    found = DIAGNOSE["_diagnose_add_fabric"]([], PASSED, ["n0", "n1"], ["n0", "n1"], late_busy=late)
    assert [(f["host"], f["component"]) for f in found] == [("n1", "gpu"), (None, "fabric")]
    assert DIAGNOSE["_diagnose_add_fabric"]([], PASSED, ["n0", "n1"], ["n0", "n1"]) == []


@pytest.mark.parametrize("late", ["n1", [1, 2], {"host": "n1"}])
def test_late_busy_that_is_no_list_of_findings_is_one_line(late):
    with pytest.raises(AnsibleFilterError) as err:
        DIAGNOSE["_diagnose_add_fabric"]([], PASSED, ["n0"], ["n0"], late_busy=late)
    assert str(err.value) == "_diagnose_add_fabric: late_busy expects a list of findings"


def test_the_job_summary_filters_turn_a_wrong_shaped_node_result_into_one_line_naming_it():
    ok = {"job": "7", "archive": "/var/tmp/a.tar.gz", "ranks": [{"rank": 0, "frame": "f"}], "parts": {},
          "ras": {"state": "ok", "odd_ranks": []}}
    results = {"n0": ok, "n1": ["not", "a", "mapping"], "n2": dict(ok, ras={"state": "x\n# forged heading"})}
    summary = DIAGNOSE["_diagnose_job_summary"](results, ["n0", "n1", "n2"])
    assert [(n["host"], n["gathered"]) for n in summary["nodes"]] == [("n0", True), ("n1", False), ("n2", True)]
    assert "n1: evidence result is not a mapping (list)" in [f["cause"] for f in summary["findings"]]
    page = DIAGNOSE["_diagnose_job_text"](summary)
    assert "\n# forged" not in page and "| n2 | 0 | x\\\\n\\# forged heading | yes | - |" in page
    with pytest.raises(AnsibleFilterError, match="^_diagnose_job_summary: expects"):
        DIAGNOSE["_diagnose_job_summary"]([results], ["n0"])


def test_a_job_summarys_node_findings_say_where_the_node_sits_and_the_jobs_own_nowhere():
    ok = {"job": "7", "archive": "/var/tmp/a.tar.gz", "ranks": [{"rank": 0, "frame": "f"}], "parts": {},
          "ras": {"state": "ok", "odd_ranks": []}}
    places = {"n1": {"block": "b1", "subblock": "s2", "host": "h-7"}}
    summary = DIAGNOSE["_diagnose_job_summary"]({"n0": ok, "n1": ["not", "a", "mapping"]}, ["n0", "n1"],
                                                places=places)
    about_n1 = [f for f in summary["findings"] if f.get("host") == "n1"]
    assert about_n1 and all(f["place"] == places["n1"] for f in about_n1)
    assert all("place" not in f for f in summary["findings"] if f.get("host") != "n1")
    with pytest.raises(AnsibleFilterError, match="^_diagnose_job_summary: places: n1: unknown place part"):
        DIAGNOSE["_diagnose_job_summary"]({"n0": ok}, ["n0"], places={"n1": {"rack": "r9"}})
