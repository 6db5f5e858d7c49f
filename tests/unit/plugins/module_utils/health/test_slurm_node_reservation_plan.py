# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Slurm reservation as module_utils/health/slurm_node.py reads and plans it: Slurm's compressed host lists,
scontrol's answers for a reservation it has, has not or cannot tell, and what to do about each."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.health import slurm_node as sn

LINE = ("ReservationName=r1 StartTime=2026-01-01T00:00:00 EndTime=2026-01-01T01:01:00 Duration=01:01:00 "
        "Nodes=a3-n[07-09,11],gpu-x NodeCnt=5 CoreCnt=8 Features=(null) PartitionName=(null) Flags=MAINT,SPEC_NODES "
        "TRES=cpu=8 Users=root Groups=(null) Accounts=(null) Licenses=(null) State=ACTIVE BurstBuffer=(null)")


@pytest.mark.parametrize("text, names", [
    ("n1", ["n1"]),
    ("n[1-3]", ["n1", "n2", "n3"]),
    ("a3-n[07-09,11],gpu-x", ["a3-n07", "a3-n08", "a3-n09", "a3-n11", "gpu-x"]),
    ("r[1-2]-n[0-1]", ["r1-n0", "r1-n1", "r2-n0", "r2-n1"]),
    ("(null)", []),
])
def test_slurms_host_lists_expand(text, names):
    assert sn.expand_hostlist(text) == names


@pytest.mark.parametrize("text", ["n[1-", "n[a-b]", "n[3-1]", "n]1["])
def test_an_unreadable_host_list_is_one_line(text):
    with pytest.raises(sn.SlurmNodeError, match="^cannot read the node list"):
        sn.expand_hostlist(text)


def test_a_reservation_is_read_from_scontrols_line():
    record = sn.parse_reservation(0, "ReservationName=r0 Nodes=z1\n" + LINE + "\n", "", "r1")
    assert record["nodes"] == ["a3-n07", "a3-n08", "a3-n09", "a3-n11", "gpu-x"]
    assert (record["users"], record["flags"], record["state"]) == (["root"], ["maint", "spec_nodes"], "active")


@pytest.mark.parametrize("rc, out, err", [
    (1, "Reservation r1 not found\n", ""),
    (0, "No reservations in the system\n", ""),
    (0, "ReservationName=r10 Nodes=n1\n", ""),
])
def test_a_reservation_slurm_does_not_have_is_none(rc, out, err):
    assert sn.parse_reservation(rc, out, err, "r1") is None


def test_another_scontrol_failure_is_one_line():
    with pytest.raises(sn.SlurmNodeError) as err:
        sn.parse_reservation(1, "", "slurm_load_reservations error:\n  Unable to contact slurm controller\n", "r1")
    assert str(err.value) == ("scontrol show reservation r1 exited 1: slurm_load_reservations error: Unable to contact "
                              "slurm controller")


def test_the_create_command_is_an_argument_list_with_what_is_given():
    assert sn.reservation_create_argv("/s", "r1", ["n1", "n2"], 61, ["root"], ["maint"]) == [
        "/s", "create", "reservation", "ReservationName=r1", "Nodes=n1,n2", "StartTime=now", "Duration=61",
        "Users=root", "Flags=maint"]
    assert sn.reservation_create_argv("/s", "r1", ["n1"], 5, [], [])[-1] == "Duration=5"
    assert sn.reservation_delete_argv("/s", "r1") == ["/s", "delete", "ReservationName=r1"]


@pytest.mark.parametrize("record, state, nodes, plan", [
    (None, "reserved", ["n2", "n1"], ("create", "reserve n1,n2 for r1", False)),
    ({"nodes": ["n1", "n2"]}, "reserved", ["n2", "n1"], (None, "the reservation r1 holds n1,n2 already", False)),
    ({"nodes": ["n3"]}, "reserved", ["n1"],
     (None, "a reservation r1 holds n3, not n1; release it first or choose another name", True)),
    ({"nodes": ["n1"]}, "released", [], ("delete", "release the reservation r1 of n1", False)),
    (None, "released", [], (None, "no reservation r1: nothing to release", False)),
])
def test_the_plan_for_each_state(record, state, nodes, plan):
    assert sn.reservation_plan(record, state, "r1", nodes) == plan


@pytest.mark.parametrize("kwargs, problem", [
    (dict(nodes=["n1"], duration=1, users=["root"], flags=["maint"]), None),
    (dict(nodes=["n1"], duration=True), "duration must be a whole number of minutes, 1 or more, not True"),
    (dict(nodes=["n1"], duration=5, users=["a b"]), "user 'a b' is not one word without '=' or ','"),
    (dict(nodes=["n1"], duration=5, flags=["x=y"]), "flag 'x=y' is not one word without '=' or ','"),
])
def test_options_that_scontrol_cannot_take_are_named(kwargs, problem):
    assert sn.reservation_problem("r1", creating=True, **kwargs) == problem
