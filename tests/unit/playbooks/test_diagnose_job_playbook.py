# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""diagnose_job.yml run by ansible-playbook on two local hosts, one of which never answers (its Python
sleeps before it starts, as a module stuck on a sick node would): the other node's evidence still reaches
the archive, one line names the node that gave none, and the archive goes to the report bucket (the storage
emulator), where it outlives an AWX job."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import os
import random
import subprocess
import sys
import tarfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))
import compute_harness as harness  # noqa: E402  pylint: disable=wrong-import-position


def test_a_node_that_never_answers_leaves_the_others_evidence_in_the_archive(tmp_path):
    stuck = tmp_path / "stuck-python"
    stuck.write_text(u"#!/bin/sh\nsleep 900\nexit 1\n")
    stuck.chmod(0o755)
    local = {"ansible_connection": "local", "ansible_become": False}
    inv = {"gpu_nodes": {"hosts": {"n0": dict(local, ansible_python_interpreter=sys.executable),
                                   "n1": dict(local, ansible_python_interpreter=str(stuck))}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inv))
    # one rank of the job on this machine, which both hosts are
    job = str(os.getpid() * 100 + random.randint(0, 99))
    rank = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(900)"],
                            env=dict(os.environ, SLURM_JOB_ID=job, RANK="0", LOCAL_RANK="0"))
    settings = {"diagnose_job": job, "diagnose_job_watch_s": 0, "diagnose_job_py_spy": "/nonexistent/py-spy",
                "diagnose_job_units": [], "diagnose_job_node_dir": str(tmp_path / "node"),
                "diagnose_job_deadline_s": 15, "diagnose_job_grace_s": 5, "gpudirect_report_bucket": "evidence"}
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
            os.path.join(ROOT, "playbooks", "diagnose_job.yml"), "-e", json.dumps(settings)]
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_INVENTORY_ENABLED="ansible.builtin.yaml", GPUDIRECT_REPORT_DIR=str(tmp_path / "reports"))
    started = time.monotonic()
    try:
        with harness.ThreadEmulator({"buckets": {"evidence": {}}}) as emulator:
            env.update(GCP_STORAGE_API_ENDPOINT=emulator.url, GCP_AUTH_KIND="accesstoken",
                       GCP_ACCESS_TOKEN="not-a-secret")
            proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  universal_newlines=True, check=False, timeout=600)
            stored = emulator.objects()
    finally:
        rank.kill()
        rank.wait()
    took = time.monotonic() - started
    out = proc.stdout
    assert proc.returncode == 0, out[-4000:]
    # the stuck node held the run for its task's timeout (deadline 15 s and 5 s of grace), not its 900 s;
    # the deadline leaves the node that answers room on a loaded machine, the bound room for the rest
    assert took < 300, took
    lines = [line for line in out.splitlines() if "no evidence came back from" in line]
    assert len(lines) == 1 and "n1 (" in lines[0] and "n0" not in lines[0], out[-4000:]
    [archive] = (tmp_path / "reports").glob("job-%s-*.tar.gz" % job)
    assert [o["name"] for o in stored] == ["gpudirect-gcp/reports/" + archive.name], stored
    assert base64.b64decode(stored[0]["data"]) == archive.read_bytes()
    with tarfile.open(str(archive)) as tar:
        names = tar.getnames()
        summary = json.loads(tar.extractfile([m for m in tar.getmembers()
                                              if m.name.endswith("summary.json")][0]).read().decode())
    assert any(name.endswith("nodes/n0.tar.gz") for name in names), names
    assert not any(name.endswith("nodes/n1.tar.gz") for name in names), names
    nodes = dict((node["host"], node) for node in summary["nodes"])
    assert nodes["n0"]["gathered"] and nodes["n0"]["ranks"] == [0]
    assert not nodes["n1"]["gathered"] and nodes["n1"]["reason"], nodes["n1"]
