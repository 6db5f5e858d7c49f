# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""remediate.yml run by ansible-playbook: the guard's decisions and the audit, dry run, a failing step."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import os
import subprocess
import sys
import time

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
NODES = ["a3m-%d" % n for n in range(4)]
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))
import compute_harness as harness  # noqa: E402  pylint: disable=wrong-import-position


def alert(node, status="firing"):
    return {"status": status, "labels": {"alertname": "GPUDirectNodeRemediable", "instance": node + ":9100",
                                         "remediate": "true", "component": "gpu", "subject": "GPU 1"}}


def place(node):
    """Where the inventory says a node sits (the gce_gpu plugin's gce_topology)."""
    return {"cluster": "c1", "block": "b1", "subblock": "s%s" % node[-1], "host": "h-%s" % node}


def play(tmp_path, alerts, *extra, **environ):
    inv = {"gpu_nodes": {"hosts": dict((h, {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                                            "gpu_family": "a3-mega", "gce_topology": place(h)})
                                       for h in NODES)}}
    path = tmp_path / "cluster.yml"
    path.write_text(yaml.safe_dump(inv))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(path),
            os.path.join(ROOT, "playbooks", "remediate.yml"), "-e", json.dumps({"remediate_alerts": alerts}),
            "-e", "remediate_state_dir=%s" % (tmp_path / "state"),
            # a node's check reads a configuration this machine does not have: that step fails
            "-e", "remediate_check_config=%s" % (tmp_path / "no-health.json")] + list(extra)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_INVENTORY_ENABLED="ansible.builtin.yaml", **environ)
    proc = subprocess.run(argv, cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    audit = tmp_path / "state" / "audit.jsonl"
    lines = [json.loads(line) for line in audit.read_text().splitlines()] if audit.exists() else []
    return proc, lines


def test_dry_run_decides_logs_and_touches_no_node(tmp_path):
    proc, lines = play(tmp_path, [alert("a3m-1"), alert("a3m-2", "resolved")])
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert [(l["node"], l["decision"]) for l in lines] == [("a3m-1", "dry_run"), ("a3m-2", "ignored"),
                                                           ("a3m-1", "preview")]
    # the node live would act on gets the read-only check (here it cannot run: the preview says so), nothing else
    assert lines[-1]["plan"].startswith("could not preview: Read the node check's configuration")
    # every line about a node says where it sits
    assert lines[0]["place"] == lines[-1]["place"] == place("a3m-1")
    assert "Drain the node" not in proc.stdout.split("Log that the dry run")[0].split("Read the node check")[1]
    assert not (tmp_path / "state" / "state.json").read_text().strip()


def test_an_alert_about_no_node_of_the_inventory_is_logged_and_fails_the_run(tmp_path):
    proc, lines = play(tmp_path, [alert("a3m-1"), alert("elsewhere")])
    # red in AWX and in the rulebook's log: a green run means every alert found its node
    assert proc.returncode == 2, proc.stdout[-3000:]
    assert "the alerts name what is no node of remediate_hosts (group gpu_nodes): elsewhere" in proc.stdout
    assert [(l["node"], l["decision"]) for l in lines] == [("a3m-1", "dry_run"), ("elsewhere", "ignored")]
    assert lines[1]["reason"] == "elsewhere is not a node of this inventory"


def test_a_live_run_acts_within_the_cap_and_logs_a_failed_step_with_the_node_left_out_of_service(tmp_path):
    proc, lines = play(tmp_path, [alert(n) for n in NODES[:3]], "-e", "remediate_dry_run=false",
                       "-e", "remediate_max_per_hour=1")
    # the run fails, naming the node that needs a person
    assert proc.returncode == 2 and "remediate: a3m-0 stays drained for a person: failed" in proc.stdout, proc.stdout[-3000:]
    assert [(l["node"], l["decision"]) for l in lines] == [("a3m-0", "act"), ("a3m-1", "held"), ("a3m-2", "held"),
                                                           ("a3m-0", "outcome")]
    assert lines[3]["outcome"] == "failed" and "Read the node check's configuration" in lines[3]["detail"]
    assert lines[3]["returned"] is False and lines[3]["run"] == lines[0]["run"]
    assert lines[3]["place"] == lines[0]["place"] == place("a3m-0")
    # the failed run keeps its node out: the next alert about it starts nothing
    proc, lines = play(tmp_path, [alert("a3m-0")], "-e", "remediate_dry_run=false")
    assert lines[-1]["decision"] == "ignored" and "already under a remediation" in lines[-1]["reason"]
    proc, lines = play(tmp_path, [], "-e", "remediate_release=a3m-0")
    assert lines[-1]["decision"] == "release" and lines[-1]["runs"] == [lines[0]["run"]]


def test_check_mode_decides_and_writes_nothing(tmp_path):
    proc, lines = play(tmp_path, [alert("a3m-1")], "-e", "remediate_dry_run=false", "--check")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert lines == [] and not (tmp_path / "state").exists()
    assert "act a3m-1: drain a3m-1" in proc.stdout


@pytest.mark.emulator
def test_the_audit_outlives_the_run_in_the_report_bucket(tmp_path):
    """Books kept on the controller (an AWX job's directory, gone with the job): the run uploads the audit."""
    with harness.ThreadEmulator({"buckets": {"reports": {}}}) as emulator:
        proc, lines = play(tmp_path, [alert("a3m-1")], "-e", "gpudirect_report_bucket=reports",
                           GCP_STORAGE_API_ENDPOINT=emulator.url, GCP_AUTH_KIND="accesstoken",
                           GCP_ACCESS_TOKEN="not-a-secret")
        stored = emulator.objects()
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert [o["name"].split("/")[-1] for o in stored] == ["audit.jsonl"], proc.stdout[-3000:]
    assert stored[0]["name"].startswith("gpudirect-gcp/reports/remediate-")
    uploaded = [json.loads(line) for line in base64.b64decode(stored[0]["data"]).decode("utf-8").splitlines()]
    assert uploaded == lines and [line["decision"] for line in lines] == ["dry_run", "preview"]


def test_an_awx_job_with_books_that_die_with_it_is_refused_in_one_line(tmp_path):
    proc, lines = play(tmp_path, [alert("a3m-1")], "-e", "awx_job_id=42")
    assert proc.returncode == 2 and lines == [], proc.stdout[-3000:]
    assert "remediate: AWX job 42 keeps the guard's books in %s, which goes with the job" % (tmp_path / "state") \
        in proc.stdout
    # a volume every job mounts is the operator's to declare
    proc, lines = play(tmp_path, [alert("a3m-1")], "-e", "awx_job_id=43", "-e", "remediate_state_dir_persistent=true")
    assert proc.returncode == 0 and lines[0]["decision"] == "dry_run", proc.stdout[-3000:]


def test_with_a_fleet_ledger_decisions_and_outcomes_are_kept_by_physical_host_and_a_repeat_starts_higher(tmp_path):
    ledger_path = tmp_path / "fleet" / "ledger.json"
    now = int(time.time())
    # h-a3m-0 failed again after a GPU reset cleared it, under a VM since deleted
    ledger_path.parent.mkdir(mode=0o700)
    ledger_path.write_text(json.dumps({"version": 1, "records": [
        {"kind": "outcome", "host": "h-a3m-0", "node": "vm-gone", "time": now - 7200, "outcome": "cleared",
         "rung": "reset_gpu"},
        {"kind": "finding", "host": "h-a3m-0", "node": "vm-gone", "time": now - 3600, "component": "gpu",
         "subject": "GPU 1", "cause": "Xid 79"}]}))
    ledger_path.chmod(0o600)
    proc, lines = play(tmp_path, [alert("a3m-0")], "-e", "remediate_dry_run=false",
                       "-e", "gpudirect_fleet_ledger=%s" % ledger_path)
    assert proc.returncode == 2, proc.stdout[-3000:]
    assert (lines[0]["decision"], lines[0]["rung"]) == ("act", "reboot")
    assert "escalated one rung above reset_gpu: physical host h-a3m-0 failed again" in lines[0]["reason"]
    kept = json.loads(ledger_path.read_text())["records"]
    assert [(r["kind"], r.get("decision") or r.get("outcome"), r.get("node")) for r in kept[2:]] == [
        ("remediation", "act", "a3m-0"), ("outcome", "failed", "a3m-0")]
    assert all(r["host"] == "h-a3m-0" and r["source"] == "remediate" for r in kept[2:])


def test_without_a_fleet_ledger_one_line_says_nothing_is_recorded(tmp_path):
    proc, _lines = play(tmp_path, [alert("a3m-1")])
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "fleet ledger: gpudirect_fleet_ledger is not set; nothing of remediate is recorded" in proc.stdout
