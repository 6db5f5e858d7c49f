# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Diagnose benchmark on SANDBOX clusters: wall time of the node checks alone and of the whole
diagnosis (node checks, pairwise NCCL tests with the STAND-IN *_perf programs, report), on 2 and on
4 nodes, with the ratio between them.

Each size gets its own sandbox, configured once with site.yml's configuration phases, then
diagnosed --repeat times per variant; the median is reported. The sandboxes are removed at the end
(--keep leaves them).
"""

from __future__ import absolute_import, division, print_function

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SANDBOX = [sys.executable, os.path.join(ROOT, "tests", "sandbox", "sandbox.py")]
PLAYBOOK = os.path.join(ROOT, ".venv", "bin", "ansible-playbook")
# the targets a day-2 check is held to
NODE_CHECKS_TARGET_S = 30.0
SCALE_TARGET = 2.0


def run(argv, log, check=True):
    with open(log, "a") as fh:
        fh.write("\n$ %s\n" % " ".join(argv))
        fh.flush()
        rc = subprocess.call(argv, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
    if check and rc != 0:
        sys.exit("bench: %s failed (exit %d), see %s" % (" ".join(argv[:3]), rc, log))
    return rc


def timed(argv, log):
    start = time.monotonic()
    rc = run(argv, log, check=False)
    seconds = time.monotonic() - start
    if rc != 0:
        sys.exit("bench: diagnose found faults on a healthy sandbox (exit %d), see %s" % (rc, log))
    return seconds


def measure(nodes, family, repeat, work, keep):
    name = "bench-diag%d" % nodes
    log = os.path.join(work, "%s.log" % name)
    open(log, "w").close()
    inventory = os.path.join(ROOT, "build", "sandbox", name, "inventory.yml")
    run(SANDBOX + ["up", "--name", name, "--family", family, "--nodes", str(nodes)], log)
    try:
        run([PLAYBOOK, "-i", inventory, "gpudirect.gcp.site", "--skip-tags", "nccl_tests"], log)
        base = [PLAYBOOK, "-i", inventory, "gpudirect.gcp.diagnose", "-e",
                "diagnose_report_dir=%s" % os.path.join(work, name)]
        node_only = [timed(base + ["-e", "diagnose_nccl_tests=false"], log) for _run in range(repeat)]
        full = [timed(base, log) for _run in range(repeat)]
    finally:
        if not keep:
            run(SANDBOX + ["down", "--name", name], log, check=False)
    return statistics.median(node_only), statistics.median(full)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", default="a3-mega")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sizes", default="2,4", help="node counts, the smallest first")
    parser.add_argument("--keep", action="store_true", help="leave the sandboxes running")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    work = os.path.join(ROOT, "build", "bench-diagnose")
    os.makedirs(work, exist_ok=True)
    env_note = "SANDBOX (podman nodes, STAND-IN RxDM, plugin installer and *_perf programs) on %d CPU(s)" % (
        os.cpu_count() or 0)
    results = {}
    for nodes in sizes:
        results[nodes] = measure(nodes, args.family, args.repeat, work, args.keep)
        print("measured %d nodes: node checks %.1f s, whole diagnosis %.1f s" % ((nodes,) + results[nodes]),
              flush=True)
    print()
    print("diagnose benchmark, %s, family %s, median of %d" % (env_note, args.family, args.repeat))
    print("%-6s %18s %18s" % ("nodes", "node checks (s)", "diagnosis (s)"))
    for nodes in sizes:
        print("%-6d %18.1f %18.1f" % ((nodes,) + results[nodes]))
    small, large = sizes[0], sizes[-1]
    node_s = results[small][0]
    ratio = results[large][1] / results[small][1]
    print()
    print("node checks on %d nodes: %.1f s (target at most %.0f s): %s"
          % (small, node_s, NODE_CHECKS_TARGET_S, "met" if node_s <= NODE_CHECKS_TARGET_S else "MISSED"))
    print("whole diagnosis %d vs %d nodes: %.2fx (target at most %.1fx): %s"
          % (large, small, ratio, SCALE_TARGET, "met" if ratio <= SCALE_TARGET else "MISSED"))
    print("logs and reports: %s" % work)


if __name__ == "__main__":
    main()
