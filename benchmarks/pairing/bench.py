# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Simulate the pairwise search (gpudirect.gcp's nccl_pairing) on clusters of 8 to 1024 nodes
laid out in blocks and sub-blocks, with 0..3 bad nodes and 0..1 bad sub-block uplinks, and
print how often it names exactly the faults, in how many parallel rounds, with how many runs.

    python benchmarks/pairing/bench.py [--trials 40] [--sizes 8,16,...] [--seed 1]

A run passes when both nodes are good and it does not leave or enter a bad
sub-block.  "exact" means: every bad node named bad, the bad sub-block named as
a sub-block uplink, and nothing else blamed (no healthy node, no other part).
"""

from __future__ import absolute_import, division, print_function

import argparse
import os
import random
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "build", "collections"))

from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_pairing  # noqa: E402


def layout(n):
    """Blocks x sub-blocks x nodes: 2x2x2 at 8 nodes, sub-blocks of up to 16 nodes, 4 sub-blocks a block."""
    per_sub = 2 if n <= 16 else (4 if n <= 64 else 16)
    subs = n // per_sub
    per_block = 2 if subs <= 4 else 4
    topo = {}
    for i in range(n):
        sub = i // per_sub
        topo["n%04d" % i] = {"cluster": "c", "block": "b%d" % (sub // per_block), "subblock": "s%d" % sub,
                             "host": "h%d" % i}
    return topo


class Fabric(object):
    def __init__(self, topo, bad_nodes, bad_sub):
        self.topo, self.bad_nodes, self.bad_sub = topo, set(bad_nodes), bad_sub
        self.rounds, self.runs = 0, 0

    def __call__(self, pairs):
        flat = [n for p in pairs for n in p]
        assert len(flat) == len(set(flat)), "a node in two runs of one round"
        self.rounds += 1
        self.runs += len(pairs)
        out = {}
        for a, b in pairs:
            sa, sb = self.topo[a]["subblock"], self.topo[b]["subblock"]
            crosses = self.bad_sub is not None and sa != sb and self.bad_sub in (sa, sb)
            out[(a, b)] = not (set((a, b)) & self.bad_nodes) and not crosses
        return out


def indistinguishable(topo, bad_nodes, bad_sub):
    """Faults no set of 2-node runs can tell apart: a sub-block with no good node (all its nodes bad, or one
    bad node and a bad uplink, fail exactly the same runs), or a bad sub-block with fewer than two good
    nodes (its good node meets either the bad node or the bad uplink in every run)."""
    for sub in set(t["subblock"] for t in topo.values()):
        members = [n for n in topo if topo[n]["subblock"] == sub]
        good = len(set(members) - set(bad_nodes))
        if good == 0 or (sub == bad_sub and good < 2):
            return True
    return False


def subblock_id(topo, sub):
    """The id the search gives a sub-block: cluster/block/sub-block."""
    if sub is None:
        return None
    place = [t for t in topo.values() if t["subblock"] == sub][0]
    return "%s/%s/%s" % (place["cluster"], place["block"], sub)


def exact(res, bad_nodes, bad_sub, topo):
    if sorted(res["bad"]) != sorted(bad_nodes) or res["unknown"]:
        return False
    want = [] if bad_sub is None else [["subblock", subblock_id(topo, bad_sub)]]
    got = [f["part"] for f in res["fabric"]["bad"]]
    return got == want and not res["fabric"]["suspect"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--sizes", default="8,16,32,64,128,256,512,1024")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    columns = ("nodes", "bad", "badsub", "tried", "unsolv", "exact", "max_rounds", "mean_runs", "plan_ms")
    print("%6s %6s %6s %6s %7s %7s %10s %10s %9s" % columns)
    worst = 0
    misses = []
    per_size = {}
    wrong = []
    for n in [int(x) for x in args.sizes.split(",")]:
        topo = layout(n)
        nodes = sorted(topo)
        subs = sorted(set(t["subblock"] for t in topo.values()))
        for nbad in range(4):
            for nsub in (0, 1):
                ok = rounds = runs = skipped = 0
                spent = 0.0
                for _trial in range(args.trials):
                    bad = rng.sample(nodes, nbad)
                    bad_sub = rng.choice(subs) if nsub else None
                    if indistinguishable(topo, bad, bad_sub):
                        skipped += 1
                        continue
                    fabric = Fabric(topo, bad, bad_sub)
                    start = time.time()
                    res = nccl_pairing.find_bad_nodes(rng.sample(nodes, n), fabric, topology=topo)
                    spent += time.time() - start
                    rounds = max(rounds, fabric.rounds)
                    runs += fabric.runs
                    if not set(res["bad"]) <= set(bad) or any(
                            f["part"] != ["subblock", subblock_id(topo, bad_sub)] for f in res["fabric"]["bad"]):
                        wrong.append((n, sorted(bad), bad_sub, res["bad"], res["fabric"]["bad"]))
                    if exact(res, bad, bad_sub, topo):
                        ok += 1
                    else:
                        misses.append((n, sorted(bad), bad_sub, res["bad"], res["unknown"], res["fabric"]))
                worst = max(worst, rounds)
                solvable = args.trials - skipped
                totals = per_size.setdefault(n, [0, 0, 0, 0])
                totals[0] += solvable
                totals[1] += ok
                totals[2] = max(totals[2], rounds)
                totals[3] += skipped
                print("%6d %6d %6d %6d %7d %7s %10d %10.1f %9.1f" % (
                    n, nbad, nsub, args.trials, skipped,
                    "%.0f%%" % (100.0 * ok / solvable) if solvable else "-", rounds,
                    runs / float(solvable) if solvable else 0.0, 1000 * spent / solvable if solvable else 0.0))
    print()
    print("%6s %9s %7s %8s %10s" % ("nodes", "solvable", "exact", "exact%", "max_rounds"))
    for n in sorted(per_size):
        solvable, ok, rounds, _skipped = per_size[n]
        print("%6d %9d %7d %7.1f%% %10d" % (n, solvable, ok, 100.0 * ok / max(1, solvable), rounds))
    print("most parallel rounds: %d; scenarios not named exactly: %d; scenarios where a healthy node or "
          "part was blamed: %d" % (worst, len(misses), len(wrong)))
    for item in wrong[:10]:
        print("  wrongly blamed: nodes=%d bad=%s bad_subblock=%s -> named %s, fabric %s" % item)
    for miss in misses[:10]:
        print("  missed: nodes=%d bad=%s bad_subblock=%s -> named %s, unknown %s, fabric %s" % miss)
    return 0 if not wrong and worst <= 3 else 1


if __name__ == "__main__":
    sys.exit(main())
