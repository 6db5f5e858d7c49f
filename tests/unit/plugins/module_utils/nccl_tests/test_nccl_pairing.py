# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import itertools
import random

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_pairing


class FakeRunner(object):
    """A pair passes when neither node is bad; checks that each round's pairs are disjoint."""

    def __init__(self, bad):
        self.bad = set(bad)
        self.rounds = []

    def __call__(self, pairs):
        flat = [n for p in pairs for n in p]
        assert len(flat) == len(set(flat)), "a node ran in two pairs of one round: %r" % (pairs,)
        assert all(a != b for a, b in pairs)
        self.rounds.append(list(pairs))
        return dict((p, not (set(p) & self.bad)) for p in pairs)


def bad_sets(nodes, nbad, rng):
    if nbad == 0:
        return [()]
    combos = list(itertools.combinations(nodes, nbad))
    if len(combos) <= 60:
        return combos
    return rng.sample(combos, 60)


CASES = [(n, b) for n in range(2, 65) for b in range(0, 4) if 4 * b <= n]


@pytest.mark.parametrize("n,nbad", CASES)
def test_finds_every_bad_node_in_three_rounds(n, nbad):
    rng = random.Random(n * 10 + nbad)
    nodes = ["node%02d" % i for i in range(n)]
    for bad in bad_sets(nodes, nbad, rng):
        for order in (nodes, rng.sample(nodes, n)):
            runner = FakeRunner(bad)
            res = nccl_pairing.find_bad_nodes(order, runner, max_rounds=3)
            assert sorted(res["bad"]) == sorted(bad), (order, bad, runner.rounds)
            assert res["unknown"] == [], (order, bad, runner.rounds)
            assert sorted(res["good"]) == sorted(set(nodes) - set(bad))
            assert len(runner.rounds) <= 3
            assert len(res["rounds"]) == len(runner.rounds)


@pytest.mark.parametrize("n", [2, 3, 5, 8, 9, 16])
def test_never_names_a_good_node_even_with_many_bad(n):
    rng = random.Random(n)
    nodes = ["n%d" % i for i in range(n)]
    for nbad in range(n + 1):
        for bad in bad_sets(nodes, nbad, rng)[:10]:
            res = nccl_pairing.find_bad_nodes(nodes, FakeRunner(bad), max_rounds=3)
            assert set(res["bad"]) <= set(bad)
            assert not set(res["good"]) & set(bad)


def test_no_bad_nodes_takes_one_round_for_even_n():
    runner = FakeRunner([])
    res = nccl_pairing.find_bad_nodes(["a", "b", "c", "d"], runner)
    assert len(runner.rounds) == 1 and res["good"] == ["a", "b", "c", "d"]


def test_odd_leftover_tested_in_round_two():
    runner = FakeRunner(["e"])
    res = nccl_pairing.find_bad_nodes(["a", "b", "c", "d", "e"], runner)
    assert runner.rounds[0] == [("a", "b"), ("c", "d")]
    assert res["bad"] == ["e"] and res["nodes"]["e"]["reason"].startswith("failed with ")
    assert len(runner.rounds) == 2


def test_two_nodes_one_bad_cannot_be_isolated():
    res = nccl_pairing.find_bad_nodes(["a", "b"], FakeRunner(["a"]))
    assert res["bad"] == [] and res["unknown"] == ["a", "b"]
    assert "not isolated" in res["nodes"]["a"]["reason"]


def test_flaky_pair_is_noted():
    calls = []

    def runner(pairs):
        calls.append(pairs)
        if len(calls) == 1:
            return dict((p, p != ("a", "b")) for p in pairs)
        return dict((p, True) for p in pairs)

    res = nccl_pairing.find_bad_nodes(["a", "b", "c", "d"], runner)
    assert res["bad"] == [] and set(res["good"]) == {"a", "b", "c", "d"}
    assert any("a and b both passed" in n for n in res["notes"])


def test_duplicate_nodes_are_dropped():
    res = nccl_pairing.find_bad_nodes(["a", "b", "a", "c", "d"], FakeRunner([]))
    assert sorted(res["good"]) == ["a", "b", "c", "d"]


def layout(blocks, subs, per_sub):
    topo = {}
    for b in range(blocks):
        for s in range(subs):
            for h in range(per_sub):
                topo["b%ds%dn%d" % (b, s, h)] = {"cluster": "c", "block": "b%d" % b, "subBlock": "s%d" % s,
                                                 "host": "h%d%d%d" % (b, s, h)}
    return topo


class FabricRunner(FakeRunner):
    """Also fails runs that leave a bad sub-block, or that go between a slow pair of sub-blocks."""

    def __init__(self, topo, bad=(), bad_sub=None, slow_link=None):
        super(FabricRunner, self).__init__(bad)
        self.where = dict((n, (t["block"], t["subBlock"])) for n, t in topo.items())
        self.bad_sub, self.slow_link = bad_sub, set(slow_link or ())

    def __call__(self, pairs):
        out = super(FabricRunner, self).__call__(pairs)
        for a, b in pairs:
            sa, sb = self.where[a], self.where[b]
            if sa != sb and (self.bad_sub in (sa, sb) or set((sa, sb)) == self.slow_link):
                out[(a, b)] = False
        return out


def test_round_one_stays_inside_sub_blocks_and_later_rounds_probe_every_pair_of_them():
    topo = layout(2, 2, 2)
    runner = FabricRunner(topo)
    res = nccl_pairing.find_bad_nodes(sorted(topo, reverse=True), runner, topology=topo)
    assert all(a[:4] == b[:4] for a, b in runner.rounds[0])
    crossed = set(tuple(sorted((a[:4], b[:4]))) for rnd in runner.rounds[1:] for a, b in rnd)
    assert len(crossed) == 6 and len(runner.rounds) == 3
    assert res["bad"] == [] and res["fabric"] == {"bad": [], "suspect": []}
    assert res["rounds"][0][0]["locality"] == "subblock"


@pytest.mark.parametrize("link", [(("b0", "s0"), ("b0", "s1")), (("b0", "s1"), ("b1", "s0"))])
def test_a_slow_path_between_two_sub_blocks_is_named_and_no_node_is_blamed(link):
    topo = layout(2, 2, 2)
    res = nccl_pairing.find_bad_nodes(sorted(topo), FabricRunner(topo, slow_link=link), topology=topo)
    assert res["bad"] == [] and res["unknown"] == []
    assert [f["part"] for f in res["fabric"]["bad"]] == [
        ["link", ("c/%s/%s" % link[0], "c/%s/%s" % link[1])]]
    assert res["fabric"]["suspect"] == []
    assert not res["notes"]


@pytest.mark.parametrize("link", [(("b0", "s0"), ("b1", "s0")), (("b0", "s0"), ("b1", "s1")),
                                  (("b0", "s1"), ("b1", "s1")), (("b0", "s0"), ("b0", "s1"))])
def test_a_slow_path_is_named_when_a_sub_block_holds_a_single_node(link):
    # 6 nodes as the sandbox places them: sub-blocks of 2, 1, 2 and 1 nodes
    topo = dict((n, t) for n, t in layout(2, 2, 2).items() if not n.endswith("s1n1"))
    assert len(topo) == 6
    res = nccl_pairing.find_bad_nodes(sorted(topo), FabricRunner(topo, slow_link=link), topology=topo)
    assert res["bad"] == [] and res["unknown"] == []
    assert [f["part"] for f in res["fabric"]["bad"]] == [
        ["link", ("c/%s/%s" % link[0], "c/%s/%s" % link[1])]]
    assert res["fabric"]["suspect"] == []


def test_a_bad_sub_block_uplink_is_named_as_such_beside_a_bad_node_elsewhere():
    topo = layout(2, 4, 4)
    runner = FabricRunner(topo, bad=["b1s3n2"], bad_sub=("b0", "s2"))
    res = nccl_pairing.find_bad_nodes(sorted(topo), runner, topology=topo)
    assert res["bad"] == ["b1s3n2"] and res["unknown"] == []
    assert [f["part"] for f in res["fabric"]["bad"]] == [["subblock", "c/b0/s2"]]
    assert res["fabric"]["bad"][0]["what"] == "sub-block c/b0/s2 uplink" and res["fabric"]["bad"][0]["runs"]
    assert len(runner.rounds) <= 3


def test_a_suspect_is_isolated_inside_its_own_sub_block_first():
    topo = layout(1, 2, 4)
    runner = FabricRunner(topo, bad=["b0s0n1"])
    res = nccl_pairing.find_bad_nodes(sorted(topo), runner, topology=topo)
    assert res["bad"] == ["b0s0n1"]
    isolation = [p for p in runner.rounds[1] if "b0s0n0" in p or "b0s0n1" in p]
    assert isolation and all(a[:4] == b[:4] for a, b in isolation)


@pytest.mark.parametrize("pairing,level", [("inter_subblock", 4), ("inter_block", 2)])
def test_pairing_modes_cross_sub_blocks_or_blocks_in_round_one(pairing, level):
    topo = layout(2, 2, 4)
    runner = FabricRunner(topo)
    nccl_pairing.find_bad_nodes(sorted(topo), runner, topology=topo, pairing=pairing)
    assert runner.rounds[0] and all(a[:level] != b[:level] for a, b in runner.rounds[0])
    if pairing == "inter_subblock":
        assert all(a[:2] == b[:2] for a, b in runner.rounds[0])


def test_unknown_pairing_is_refused():
    with pytest.raises(ValueError, match="pairing must be one of"):
        nccl_pairing.PairSearch(["a", "b"], pairing="rack")


def test_a_sub_block_where_no_node_passed_is_a_suspect_not_a_verdict():
    topo = layout(2, 2, 2)
    res = nccl_pairing.find_bad_nodes(sorted(topo), FabricRunner(topo, bad=["b1s0n0", "b1s0n1"]), topology=topo)
    assert res["bad"] == [] and res["unknown"] == ["b1s0n0", "b1s0n1"]
    assert res["fabric"]["bad"] == []
    assert res["fabric"]["suspect"][0]["what"] == (
        "sub-block c/b1/s0 uplink or node b1s0n0 or node b1s0n1")


# --- stages, the boundary stage and what isolation took ---------------------------------------------------------

def test_every_run_says_the_stage_that_planned_it():
    res = nccl_pairing.find_bad_nodes(["a", "b", "c", "d"], FakeRunner(["c"]))
    assert [[e["stage"] for e in rnd] for rnd in res["rounds"]] == [["screen", "screen"], ["isolate", "isolate"]]
    topo = layout(2, 2, 2)
    res = nccl_pairing.find_bad_nodes(sorted(topo), FabricRunner(topo), topology=topo)
    assert set(e["stage"] for e in res["rounds"][0]) == {"screen"}
    assert set(e["stage"] for rnd in res["rounds"][1:] for e in rnd) == {"probe"}


def crossed(rounds, topo):
    """The sub-blocks and blocks whose boundary a run crossed."""
    subs, blocks = set(), set()
    for rnd in rounds:
        for a, b in rnd:
            (ba, sa), (bb, sb) = [(topo[n]["block"], topo[n]["block"] + topo[n]["subBlock"]) for n in (a, b)]
            if sa != sb:
                subs.update((sa, sb))
            if ba != bb:
                blocks.update((ba, bb))
    return subs, blocks


def test_the_boundary_stage_crosses_every_boundary_the_rounds_left():
    topo = layout(2, 2, 2)
    runner = FabricRunner(topo)
    res = nccl_pairing.find_bad_nodes(sorted(topo), runner, topology=topo, max_rounds=1)
    assert crossed(runner.rounds[:1], topo) == (set(), set())
    assert len(runner.rounds) == 2 and set(e["stage"] for e in res["rounds"][1]) == {"boundary"}
    assert crossed(runner.rounds, topo) == ({"b0s0", "b0s1", "b1s0", "b1s1"}, {"b0", "b1"})
    # a sub-block's boundary next to a sub-block of its own block first
    assert ("b0s0n1", "b0s1n0") in [tuple(sorted(p)) for p in runner.rounds[1]]
    assert res["bad"] == [] and res["fabric"] == {"bad": [], "suspect": []}


def test_the_boundary_stage_names_a_bad_uplink_the_rounds_never_crossed():
    topo = layout(2, 2, 4)
    res = nccl_pairing.find_bad_nodes(sorted(topo), FabricRunner(topo, bad_sub=("b1", "s0")), topology=topo,
                                      max_rounds=1)
    assert [f["part"] for f in res["fabric"]["bad"]] == [["subblock", "c/b1/s0"]]
    assert res["bad"] == [] and res["unknown"] == []
    # without it the bad uplink goes unseen
    res = nccl_pairing.find_bad_nodes(sorted(topo), FabricRunner(topo, bad_sub=("b1", "s0")), topology=topo,
                                      max_rounds=1, cross_boundary=False)
    assert res["fabric"] == {"bad": [], "suspect": []} and len(res["rounds"]) == 1


def test_no_boundary_stage_where_the_rounds_crossed_every_boundary_or_the_pairing_stays_inside():
    topo = layout(2, 2, 2)
    res = nccl_pairing.find_bad_nodes(sorted(topo), FabricRunner(topo), topology=topo)
    assert len(res["rounds"]) == 3 and res["isolation"]["stages"]["boundary"] == 0
    res = nccl_pairing.find_bad_nodes(sorted(topo), FabricRunner(topo), topology=topo, max_rounds=1,
                                      pairing="intra_subblock")
    assert len(res["rounds"]) == 1
    # no placement, no boundary
    res = nccl_pairing.find_bad_nodes(["a", "b", "c", "d"], FakeRunner([]), max_rounds=1)
    assert len(res["rounds"]) == 1


def test_the_boundary_stage_pairs_only_good_nodes_and_each_once():
    topo = layout(2, 2, 2)
    runner = FabricRunner(topo, bad=["b0s1n0", "b0s1n1"])
    res = nccl_pairing.find_bad_nodes(sorted(topo), runner, topology=topo, max_rounds=1)
    stage = [tuple(e["pair"]) for e in res["rounds"][-1] if e["stage"] == "boundary"]
    assert stage and not set(n for p in stage for n in p) & {"b0s1n0", "b0s1n1"}


@pytest.mark.parametrize("n,bound", [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3), (64, 6), (65, 7), (1024, 10)])
def test_the_log2_bound(n, bound):
    assert nccl_pairing.log2_bound(n) == bound


def test_the_extra_runs_figure():
    rounds = [[{"stage": "screen"}] * 4, [{"stage": "isolate"}] * 3 + [{"stage": "probe"}],
              [{"stage": "isolate"}, {"stage": "boundary"}, {}]]
    assert nccl_pairing.isolation_cost(rounds, 8) == {
        "nodes": 8, "rounds": 3, "runs": 11, "extra_runs": 4, "log2_bound": 3, "ratio": 1.33,
        "stages": {"screen": 5, "isolate": 4, "probe": 1, "boundary": 1}}
    assert nccl_pairing.isolation_cost([], 2)["ratio"] == 0.0


@pytest.mark.parametrize("n,nbad", [(8, 1), (16, 2), (64, 3)])
def test_isolation_stays_within_a_few_log2_bounds(n, nbad):
    rng = random.Random(n)
    nodes = ["node%02d" % i for i in range(n)]
    for bad in bad_sets(nodes, nbad, rng)[:20]:
        res = nccl_pairing.find_bad_nodes(nodes, FakeRunner(bad))
        figure = res["isolation"]
        assert figure["nodes"] == n and figure["runs"] == sum(len(r) for r in res["rounds"])
        # a bad node makes two suspects (it and its round-1 partner), each run once next to a good node; the
        # node left over by an odd pairing and a suspect left to a later round add at most two
        assert figure["extra_runs"] <= 2 * nbad + 2 and figure["ratio"] <= float(2 * nbad + 2) / figure["log2_bound"]


def test_nodes_whose_host_failed_before_go_first_each_beside_the_nearest_node_without_history():
    topo = layout(1, 2, 4)
    history = ["b0s1n3", "b0s0n2"]
    runner = FabricRunner(topo, bad=["b0s1n3"])
    res = nccl_pairing.find_bad_nodes(sorted(topo), runner, topology=topo, history=history)
    first = runner.rounds[0]
    # in the nodes' order, each beside a node of its own sub-block that has no history
    assert first[:2] == [("b0s0n2", "b0s0n0"), ("b0s1n3", "b0s1n0")]
    assert sorted(n for pair in first for n in pair) == sorted(topo)
    assert res["bad"] == ["b0s1n3"] and res["unknown"] == []
    # without history round 1 is what it always was
    plain = FabricRunner(topo)
    nccl_pairing.find_bad_nodes(sorted(topo), plain, topology=topo)
    assert plain.rounds[0][0] == ("b0s0n0", "b0s0n1")


def test_more_nodes_with_history_than_without_pairs_the_rest_among_themselves():
    nodes = ["a", "b", "c", "d", "e"]
    runner = FakeRunner([])
    res = nccl_pairing.find_bad_nodes(nodes, runner, history=["a", "b", "c", "d", "x"])
    assert runner.rounds[0] == [("a", "e"), ("b", "c")]
    assert sorted(res["good"]) == ["a", "b", "c", "d", "e"]
