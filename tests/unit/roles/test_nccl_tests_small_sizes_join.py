# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nccl_tests role joins each sweep's small-size stage into the one result: every verdict, the worst
status."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import jinja2
from ansible.plugins.filter.core import FilterModule

from ansible_collections.gpudirect.gcp.tests.unit.roles import _job_stand_ins as stand_ins

TEMPLATE = os.path.join(stand_ins.ROOT, "roles", "nccl_tests", "templates", "sweeps.json.j2")


def render(sweeps):
    env = jinja2.Environment()
    filters = FilterModule().filters()
    # ansible-core 2.19 and later give their own `default`, made for their own templar's undefined values:
    # in this plain Jinja environment Jinja's own is the one that reads its undefined values as Ansible does
    filters.pop("default", None)
    env.filters.update(filters)
    with open(TEMPLATE) as f:
        return json.loads(env.from_string(f.read()).render(_nccl_tests_sweep_results=sweeps))


def sweep(collective, status):
    return {"verdict": "pass", "nodes": ["n0"], "node_table": {}, "collectives": [], "runs": [], "commands": [],
            "finished_at": "2026-01-01T00:00:00Z",
            "small_sizes": {"required": True, "status": status, "minbytes": "8", "maxbytes": "64K", "min_nodes": 4,
                            "verdicts": [{"collective": collective, "status": status}]}}


def test_the_worst_small_size_status_of_the_sweeps_is_the_runs():
    small = render([sweep("all_gather", "pass"), sweep("all_reduce", "fail")])["small_sizes"]
    assert small["status"] == "fail" and [v["collective"] for v in small["verdicts"]] == ["all_gather", "all_reduce"]
    assert (small["minbytes"], small["maxbytes"], small["required"]) == ("8", "64K", True)
    assert render([sweep("all_gather", "pass"), sweep("all_reduce", "pass")])["small_sizes"]["status"] == "pass"


def test_sweeps_without_the_stage_join_to_none_run():
    bare = sweep("all_gather", "pass")
    del bare["small_sizes"]
    assert render([bare, bare])["small_sizes"] == {"verdicts": [], "status": None}
