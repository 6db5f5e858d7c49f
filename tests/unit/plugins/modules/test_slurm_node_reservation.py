# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""slurm_node's reservations against a stand-in scontrol on PATH that keeps its reservations in a file, as
slurmctld would: made once and left alone when asked again, refused while a job runs on a node (Slurm's
answer in one line), released once, and check mode runs no create nor delete."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import stat
import sys

import pytest

from ansible_collections.gpudirect.gcp.plugins.modules import slurm_node
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run

SCONTROL = r'''#!%(python)s
import json, os, re, sys
STATE, LOG = %(state)r, %(log)r
args = sys.argv[1:]
with open(LOG, "a") as log:
    log.write(" ".join(args) + "\n")
data = json.load(open(STATE))
if data.get("down"):
    sys.stderr.write("slurm_load_reservations error: Unable to contact slurm controller (connect failure)\n")
    sys.exit(1)


def compress(nodes):
    # one prefix and numbers, as Slurm prints a host list: n[1-2,4]
    found = [re.match(r"^(\D+)(\d+)$", n) for n in nodes]
    if len(nodes) < 2 or not all(found) or len(set(m.group(1) for m in found)) != 1:
        return ",".join(nodes)
    return "%%s[%%s]" %% (found[0].group(1), ",".join(m.group(2) for m in found))


if args[:3] == ["-o", "show", "reservation"]:
    res = data["reservations"].get(args[3])
    if res is None:
        print("Reservation %%s not found" %% args[3])
        sys.exit(1)
    print("ReservationName=%%s StartTime=2026-01-01T00:00:00 EndTime=2026-01-01T01:00:00 Duration=%%s "
          "Nodes=%%s NodeCnt=%%d CoreCnt=8 Features=(null) PartitionName=(null) Flags=%%s Users=%%s "
          "Groups=(null) Accounts=(null) Licenses=(null) State=ACTIVE BurstBuffer=(null)"
          %% (args[3], res["Duration"], compress(sorted(res["Nodes"].split(","))), len(res["Nodes"].split(",")),
             res.get("Flags", "").upper() or "(null)", res.get("Users", "(null)")))
    sys.exit(0)
if args[:2] == ["create", "reservation"]:
    fields = dict(a.split("=", 1) for a in args[2:])
    if "ignore_jobs" not in fields.get("Flags", "") and set(fields["Nodes"].split(",")) & set(data["busy"]):
        sys.stderr.write("Error creating the reservation: Requested nodes are busy\n(job 4711 runs there)\n")
        sys.exit(1)
    data["reservations"][fields.pop("ReservationName")] = fields
elif args[:1] == ["delete"]:
    if data["reservations"].pop(args[1].split("=", 1)[1], None) is None:
        sys.stderr.write("Error deleting the reservation: Requested reservation is invalid\n")
        sys.exit(1)
else:
    sys.stderr.write("unexpected: %%s\n" %% args)
    sys.exit(2)
json.dump(data, open(STATE, "w"))
'''


class Slurm(object):
    """The stand-in's reservations and the commands it was given."""

    def __init__(self, tmp_path):
        self.state, self.log = tmp_path / "slurm.json", tmp_path / "scontrol.log"
        self.set(reservations={}, busy=[])

    def set(self, **values):
        data = json.loads(self.state.read_text()) if self.state.exists() else {}
        data.update(values)
        self.state.write_text(json.dumps(data))

    def reservations(self):
        return json.loads(self.state.read_text())["reservations"]

    def calls(self, verb=None):
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return [line for line in lines if verb is None or line.split()[0] == verb]


@pytest.fixture
def slurm(tmp_path, monkeypatch):
    bins = tmp_path / "bin"
    bins.mkdir()
    fake = Slurm(tmp_path)
    path = bins / "scontrol"
    path.write_text(SCONTROL % {"python": sys.executable, "state": str(fake.state), "log": str(fake.log)})
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(bins) + os.pathsep + os.environ.get("PATH", ""))
    return fake


def reserve(**extra):
    return dict({"state": "reserved", "reservation": "gpudirect-nccl-1", "nodes": ["n1", "n2"], "duration": 61,
                 "flags": ["maint"]}, **extra)


def test_a_reservation_is_made_once_then_left_and_released_once(slurm, capsys):
    out = run(slurm_node, reserve(), capsys, diff=True)
    assert out["changed"] and not out.get("failed"), out
    assert slurm.calls("create") == ["create reservation ReservationName=gpudirect-nccl-1 Nodes=n1,n2 StartTime=now "
                                     "Duration=61 Users=root Flags=maint"]
    # read back from Slurm's compressed host list
    assert out["reservation"]["nodes"] == ["n1", "n2"] and out["reservation"]["state"] == "active"
    assert out["diff"] == {"before": {}, "after": {"name": "gpudirect-nccl-1", "nodes": ["n1", "n2"],
                                                   "users": ["root"], "flags": ["maint"]}}
    again = run(slurm_node, reserve(nodes=["n2", "n1"]), capsys)
    assert not again["changed"] and len(slurm.calls("create")) == 1
    assert again["msg"] == "the reservation gpudirect-nccl-1 holds n1,n2 already"
    checked = run(slurm_node, {"state": "released", "reservation": "gpudirect-nccl-1"}, capsys, check_mode=True)
    assert checked["changed"] and checked["reservation"] is None and slurm.calls("delete") == []
    released = run(slurm_node, {"state": "released", "reservation": "gpudirect-nccl-1"}, capsys)
    assert released["changed"] and slurm.calls("delete") == ["delete ReservationName=gpudirect-nccl-1"]
    assert slurm.reservations() == {}
    gone = run(slurm_node, {"state": "released", "reservation": "gpudirect-nccl-1"}, capsys)
    assert not gone["changed"] and not gone.get("failed") and len(slurm.calls("delete")) == 1


def test_check_mode_makes_nothing_and_says_what_it_would(slurm, capsys):
    out = run(slurm_node, reserve(), capsys, check_mode=True, diff=True)
    assert out["changed"] and out["reservation"]["nodes"] == ["n1", "n2"] and out["reservation"]["state"] == ""
    assert out["diff"]["after"]["flags"] == ["maint"]
    assert slurm.calls("create") == [] and slurm.reservations() == {}


def test_a_busy_node_is_slurms_refusal_in_one_line(slurm, capsys):
    slurm.set(busy=["n2"])
    out = run(slurm_node, reserve(), capsys)
    assert out["failed"] and not out["changed"] and slurm.reservations() == {}
    assert out["refused"] == "Error creating the reservation: Requested nodes are busy (job 4711 runs there)"
    assert out["msg"] == ("slurm_node: Slurm refused the reservation gpudirect-nccl-1 of n1,n2: Error creating the "
                          "reservation: Requested nodes are busy (job 4711 runs there)")
    # Slurm's ignore_jobs flag reserves them anyway
    assert run(slurm_node, reserve(flags=["maint", "ignore_jobs"]), capsys)["changed"]


def test_a_reservation_of_that_name_on_other_nodes_is_not_changed(slurm, capsys):
    slurm.set(reservations={"gpudirect-nccl-1": {"Nodes": "n3", "Duration": "10", "Users": "alice"}})
    out = run(slurm_node, reserve(), capsys)
    assert out["failed"] and out["msg"] == ("slurm_node: a reservation gpudirect-nccl-1 holds n3, not n1,n2; release "
                                            "it first or choose another name")
    assert slurm.calls("create") == [] and slurm.reservations()["gpudirect-nccl-1"]["Nodes"] == "n3"


@pytest.mark.parametrize("args, msg", [
    (reserve(duration=0), "slurm_node: duration must be a whole number of minutes, 1 or more, not 0"),
    (reserve(reservation="two words"), "slurm_node: reservation 'two words' is not one word without '=' or ','"),
    (reserve(nodes=["n1,n2"]), "slurm_node: node 'n1,n2' is not one word without '=' or ','"),
    (reserve(nodes=[]), "slurm_node: nodes must name at least one node"),
])
def test_bad_options_are_one_line_and_run_nothing(slurm, capsys, args, msg):
    out = run(slurm_node, args, capsys)
    assert out["failed"] and out["msg"] == msg and slurm.calls() == []


def test_a_controller_that_does_not_answer_is_one_line(slurm, capsys):
    slurm.set(down=True)
    out = run(slurm_node, {"state": "released", "reservation": "r1"}, capsys)
    assert out["failed"] and out["msg"] == ("slurm_node: scontrol show reservation r1 exited 1: slurm_load_reservations "
                                            "error: Unable to contact slurm controller (connect failure)")
