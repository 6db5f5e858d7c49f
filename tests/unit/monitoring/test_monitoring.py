# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shipped alert rules and Grafana dashboard: promtool checks and unit-tests the rules, and every
metric they read is one the node health agent writes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import shutil
import subprocess

import yaml

from ansible_collections.gpudirect.gcp.plugins.module_utils.health import health_metrics
from ansible_collections.gpudirect.gcp.plugins.module_utils.job import job_watch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RULES_DIR = os.path.join(ROOT, "monitoring", "prometheus")
RULES = os.path.join(RULES_DIR, "gpudirect.rules.yml")
DASHBOARD = os.path.join(ROOT, "monitoring", "grafana", "gpudirect-node-health.json")
METRIC = re.compile(r"\b(gpudirect_[a-z_]+)\b")


def promtool(*args):
    path = shutil.which("promtool")
    assert path, "promtool is missing: run `make deps` (Debian package prometheus)"
    proc = subprocess.run([path] + list(args), cwd=RULES_DIR, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    return proc.returncode, proc.stdout


def test_promtool_accepts_the_rules_and_their_unit_tests_pass():
    rc, out = promtool("check", "rules", "gpudirect.rules.yml")
    assert rc == 0, out
    rc, out = promtool("test", "rules", "gpudirect.rules.test.yml")
    assert rc == 0, out


def test_promtool_fails_a_rule_test_whose_alert_does_not_fire(tmp_path):
    with open(os.path.join(RULES_DIR, "gpudirect.rules.test.yml")) as fh:
        tests = yaml.safe_load(fh)
    tests["rule_files"] = [RULES]
    # the same input, expecting the RxDM alert one evaluation too early (before its `for`)
    tests["tests"][0]["alert_rule_test"] = [dict(t, eval_time="3m") for t in tests["tests"][0]["alert_rule_test"]
                                            if t["alertname"] == "GPUDirectRxdmNotReady"]
    broken = tmp_path / "broken.test.yml"
    broken.write_text(yaml.safe_dump(tests))
    rc, out = promtool("test", "rules", str(broken))
    assert rc != 0, out


def used_metrics():
    with open(RULES) as fh:
        rules = yaml.safe_load(fh)
    exprs = [rule["expr"] for group in rules["groups"] for rule in group["rules"]]
    with open(DASHBOARD) as fh:
        dashboard = json.load(fh)
    exprs += [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    exprs += [var["definition"] for var in dashboard["templating"]["list"] if var.get("definition")]
    return set(name for expr in exprs for name in METRIC.findall(expr))


def test_rules_and_dashboard_read_only_metrics_the_agent_writes():
    written = set(name for name, _type, _help in health_metrics.FAMILIES + job_watch.FAMILIES)
    used = used_metrics()
    assert used and used <= written, sorted(used - written)
    assert {"gpudirect_node_health_finding", "gpudirect_rxdm_ready", "gpudirect_nic_mtu_bytes",
            "gpudirect_job_hang", "gpudirect_job_dead_rank"} <= used


def test_the_dashboard_has_unique_panel_ids_and_a_datasource_variable():
    with open(DASHBOARD) as fh:
        dashboard = json.load(fh)
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    assert [v["name"] for v in dashboard["templating"]["list"]][0] == "datasource"
    assert all(panel["datasource"]["uid"] == "${datasource}" for panel in dashboard["panels"])
