# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which node checks a diagnose run makes, from its --tags and --skip-tags: the expression the role's
main.yml holds, rendered by Ansible's own templar, and the node check's task tagged so that only that
expression decides."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import ansible.template
import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from ansible_collections.gpudirect.gcp.plugins.filter import node_check

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MAIN = os.path.join(ROOT, "roles", "diagnose", "tasks", "main.yml")
# ansible-core 2.19 trusts no string unless told; older releases trust every plain string
trust_as_template = getattr(ansible.template, "trust_as_template", lambda text: text)
ALL = ["gpu", "nics", "rxdm", "plugin", "profile", "maintenance"]


def _tasks():
    with open(MAIN, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def parts(run_tags, skip_tags=()):
    (task,) = [t for t in _tasks() if "_diagnose_parts" in (t.get("ansible.builtin.set_fact") or {})]
    variables = dict((k, trust_as_template(v) if isinstance(v, str) else v) for k, v in task["vars"].items())
    # the one collection filter of the expression, rendered here without a collection loader
    assert "gpudirect.gcp._node_check_parts" in variables["_tags"]
    variables["_tags"] = dict((part["key"], part["tag"]) for part in node_check.node_check_parts())
    variables.update(ansible_run_tags=list(run_tags), ansible_skip_tags=list(skip_tags))
    templar = Templar(loader=DataLoader(), variables=variables)
    return templar.template(trust_as_template(task["ansible.builtin.set_fact"]["_diagnose_parts"]))


@pytest.mark.parametrize("run_tags, skip_tags, expected", [
    (["all"], [], ALL),
    # the play's own tag, or any tag that is not a part's: every part
    (["diagnose"], [], ALL),
    (["all"], ["diagnose_gpu"], [p for p in ALL if p != "gpu"]),
    (["diagnose"], ["diagnose_rxdm", "diagnose_host"], ["gpu", "nics", "plugin", "profile"]),
    (["diagnose_gpu"], [], ["gpu"]),
    (["diagnose_nic", "diagnose_host"], [], ["nics", "maintenance"]),
    (["all", "diagnose_gpu"], [], ALL),
    (["diagnose_gpu"], ["diagnose_gpu"], []),
])
def test_the_tags_pick_the_parts(run_tags, skip_tags, expected):
    assert parts(run_tags, skip_tags) == expected


def test_the_node_check_runs_whenever_a_part_is_asked_for_whatever_else_is_skipped():
    (node,) = [t for block in _tasks() for t in block.get("block") or []
               if t.get("ansible.builtin.import_tasks") == "node.yml"]
    assert node["tags"] == ["always"] and node["when"] == "_diagnose_parts | length > 0"
