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
