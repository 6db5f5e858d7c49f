# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node check's parts are one table: every list of them matches it, and a new part reaches the module,
the agent and diagnose without touching them."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import yaml

from ansible_collections.gpudirect.gcp.plugins.filter import node_check
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health
from ansible_collections.gpudirect.gcp.plugins.modules import node_health_info
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import diagnose, diagnose_evidence
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import Repairs
from ansible_collections.gpudirect.gcp.tests.unit.docs import _module_docs as module_docs
from ansible_collections.gpudirect.gcp.tests.unit.plugins.plugin_utils.diagnose.test_diagnose_evidence import raw

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
KEYS = ["gpu", "nics", "rxdm", "plugin", "profile", "maintenance"]


def _yaml(*path):
    with open(os.path.join(ROOT, *path), encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def _health_config_keys():
    (task,) = [t for t in _yaml("roles", "_common", "tasks", "health_config.yml")
               if "gpudirect_health_config" in (t.get("ansible.builtin.set_fact") or {})]
    # one Jinja mapping: its own keys are the quoted names at the mapping's first indent
    text = task["ansible.builtin.set_fact"]["gpudirect_health_config"]
    first = re.search(r"^( *)'", text, re.M).group(1)
    return re.findall(r"^%s'(\w+)':" % first, text, re.M)


def test_the_table_holds_the_parts_in_the_order_they_run():
    assert node_health.part_keys() == KEYS
    assert len(set(p["tag"] for p in node_health.PARTS)) == len(KEYS)
    assert all(p["component"] in fd.COMPONENTS for p in node_health.PARTS)


def test_every_list_of_the_parts_matches_the_table():
    keys = node_health.part_keys()
    settings = list(node_health.NIC_SETTINGS)
    assert _health_config_keys() == ["family"] + keys[:2] + settings + keys[2:]
    spec = node_health_info.argument_spec()
    assert set(spec) == {"config", "family", "rxdm_wait_s", "command_timeout_s"} | set(keys) | set(settings)
    # as ansible-doc shows it: the parts' options come from their doc fragments
    documented = module_docs.merged(module_docs.own_doc("node_health_info"))["options"]
    assert set(documented) == set(spec)
    assert list(diagnose_evidence.part_components()) == keys
    assert [p["key"] for p in node_check.node_check_parts()] == keys
    # the shared config task's default asks for every part, through the filter over the table
    assert "_node_check_parts" in _yaml("roles", "_common", "defaults", "main.yml")["_common_health_parts"]
    assert "_node_check_parts" in [t for t in _yaml("roles", "diagnose", "tasks", "main.yml")
                                   if "_diagnose_parts" in (t.get("ansible.builtin.set_fact") or {})][0]["vars"]["_tags"]
    # diagnose hands the whole config over, so a part needs no line there
    (run,) = [t for t in _yaml("roles", "diagnose", "tasks", "node.yml") if "gpudirect.gcp.node_health_info" in t]
    assert set(run["gpudirect.gcp.node_health_info"]) == {"config", "rxdm_wait_s"}


def test_a_new_part_reaches_the_check_the_module_the_agent_and_diagnose(monkeypatch):
    """A throwaway part: its row in the table (with its check) is all node_health_info, the agent's result and
    diagnose need; the shared config task (health_config.yml) and the part's doc fragment (which
    node_health_info extends) are the other two files a real one touches."""
    monkeypatch.setattr(fd, "COMPONENTS", fd.COMPONENTS + ("straggler",))
    part = {"key": "straggler", "component": "straggler", "needs": ("window_s",), "empty_runs": False,
            "tag": "diagnose_straggler", "spec": dict(type="dict", options=dict(window_s=dict(type="int"))),
            "check": lambda config, ctx: ({"ratio": 0.4}, [node_health.finding(
                "straggler", "all_reduce 64M", "fail", "busbw 0.40 of its peers' median")])}
    monkeypatch.setattr(node_health, "PARTS", node_health.PARTS + (part,))

    config = {"family": "a3-mega", "straggler": {"window_s": 60}}
    result = node_health.check(config, run=None, which=lambda name: None)
    assert result["straggler"] == {"ratio": 0.4}
    assert [f["component"] for f in result["findings"]] == ["straggler"]
    assert "straggler" in node_health_info.argument_spec()
    assert node_health.empty_result("a3-mega")["straggler"] is None
    assert [p["tag"] for p in node_check.node_check_parts()][-1] == "diagnose_straggler"

    record = raw(parts=KEYS + ["straggler"])
    record["results"]["node"]["findings"] = result["findings"]
    evidence = {"n0": diagnose_evidence.shape(record)}
    found = diagnose.node_findings(evidence, ["n0"], Repairs())
    assert [(f["host"], f["component"], f["subject"], f["severity"]) for f in found] == [
        ("n0", "straggler", "all_reduce 64M", "fail")]
