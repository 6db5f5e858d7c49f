# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shipped Alertmanager route: amtool accepts it, it takes the remediable alerts (and only them) to
the rulebook's source, one notification per node, resolved alerts too, with a long repeat and the token
from a file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import subprocess

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROUTE = os.path.join(ROOT, "monitoring", "alertmanager", "gpudirect-remediation.yml")
RULES = os.path.join(ROOT, "monitoring", "prometheus", "gpudirect.rules.yml")


def amtool(*args):
    path = shutil.which("amtool")
    assert path, "amtool is missing: run `make deps` (Debian package prometheus-alertmanager)"
    done = subprocess.run([path] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=60, check=False)
    return done.returncode, done.stdout


def test_amtool_accepts_the_route():
    rc, out = amtool("check-config", ROUTE)
    assert rc == 0, out


def test_remediable_alerts_and_only_they_reach_the_rulebook():
    rc, out = amtool("config", "routes", "test", "--config.file=" + ROUTE, "remediate=true", "instance=node-a",
                     "alertname=GPUDirectNodeRemediable")
    assert rc == 0 and out.strip().splitlines()[-1] == "gpudirect-remediation", out
    rc, out = amtool("config", "routes", "test", "--config.file=" + ROUTE, "instance=node-a",
                     "alertname=GPUDirectGpuXid")
    assert out.strip().splitlines()[-1] == "people", out


def test_the_route_groups_per_node_sends_resolved_and_repeats_rarely():
    with open(ROUTE) as handle:
        config = yaml.safe_load(handle)
    route = config["route"]["routes"][0]
    assert route["group_by"] == ["instance"]
    assert route["repeat_interval"].endswith("h") and int(route["repeat_interval"][:-1]) >= 6
    # the remediable alerts' label, as the rules set it
    with open(RULES) as handle:
        rules = [r for g in yaml.safe_load(handle)["groups"] for r in g["rules"] if "alert" in r]
    remediable = [r for r in rules if r.get("labels", {}).get("remediate") == "true"]
    assert remediable and route["matchers"] == ['remediate="true"']
    webhook = [r for r in config["receivers"] if r["name"] == route["receiver"]][0]["webhook_configs"][0]
    assert webhook["send_resolved"] is True
    authorization = webhook["http_config"]["authorization"]
    assert authorization["type"] == "Bearer" and "credentials" not in authorization
    assert authorization["credentials_file"].startswith("/")
