# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""playbooks/maintenance.yml, run by the real ansible-playbook against the Compute API emulator, through a
stand-in sinfo and scontrol, over a sequence of host maintenance events on five nodes:

  n1  scheduled within the lead time: drained; the event cancelled: returned
  n2  scheduled beyond the lead time: left; moved into the lead time and under way: drained; done with a
      failing node check: kept drained; the check passes: returned
  n3  a person's drain: reported, never drained over nor resumed
  n4  a Slurm maintenance reservation (cluster-toolkit's) holds it: reported, not drained
  n5  scheduled within the lead time: drained; rescheduled beyond it: returned

Check mode changes nothing, and a second run over the same events changes nothing.
"""

import json
import os
import re
import subprocess
import sys
import time

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))
import compute_harness as harness  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = pytest.mark.emulator
PROJECT, ZONE = "maint-proj", "us-central1-a"
NODES = ["n1", "n2", "n3", "n4", "n5"]
STANDIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "slurm_standin.py")
OWNER = "gpudirect-maintenance"


def stamp(hours):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + hours * 3600))


def upcoming(hours, status="PENDING"):
    return {"type": "SCHEDULED", "maintenanceStatus": status, "windowStartTime": stamp(hours),
            "windowEndTime": stamp(hours + 4), "canReschedule": True}


class Cluster(object):
    """The emulator, the Slurm stand-in's state and an inventory of local nodes."""

    def __init__(self, tmp_path, emu):
        self.tmp, self.emu = tmp_path, emu
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        for name in ("sinfo", "scontrol"):
            # a shell wrapper: the stand-in itself is no executable with a shebang of its own
            wrapper = bin_dir / name
            wrapper.write_text('#!/bin/sh\nexec "%s" "%s" %s "$@"\n' % (sys.executable, STANDIN, name))
            wrapper.chmod(0o755)
        self.state = tmp_path / "slurm.json"
        self.state.write_text(json.dumps({"nodes": dict((n, {"state": "idle", "user": "", "reason": ""})
                                                        for n in NODES), "reservations": []}))
        (tmp_path / "slurm.conf").write_text("# the stand-in's\n")
        local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, "ansible_become": False}
        hosts = {}
        for node in NODES:
            hosts[node] = dict(local, gce_project=PROJECT, gce_zone=ZONE, gce_name="vm-" + node,
                               maintenance_record_path=str(tmp_path / node / "state" / "maintenance.json"),
                               maintenance_check_config=str(tmp_path / node / "health.json"),
                               maintenance_sinfo=str(bin_dir / "sinfo"), maintenance_scontrol=str(bin_dir / "scontrol"))
            (tmp_path / node).mkdir()
            # a node check with no part but the family: it passes on any host
            (tmp_path / node / "health.json").write_text(json.dumps({"family": "a3-mega"}))
        inventory = {"all": {"hosts": {"localhost": local}, "children": {"gpu_nodes": {"hosts": hosts}}}}
        (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))

    def slurm(self):
        return json.loads(self.state.read_text())

    def set_slurm(self, node, **fields):
        state = self.slurm()
        state["nodes"][node].update(fields)
        self.state.write_text(json.dumps(state))

    def reserve(self, line):
        state = self.slurm()
        state["reservations"].append(line)
        self.state.write_text(json.dumps(state))

    def record(self, node):
        path = self.tmp / node / "state" / "maintenance.json"
        return json.loads(path.read_text()) if path.exists() else None

    def run(self, *args):
        env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
                   ANSIBLE_INVENTORY_ENABLED="ansible.builtin.yaml",
                   ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, "build", "collections"),
                   GCP_COMPUTE_API_ENDPOINT=self.emu.url, GCP_AUTH_KIND="accesstoken",
                   GCP_ACCESS_TOKEN="maintenance-test-token-not-a-secret", GPUDIRECT_SLURM_STATE=str(self.state),
                   SLURM_CONF=str(self.tmp / "slurm.conf"))
        # only the API: every local node would read the same metadata server
        argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i",
                str(self.tmp / "inventory.yml"), os.path.join(ROOT, "playbooks", "maintenance.yml"),
                "-e", json.dumps({"maintenance_sources": ["api"], "maintenance_lead_h": 4})] + list(args)
        proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=300)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, out[-6000:]
        assert "Traceback" not in out, out[-6000:]
        return out


def decided(out):
    """{node: (action, row)} from the role's last line for each node."""
    return dict((m.group(1), (m.group(2), m.group(3)))
                for m in re.finditer(r'"maintenance: (n\d): (\w+) \((\w+)\): ', out))


def changed(out):
    return dict((m.group(1), int(m.group(2))) for m in re.finditer(r"^(n\d)\s+: ok=\d+\s+changed=(\d+)", out, re.M))


def test_event_sequences(tmp_path):
    fixture = {"projects": {PROJECT: {"instances": [
        {"name": "vm-" + n, "zone": "zones/" + ZONE, "machineType": "a3-megagpu-8g"} for n in NODES]}}}
    with harness.ThreadEmulator(fixture) as emu:
        cluster = Cluster(tmp_path, emu)
        emu.set_maintenance("vm-n1", upcoming(2))
        emu.set_maintenance("vm-n2", upcoming(30))
        emu.set_maintenance("vm-n3", upcoming(1))
        emu.set_maintenance("vm-n4", upcoming(1))
        emu.set_maintenance("vm-n5", upcoming(1))
        cluster.set_slurm("n3", state="drained", user="alice", reason="RMA 4711: GPU 5 swapped")
        cluster.reserve("ReservationName=vm-n4_maintenance StartTime=2026-03-02T04:00:00 Nodes=n4 Flags=MAINT,SPEC_NODES")

        # check mode: says what it would do, changes nothing
        out = cluster.run("--check", "--diff")
        assert decided(out) == {"n1": ("drain", "due"), "n2": ("none", "scheduled"), "n3": ("report", "not_ours"),
                                "n4": ("report", "reserved"), "n5": ("drain", "due")}, out
        assert "calls" not in cluster.slurm() and cluster.record("n1") is None
        assert "+    \"key\": \"SCHEDULED" in out or '"key": "SCHEDULED' in out

        # drained ahead of the event, the reason naming it and its window
        out = cluster.run()
        assert decided(out)["n1"] == ("drain", "due")
        nodes = cluster.slurm()["nodes"]
        assert nodes["n1"]["state"] == "drained"
        assert nodes["n1"]["reason"].startswith(OWNER + " SCHEDULED host maintenance, window ")
        assert cluster.record("n1")["window_start"] in nodes["n1"]["reason"]
        assert nodes["n3"] == {"state": "drained", "user": "alice", "reason": "RMA 4711: GPU 5 swapped"}
        assert nodes["n4"]["state"] == "idle" and nodes["n2"]["state"] == "idle"
        assert "RMA 4711" in out and "vm-n4_maintenance" in out

        # the same events again: never drained twice, nothing changes
        out = cluster.run()
        assert set(changed(out).values()) == {0}, out
        assert decided(out)["n1"] == ("hold", "still_due")
        assert len(cluster.slurm()["calls"]) == 2

        # n1's event cancelled, n5's rescheduled beyond the lead time, n2's moved in and under way
        emu.set_maintenance("vm-n1", None)
        emu.set_maintenance("vm-n5", upcoming(48))
        emu.set_maintenance("vm-n2", upcoming(-0.5, status="ONGOING"))
        out = cluster.run()
        assert decided(out)["n1"] == ("resume", "cancelled") and decided(out)["n5"] == ("resume", "moved_out")
        assert decided(out)["n2"] == ("drain", "due")
        nodes = cluster.slurm()["nodes"]
        assert nodes["n1"]["state"] == nodes["n5"]["state"] == "idle"
        assert cluster.record("n1") is None and cluster.record("n5") is None
        assert nodes["n3"]["reason"] == "RMA 4711: GPU 5 swapped"

        # n2's maintenance is done, but its node check fails (no configuration): it stays drained
        emu.set_maintenance("vm-n2", None)
        (tmp_path / "n2" / "health.json").unlink()
        out = cluster.run()
        assert decided(out)["n2"] == ("hold", "done_failed"), out
        assert cluster.slurm()["nodes"]["n2"]["state"] == "drained"
        assert "no node check configuration at" in out

        # the check passes: back in Slurm; a person's drain is still never resumed
        (tmp_path / "n2" / "health.json").write_text(json.dumps({"family": "a3-mega"}))
        out = cluster.run()
        assert decided(out)["n2"] == ("resume", "done_passed"), out
        nodes = cluster.slurm()["nodes"]
        assert nodes["n2"]["state"] == "idle" and cluster.record("n2") is None
        assert nodes["n3"]["state"] == "drained" and nodes["n3"]["user"] == "alice"
        resumed = sorted(c[1] for c in cluster.slurm()["calls"] if c[2] == "state=resume")
        assert resumed == ["nodename=n1", "nodename=n2", "nodename=n5"]
