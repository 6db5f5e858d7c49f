# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Find the bad nodes of a cluster with 2-node runs in parallel rounds.

Model: a 2-node run passes when both nodes are good.  Each round is a set of
disjoint pairs (a node's GPUs take part in one run at a time) that run in
parallel.

Round 1 pairs every node with a neighbour.  A passing pair clears both nodes;
a failing pair makes both suspects.  Later rounds put each suspect next to a
distinct known-good node, so a failure names the suspect.  When there are
fewer good nodes than suspects, one suspect of each failed pair goes first: if
it turns out good, its old partner must be the bad one (deduction).  Suspects
with no good partner are paired with each other (never a pair already run).
With at most a quarter of the nodes bad this names every bad node within
three rounds (the unit tests check it for 2..64 nodes).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

GOOD = "good"
BAD = "bad"
UNKNOWN = "unknown"


def _key(a, b):
    return tuple(sorted((a, b)))


class PairSearch(object):
    def __init__(self, nodes, max_rounds=3):
        seen = []
        for n in nodes:
            if n not in seen:
                seen.append(n)
        self.nodes = seen
        self.max_rounds = max_rounds
        self.status = dict((n, UNKNOWN) for n in seen)
        self.reason = dict((n, "not tested") for n in seen)
        self.tested = set()
        self.failed = []      # failed pairs (a, b), in order
        self.rounds = []      # [[{"pair": [a, b], "ok": bool}, ...], ...]
        self.notes = []

    # --- planning ---------------------------------------------------------
    def first_round(self):
        n = self.nodes
        return [(n[i], n[i + 1]) for i in range(0, len(n) - 1, 2)]

    def next_round(self):
        unknown = [n for n in self.nodes if self.status[n] == UNKNOWN]
        if not unknown:
            return []
        goods = [n for n in self.nodes if self.status[n] == GOOD]
        # one suspect per failed pair first, so deduction can clear the other
        first, second = [], []
        for a, b in self.failed:
            if self.status[a] == UNKNOWN and self.status[b] == UNKNOWN:
                if a not in first and a not in second:
                    first.append(a)
                if b not in first and b not in second:
                    second.append(b)
        order = first + second + [u for u in unknown if u not in first and u not in second]
        order = [u for u in order if self.status[u] == UNKNOWN]
        pairs, used = [], set()
        if len(goods) >= len(order):
            chosen = order
        else:
            chosen = order[:len(goods)]
        for u in chosen:
            g = goods.pop(0)
            pairs.append((u, g))
            used.update((u, g))
        # the rest: pair unknowns with each other where that pair is new
        rest = [u for u in order if u not in used]
        while rest:
            u = rest.pop(0)
            for v in rest:
                if _key(u, v) not in self.tested:
                    rest.remove(v)
                    pairs.append((u, v))
                    break
        return pairs

    # --- results ----------------------------------------------------------
    def record(self, results):
        rnd = []
        for pair, ok in results:
            a, b = pair
            self.tested.add(_key(a, b))
            rnd.append({"pair": [a, b], "ok": bool(ok)})
            if ok:
                for n, other in ((a, b), (b, a)):
                    if self.status[n] == BAD:
                        self.notes.append("%s was judged bad but passed with %s" % (n, other))
                    elif self.status[n] == UNKNOWN:
                        self.status[n] = GOOD
                        self.reason[n] = "passed with %s" % other
            else:
                self.failed.append((a, b))
        self.rounds.append(rnd)
        self._deduce()

    def _deduce(self):
        changed = True
        while changed:
            changed = False
            # latest failures first: they are the runs with a known-good partner
            for a, b in reversed(self.failed):
                for x, y in ((a, b), (b, a)):
                    if self.status[x] == GOOD and self.status[y] == UNKNOWN:
                        self.status[y] = BAD
                        self.reason[y] = "failed with %s, which is good" % x
                        changed = True

    def run(self, run_round):
        pairs = self.first_round()
        while pairs and len(self.rounds) < self.max_rounds:
            results = run_round(list(pairs))
            self.record([(p, results.get(p, results.get(_key(*p), False))) for p in pairs])
            pairs = self.next_round()
        for n in self.nodes:
            if self.status[n] == UNKNOWN:
                self.reason[n] = ("not isolated: no known-good partner" if self.failed or len(self.nodes) < 2
                                  else "not tested")
        return self.summary()

    def summary(self):
        for a, b in self.failed:
            if self.status[a] == GOOD and self.status[b] == GOOD:
                note = ("%s and %s both passed other runs but failed together (flaky, or a fault "
                        "between the two)" % (a, b))
                if note not in self.notes:
                    self.notes.append(note)
        return {
            "bad": [n for n in self.nodes if self.status[n] == BAD],
            "good": [n for n in self.nodes if self.status[n] == GOOD],
            "unknown": [n for n in self.nodes if self.status[n] == UNKNOWN],
            "nodes": dict((n, {"status": self.status[n], "reason": self.reason[n]}) for n in self.nodes),
            "rounds": self.rounds,
            "notes": self.notes,
        }


def find_bad_nodes(nodes, run_round, max_rounds=3):
    """Run the search.  run_round(pairs) -> {(a, b): passed} for a list of disjoint pairs."""
    return PairSearch(nodes, max_rounds=max_rounds).run(run_round)
