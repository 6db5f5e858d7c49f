# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import itertools
import random

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils import nccl_pairing


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
