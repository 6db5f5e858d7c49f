# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guard's books in Cloud Storage are shared by jobs that run at once and keep nothing of their own.

Real runs, no mocks but the API: six jobs under ansible-runner at the same time, each in its own private
data directory with an empty home (as AWX runs jobs in execution environments), each handed a storm of
alerts about nodes of its own - half of them by scrape address, as Prometheus's instance label names them
- with live remediation and the books in a bucket of the emulator's Cloud Storage JSON API. Only the
guard runs (the nodes are never reached). Across the jobs no more runs start than the hourly cap and the
share cap allow, every decision is in the audit objects under the node's inventory name, and the state
holds exactly the runs that started.
"""

import base64
import json
import os
import sys
import time

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))
import compute_harness as harness  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = pytest.mark.emulator
JOBS = 6
PER_JOB = 4
NODES = ["a3m-%02d" % n for n in range(JOBS * PER_JOB)]
MAX_PER_HOUR = 5
MAX_SHARE = 0.25  # of 24 nodes: 6 at once, so the hourly cap is the one met
BUCKET, PREFIX = "ops-a", "clusters/a/remediate"
PLAY = """
- name: The guard only
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Decide, within the caps, and log it
      ansible.builtin.include_role:
        name: gpudirect.gcp.remediate
        tasks_from: guard
"""


def _address(node):
    return "10.0.0.%d" % (10 + NODES.index(node))


def _alert(node):
    # half of the alerts name the node as Prometheus's scrape address does
    instance = (_address(node) if NODES.index(node) % 2 else node) + ":9100"
    return {"status": "firing", "labels": {"alertname": "GPUDirectNodeRemediable", "instance": instance,
                                           "component": "gpu", "subject": "GPU 1", "severity": "critical"},
            "annotations": {"summary": "gpu GPU 1"}}


def _job_dir(tmp_path, index, inventory):
    base = tmp_path / ("job-%d" % index)
    for sub in ("project", "inventory", "env", "home"):
        (base / sub).mkdir(parents=True)
    (base / "project" / "guard.yml").write_text(PLAY)
    (base / "inventory" / "hosts.yml").write_text(yaml.safe_dump(inventory))
    return base


def _objects(emu):
    return dict((o["name"], base64.b64decode(o["data"]).decode("utf-8")) for o in emu.objects()
                if o["bucket"] == BUCKET)


def test_jobs_at_once_share_the_books_and_never_pass_the_caps(tmp_path):
    ansible_runner = pytest.importorskip("ansible_runner")
    venv_bin = os.path.join(ROOT, ".venv", "bin")
    assert os.access(os.path.join(venv_bin, "ansible-playbook"), os.X_OK), "no .venv: make venv"
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory = {"all": {"hosts": {"localhost": local}, "children": {"gpu_nodes": {"hosts": dict(
        (node, {"ansible_host": _address(node)}) for node in NODES)}}}}
    with harness.ThreadEmulator({"buckets": {BUCKET: {}}}) as emu:
        runners, started = [], time.monotonic()
        for index in range(JOBS):
            base = _job_dir(tmp_path, index, inventory)
            env = {"ANSIBLE_CONFIG": os.path.join(ROOT, "ansible.cfg"),
                   "ANSIBLE_COLLECTIONS_PATH": os.path.join(ROOT, "build", "collections"),
                   "ANSIBLE_NOCOLOR": "1", "HOME": str(base / "home"),
                   "PATH": venv_bin + os.pathsep + os.environ.get("PATH", ""),
                   "GCP_STORAGE_API_ENDPOINT": emu.url, "GCP_AUTH_KIND": "accesstoken",
                   "GCP_ACCESS_TOKEN": "storm-test-token-not-a-secret"}
            alerts = [_alert(node) for node in NODES[index * PER_JOB:(index + 1) * PER_JOB]]
            thread, runner = ansible_runner.run_async(
                private_data_dir=str(base), playbook="guard.yml", inventory=str(base / "inventory" / "hosts.yml"),
                envvars=env, quiet=True, timeout=90,
                extravars={"remediate_alerts": alerts, "remediate_dry_run": False,
                           "remediate_state_bucket": BUCKET, "remediate_state_prefix": PREFIX,
                           "remediate_max_per_hour": MAX_PER_HOUR, "remediate_max_share": MAX_SHARE})
            runners.append((thread, runner))
        for thread, _runner in runners:
            thread.join(120)
        for _thread, runner in runners:
            assert runner.status == "successful", runner.stdout.read()[-3000:]
        objects = _objects(emu)
    elapsed = time.monotonic() - started

    state = json.loads(objects[PREFIX + "/state.json"])
    lines = [json.loads(line) for name, text in sorted(objects.items()) if name.startswith(PREFIX + "/audit/")
             for line in text.splitlines()]
    lost = set(line["batch"] for line in lines if line["decision"] == "retried")
    kept = [line for line in lines if line["decision"] != "retried" and line["batch"] not in lost]
    acts = [line for line in kept if line["decision"] == "act"]
    # the caps hold across the jobs: exactly as many runs as the hourly cap, under the share cap
    assert len(acts) == MAX_PER_HOUR <= int(MAX_SHARE * len(NODES)), acts
    # every alert decided once, under its inventory name; the rest held by the hourly cap
    assert sorted(line["node"] for line in kept) == NODES
    assert all(line["decision"] == "held" and "the cap is %d" % MAX_PER_HOUR in line["reason"]
               for line in kept if line["decision"] != "act")
    assert [line for line in kept if line["node"] != "a3m-00" and line.get("named")], "no alert named an address"
    # the state has exactly the runs that started, and the batch that wrote it last
    assert sorted((r["id"], r["node"]) for r in state["runs"]) == sorted((a["run"], a["node"]) for a in acts)
    assert state["batch"] in set(line["batch"] for line in kept)
    print("storm: %d jobs, %d alerts, %d acts, %d held, %d retries, %d audit objects, %.1f s"
          % (JOBS, len(NODES), len(acts), len(kept) - len(acts), len(lost),
             len([n for n in objects if "/audit/" in n]), elapsed))
