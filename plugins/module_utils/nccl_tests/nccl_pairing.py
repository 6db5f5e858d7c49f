# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Find the bad nodes, sub-blocks and links of a cluster with 2-node runs in parallel rounds.

Model: a 2-node run passes when both nodes are good and so is every part of the
fabric between them.  Two nodes of one sub-block meet below its uplink; nodes of
two sub-blocks cross both sub-blocks' uplinks and the path between them; nodes
of two blocks also cross both blocks' uplinks.  Each round is a set of disjoint
pairs (a node's GPUs take part in one run at a time) that run in parallel.

Round 1 pairs every node with a neighbour, by default inside its own sub-block
(no uplink involved), so a failure there points at the nodes.  Later rounds put
each suspect next to a distinct known-good node (of its own sub-block first),
so a failure names the suspect.  When there are fewer good nodes than suspects,
one suspect of each failed pair goes first: if it turns out good, its old
partner must be the bad one (deduction).  Known-good nodes left over probe the
fabric: pairs of sub-blocks not yet tested, those that failed first.  At the
end, a fabric part is bad when it alone explains a failed run of two good nodes,
or when it explains more such failures than any other part (one bad uplink
rather than several bad links); parts that tie are named as suspects, never as
faults.  Nodes without placement are paired in the given order and only ever
blamed as nodes.  The unit tests and benchmarks/pairing check that this finds
every fault within three rounds.

When those rounds end with a sub-block or a block whose boundary no run of two
good nodes has crossed (isolation took every round, or max_rounds is 1), one
more round, the boundary stage, pairs good nodes across each such boundary:
the sub-block's with a good node of another sub-block of its block, the
block's with one of another block.  Every run says which stage planned it
(STAGES), and isolation_cost() sets the runs isolation took against
ceil(log2(N)), the runs a binary search needs to find one bad node of N.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import topology as topo_mod

GOOD = "good"
BAD = "bad"
UNKNOWN = "unknown"
# how round 1 pairs nodes; later rounds always isolate suspects and probe the fabric
PAIRINGS = ("topology", "intra_subblock", "inter_subblock", "inter_block", "order")
# a node at most in this many fabric probes' coverage goal: two partners tell an uplink from a link
PROBE_PARTNERS = 2
# what planned a run, in the order the search runs them: round 1 pairs every node (screen); later rounds
# put suspects next to known-good nodes (isolate) and spare good nodes across sub-blocks (probe); the
# boundary stage crosses each sub-block and block boundary no run of two good nodes crossed
STAGES = ("screen", "isolate", "probe", "boundary")


def _key(a, b):
    return tuple(sorted((a, b)))


def describe(part):
    """A fabric part as words: ('subblock', id) -> 'sub-block id uplink', ..."""
    kind, what = part
    if kind == "subblock":
        return "sub-block %s uplink" % what
    if kind == "block":
        return "block %s uplink" % what
    if kind == "link":
        return "path between sub-blocks %s and %s" % what
    return "node %s" % what


class PairSearch(object):
    def __init__(self, nodes, max_rounds=3, topology=None, pairing="topology", cross_boundary=True, history=None):
        if pairing not in PAIRINGS:
            raise ValueError("pairing must be one of %s, got %r" % (", ".join(PAIRINGS), pairing))
        seen = []
        for n in nodes:
            if n not in seen:
                seen.append(n)
        self.pairing = pairing
        self.max_rounds = max_rounds
        # intra_subblock keeps every run inside a sub-block: no boundary stage there
        self.cross_boundary = bool(cross_boundary) and pairing != "intra_subblock"
        self.planned = {}     # pair key -> the stage that planned it (STAGES)
        placement = dict((n, topo_mod.normalize((topology or {}).get(n))) for n in seen)
        self.sub = dict((n, topo_mod.subblock_id(placement[n])) for n in seen)
        self.blk = dict((n, topo_mod.block_id(placement[n])) for n in seen)
        if pairing != "order" and any(self.sub.values()):
            # nodes of one sub-block next to each other, as the topological scripts order ranks
            seen = sorted(seen, key=lambda n: topo_mod.sort_key(placement[n], ""))
        self.nodes = seen
        # nodes whose physical host has a recent history in the fleet ledger: round 1 tests them first, each
        # beside a node without one, so that a failing pair points at the host that failed before
        self.history = [n for n in seen if n in set(history or ())]
        self.status = dict((n, UNKNOWN) for n in seen)
        self.reason = dict((n, "not tested") for n in seen)
        self.tested = set()
        self.failed = []      # failed pairs (a, b), in order
        self.rounds = []      # [[{"pair": [a, b], "ok": bool}, ...], ...]
        self.notes = []
        self.good_parts = set()
        self.fabric = {"bad": [], "suspect": []}

    # --- topology ---------------------------------------------------------
    def parts(self, a, b):
        """The fabric parts a run of a and b crosses (none when either has no placement)."""
        sa, sb = self.sub[a], self.sub[b]
        if not sa or not sb or sa == sb:
            return []
        out = [("subblock", sa), ("subblock", sb), ("link", _key(sa, sb))]
        if self.blk[a] != self.blk[b]:
            out += [("block", self.blk[a]), ("block", self.blk[b])]
        return out

    def locality(self, a, b):
        if not self.sub[a] or not self.sub[b]:
            return topo_mod.UNKNOWN
        if self.sub[a] == self.sub[b]:
            return topo_mod.SAME_SUBBLOCK
        return topo_mod.SAME_BLOCK if self.blk[a] == self.blk[b] else topo_mod.SAME_CLUSTER

    # --- planning ---------------------------------------------------------
    @staticmethod
    def _neighbours(seq):
        return [(seq[i], seq[i + 1]) for i in range(0, len(seq) - 1, 2)]

    # how close a partner is, for the history pairs: same sub-block first (no uplink on the way), then block
    _NEAR = (topo_mod.SAME_SUBBLOCK, topo_mod.SAME_BLOCK, topo_mod.SAME_CLUSTER, topo_mod.UNKNOWN)

    def _history_pairs(self):
        """Each node with host history beside the nearest node without, in the nodes' order; a node with history
        left over (more of them than of the others) is paired as round 1 pairs the rest."""
        others = [m for m in self.nodes if m not in self.history]
        pairs = []
        for m in self.history:
            if not others:
                break
            partner = min(others, key=lambda o: (self._NEAR.index(self.locality(m, o)), self.nodes.index(o)))
            others.remove(partner)
            pairs.append((m, partner))
        return pairs

    def first_round(self):
        lead = self._history_pairs()
        paired = set(m for pair in lead for m in pair)
        return lead + self._first_pairs([m for m in self.nodes if m not in paired])

    def _first_pairs(self, n):
        if self.pairing == "order" or not any(self.sub.values()):
            return self._neighbours(n)
        pairs, left = [], []
        if self.pairing in ("topology", "intra_subblock"):
            for sub in self._ordered_keys(n, self.sub):
                if not sub:
                    continue
                members = [m for m in n if self.sub[m] == sub]
                pairs += self._neighbours(members)
                if len(members) % 2:
                    left.append(members[-1])
        else:
            # across sub-blocks of one block, or across blocks: deal the groups' nodes out in turn,
            # so that neighbours come from different groups
            inner = self.blk if self.pairing == "inter_block" else self.sub
            outer = self.blk if self.pairing == "inter_subblock" else dict((m, None) for m in n)
            for top in self._ordered_keys(n, outer):
                members = [m for m in n if outer[m] == top and inner[m]]
                queues = [[m for m in members if inner[m] == g] for g in self._ordered_keys(members, inner)]
                seq = []
                while any(queues):
                    for queue in queues:
                        if queue:
                            seq.append(queue.pop(0))
                i = 0
                while i < len(seq) - 1:
                    if inner[seq[i]] != inner[seq[i + 1]]:
                        pairs.append((seq[i], seq[i + 1]))
                        i += 2
                    else:
                        left.append(seq[i])
                        i += 1
                left += seq[i:]
        left += [m for m in n if not self.sub[m]]
        return pairs + self._neighbours(left)

    def _ordered_keys(self, nodes, key):
        out = []
        for m in nodes:
            if key[m] not in out:
                out.append(key[m])
        return out

    def _partner_rank(self, suspect, good, open_parts):
        """Isolation partners: no suspect fabric on the way, then same sub-block, same block, any."""
        path = self.parts(suspect, good)
        return (sum(1 for p in path if p in open_parts),
                {topo_mod.SAME_SUBBLOCK: 0, topo_mod.SAME_BLOCK: 1, topo_mod.SAME_CLUSTER: 2}.get(
                    self.locality(suspect, good), 3), self.nodes.index(good))

    def next_round(self):
        unknown = [n for n in self.nodes if self.status[n] == UNKNOWN]
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
        chosen = order if len(goods) >= len(order) else order[:len(goods)]
        open_parts = self._open_parts(all_failures=True)
        for u in chosen:
            free = [g for g in goods if g not in used and _key(u, g) not in self.tested]
            if not free:
                continue
            g = min(free, key=lambda x: self._partner_rank(u, x, open_parts))
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
                    used.update((u, v))
                    break
        self._plan(pairs, "isolate")
        if self.pairing != "intra_subblock":
            pairs += self._plan(self._fabric_probes([g for g in goods if g not in used]), "probe")
        return pairs

    def _plan(self, pairs, stage):
        """The pairs, each noted as planned by stage (a pair run again takes its latest stage)."""
        for a, b in pairs:
            self.planned[_key(a, b)] = stage
        return pairs

    # --- the boundary stage -------------------------------------------------
    def _crossed(self):
        """(sub-blocks, blocks) whose boundary a run of two good nodes has crossed, passed or failed."""
        subs, blocks = set(), set()
        for a, b in self.tested:
            if self.status[a] != GOOD or self.status[b] != GOOD:
                continue
            if self.sub[a] and self.sub[b] and self.sub[a] != self.sub[b]:
                subs.update((self.sub[a], self.sub[b]))
            if self.blk[a] and self.blk[b] and self.blk[a] != self.blk[b]:
                blocks.update((self.blk[a], self.blk[b]))
        return subs, blocks

    def boundary_round(self):
        """Disjoint pairs of good nodes across each block boundary, then each sub-block boundary, that no run of
        two good nodes has crossed yet: a block's first, with a good node of another block (one whose boundary
        is open too, first); a sub-block's with a good node of another sub-block of its block first. [] when
        every boundary with a good node on each side has been crossed."""
        if not self.cross_boundary:
            return []
        goods = [n for n in self.nodes if self.status[n] == GOOD and self.sub[n]]
        subs, blocks = self._crossed()
        used, pairs = set(), []

        def take(node, others, key, open_keys):
            # the partner: a free good node of another group, one whose own boundary is open first
            free = [m for m in others if m not in used and key[m] != key[node] and _key(node, m) not in self.tested]
            if not free:
                return False
            partner = min(free, key=lambda m: (0 if key[m] in open_keys else 1, self.nodes.index(m)))
            pairs.append((node, partner))
            used.update((node, partner))
            for m in (node, partner):
                subs.add(self.sub[m])
                blocks.add(self.blk[m])
            return True

        for blk in self._ordered_keys(goods, self.blk):
            if blk in blocks or len(set(self.blk[g] for g in goods)) < 2:
                continue
            open_blocks = set(self.blk[g] for g in goods) - blocks
            for node in [g for g in goods if self.blk[g] == blk and g not in used]:
                if take(node, goods, self.blk, open_blocks):
                    break
        for sub in self._ordered_keys(goods, self.sub):
            if sub in subs:
                continue
            open_subs = set(self.sub[g] for g in goods) - subs
            for node in [g for g in goods if self.sub[g] == sub and g not in used]:
                # another sub-block of its own block first: that run crosses only the two sub-blocks' uplinks
                home = [m for m in goods if self.blk[m] == self.blk[node]]
                if take(node, home, self.sub, open_subs) or take(node, goods, self.sub, open_subs):
                    break
        return self._plan(pairs, "boundary")

    def _fabric_probes(self, free):
        """Pairs of known-good nodes across sub-blocks: implicated sub-blocks first, then untested pairs."""
        free = [n for n in free if self.sub[n]]
        subs = self._ordered_keys(free, self.sub)
        if len(subs) < 2:
            return []
        pool = dict((s, [n for n in free if self.sub[n] == s]) for s in subs)
        done = set(_key(self.sub[a], self.sub[b]) for a, b in self.tested
                   if self.sub[a] and self.sub[b] and self.sub[a] != self.sub[b])
        partners = dict((s, set()) for s in subs)
        for x, y in done:
            for s, t in ((x, y), (y, x)):
                if s in partners:
                    partners[s].add(t)
        implicated = set()
        for part in self._open_parts():
            if part[0] == "subblock":
                implicated.add(part[1])
            elif part[0] == "link":
                implicated.update(part[1])
            elif part[0] == "block":
                implicated.update(s for s in subs if self.blk[pool[s][0]] == part[1])
        wanted = []
        for i, s in enumerate(subs):
            for t in subs[i + 1:]:
                if _key(s, t) in done:
                    continue
                hot = (s in implicated) + (t in implicated)
                short = (len(partners[s]) < PROBE_PARTNERS) + (len(partners[t]) < PROBE_PARTNERS)
                same_block = self.blk[pool[s][0]] == self.blk[pool[t][0]]
                # a suspect next to a healthy sub-block first; then the least-tested; a block's own sub-blocks first
                wanted.append((-(hot == 1), -hot, -short, not same_block, subs.index(t) - i, s, t))
        wanted.sort()
        pairs = []
        for item in wanted:
            s, t = item[-2], item[-1]
            if pool[s] and pool[t]:
                pairs.append((pool[s].pop(0), pool[t].pop(0)))
        return pairs

    # --- results ----------------------------------------------------------
    def record(self, results):
        rnd = []
        for pair, ok in results:
            a, b = pair
            self.tested.add(_key(a, b))
            entry = {"pair": [a, b], "ok": bool(ok), "stage": self.planned.get(_key(a, b), STAGES[0])}
            if any(self.sub.values()):
                entry["locality"] = self.locality(a, b)
            rnd.append(entry)
            if ok:
                self.good_parts.update(self.parts(a, b))
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

    def _candidates(self, a, b):
        """What can explain a failed run of a and b, given what has passed."""
        out = [("node", n) for n in (a, b) if self.status[n] != GOOD]
        return out + [p for p in self.parts(a, b) if p not in self.good_parts]

    def _deduce(self):
        changed = True
        while changed:
            changed = False
            # latest failures first: they are the runs with a known-good partner
            for a, b in reversed(self.failed):
                cands = self._candidates(a, b)
                if len(cands) != 1 or cands[0][0] != "node":
                    continue
                y = cands[0][1]
                x = b if y == a else a
                if self.status[y] == UNKNOWN:
                    self.status[y] = BAD
                    self.reason[y] = "failed with %s, which is good" % x
                    changed = True

    def _fabric_failures(self):
        """Failed runs of two good nodes: only the fabric between them can explain them."""
        return [(a, b) for a, b in self.failed
                if self.status[a] == GOOD and self.status[b] == GOOD and self.parts(a, b)]

    def _open_parts(self, all_failures=False):
        """Fabric parts that failed runs not yet explained by a bad node cross and no pass has cleared.

        all_failures: also those of runs with a bad node (worth avoiding when choosing partners)."""
        parts = set()
        for a, b in self.failed:
            if BAD in (self.status[a], self.status[b]) and not all_failures:
                continue
            parts.update(p for p in self.parts(a, b) if p not in self.good_parts)
        return parts

    def _judge_fabric(self):
        """Name the fabric parts that explain the failed runs of good nodes (greedy, fewest parts)."""
        left = dict((_key(a, b), [p for p in self.parts(a, b) if p not in self.good_parts])
                    for a, b in self._fabric_failures())
        bad, suspect = [], []
        while left:
            cover = {}
            for pair, cands in left.items():
                for p in cands:
                    cover.setdefault(p, set()).add(pair)
            if not cover:
                break
            best = max(len(v) for v in cover.values())
            top = sorted(p for p, v in cover.items() if len(v) == best)
            alone = [p for p in top if any(left[pair] == [p] for pair in cover[p])]
            if alone or len(top) == 1:
                pick = alone[0] if alone else top[0]
                bad.append(pick)
                explained = cover[pick]
            else:
                # several parts explain the same runs equally well: suspects, not faults
                same = [p for p in top if cover[p] == cover[top[0]]]
                suspect.append(same)
                explained = cover[top[0]]
            for pair in explained:
                left.pop(pair, None)
        # a sub-block none of whose nodes passed: its nodes, or its uplink and one of them, fail the same runs
        for sub in self._ordered_keys(self.nodes, self.sub):
            members = [n for n in self.nodes if self.sub[n] == sub]
            if sub and len(members) < len(self.nodes) and not any(self.status[n] == GOOD for n in members) \
                    and any(self.status[n] == UNKNOWN for n in members):
                suspect.append([("subblock", sub)] + [("node", n) for n in members])
        self.fabric = {
            "bad": [{"part": list(p), "what": describe(p), "runs": self._runs_of(p)} for p in bad],
            "suspect": [{"parts": [list(p) for p in group], "what": " or ".join(describe(p) for p in group)}
                        for group in suspect],
        }

    def _runs_of(self, part):
        """The failed runs of good nodes that crossed a fabric part, as 'a+b'."""
        return sorted("+".join(_key(a, b)) for a, b in self._fabric_failures() if part in self.parts(a, b))

    def _run_round(self, run_round, pairs):
        results = run_round(list(pairs))
        self.record([(p, results.get(p, results.get(_key(*p), False))) for p in pairs])

    def run(self, run_round):
        pairs = self._plan(self.first_round(), "screen")
        while pairs and len(self.rounds) < self.max_rounds:
            self._run_round(run_round, pairs)
            if not self._more_to_learn():
                break
            pairs = self.next_round()
        # one round beyond max_rounds, only where a boundary is left that no run of good nodes crossed
        pairs = self.boundary_round() if self.rounds else []
        if pairs:
            self._run_round(run_round, pairs)
        for n in self.nodes:
            if self.status[n] == UNKNOWN:
                self.reason[n] = ("not isolated: no known-good partner" if self.failed or len(self.nodes) < 2
                                  else "not tested")
        return self.summary()

    def _more_to_learn(self):
        if any(s == UNKNOWN for s in self.status.values()) or self._open_parts():
            return True
        if self.pairing in ("order", "intra_subblock") or not any(self.sub.values()):
            return False
        # sub-block pairs not tested yet, while rounds are left
        subs = [s for s in self._ordered_keys(self.nodes, self.sub) if s]
        done = set(_key(self.sub[a], self.sub[b]) for a, b in self.tested)
        return any(_key(s, t) not in done for i, s in enumerate(subs) for t in subs[i + 1:])

    def summary(self):
        self._judge_fabric()
        for a, b in self.failed:
            # runs that crossed the fabric are the fabric judge's; these two met below any uplink
            if self.status[a] == GOOD and self.status[b] == GOOD and not self.parts(a, b):
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
            "fabric": self.fabric,
            "isolation": isolation_cost(self.rounds, len(self.nodes)),
        }


def log2_bound(nodes):
    """ceil(log2(N)): the runs a binary search takes to find one bad node among N (at least 1)."""
    return max(1, int(math.ceil(math.log(max(int(nodes), 2), 2))))


def isolation_cost(rounds, nodes):
    """What the search took, against the log2 bound: {nodes, rounds, runs, stages {stage: runs}, extra_runs (the
    isolate stage's runs: those beyond the screen spent naming suspects), log2_bound, ratio (extra_runs /
    log2_bound, two decimals)}. rounds: the search's rounds; a run without a stage is a screen run."""
    stages = dict((stage, 0) for stage in STAGES)
    runs = 0
    for rnd in rounds or []:
        for entry in rnd or []:
            stage = entry.get("stage") if isinstance(entry, dict) else None
            stages[stage if stage in stages else STAGES[0]] += 1
            runs += 1
    bound = log2_bound(nodes)
    extra = stages["isolate"]
    return {"nodes": int(nodes), "rounds": len(rounds or []), "runs": runs, "stages": stages, "extra_runs": extra,
            "log2_bound": bound, "ratio": round(extra / float(bound), 2)}


def find_bad_nodes(nodes, run_round, max_rounds=3, topology=None, pairing="topology", cross_boundary=True,
                   history=None):
    """Run the search.  run_round(pairs) -> {(a, b): passed} for a list of disjoint pairs.

    topology: node -> placement mapping (gce_topology); pairing: how round 1 pairs nodes (PAIRINGS);
    cross_boundary: run the boundary stage where the rounds left a boundary uncrossed; history: the nodes
    whose physical host has a recent history (the fleet ledger), paired first in round 1."""
    return PairSearch(nodes, max_rounds=max_rounds, topology=topology, pairing=pairing,
                      cross_boundary=cross_boundary, history=history).run(run_round)
