# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Job watch benchmark: the node agent's CPU for one poll of a large job (figures, printed).

A poll asks NCCL RAS for the job's status (here a 64-node, 512-rank status in RAS's JSON, served by
the RAS stand-in over a real socket), judges it, reads a node's 8 NCCL Inspector files (one a GPU,
each with 8 communicators x 3 collectives x 4 size buckets) and renders the metrics file. Prints the
CPU of one poll and its share of one core at the default 10-s poll.
  make bench-job-watch                     (or: .venv/bin/python benchmarks/job_watch/bench.py --polls 100)
"""

import argparse
import os
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "build", "collections"))

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import job_watch  # noqa: E402
from ansible_collections.gpudirect.gcp.tests.unit.standins.ras_standin import Ras  # noqa: E402

COLLECTIVES = ("AllReduce", "AllGather", "ReduceScatter")
SIZES = ("1-2MB", "64-65MB", "512-513MB", "4-5GB")


def inspector_files(directory, gpus=8, comms=8):
    for gpu in range(gpus):
        lines = []
        for comm in range(comms):
            for collective in COLLECTIVES:
                for size in SIZES:
                    labels = ('version="v5.1",slurm_job_id="4242",node="a3m-node-1",gpu="GPU%d",comm_name="PP %d",'
                              'n_nodes="64",nranks="512",collective="%s",message_size="%s",algo_proto="RING_SIMPLE"'
                              % (gpu, comm, collective, size))
                    lines.append("nccl_bus_bandwidth_gbs{%s} %.6g" % (labels, 180.0 + gpu))
                    lines.append("nccl_collective_exec_time_microseconds{%s} %.6g" % (labels, 25000.0))
        with open(os.path.join(directory, "nccl_inspector_metrics_gpu%d.prom" % gpu), "w") as handle:
            handle.write("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--polls", type=int, default=100)
    parser.add_argument("--poll-interval", type=float, default=10.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        inspector_files(work)
        standins = Ras(work)
        try:
            port = standins.start(hosts=["10.0.%d.%d" % (n // 250, n % 250 + 2) for n in range(64)], ranks_per_host=8)
            watch = job_watch.JobWatch(port=port, inspector_dir=work)
            watch.poll()  # the first poll opens the event stream
            cpu0, wall0 = time.process_time(), time.monotonic()
            for _poll in range(args.polls):
                watch.poll()
                text = watch.metrics(time.time())
            cpu = (time.process_time() - cpu0) / args.polls
            wall = (time.monotonic() - wall0) / args.polls
        finally:
            standins.stop()
    ranks = sum(1 for line in text.splitlines() if line.startswith("gpudirect_job_bus_bandwidth_gbs"))
    print("job watch, one poll of a 512-rank job and 8 Inspector files (%d series): %.1f ms CPU (agent), "
          "%.1f ms wall (RAS stand-in included)" % (ranks, cpu * 1000, wall * 1000))
    print("share of one core at a %.0f-s poll: %.2f %% (target: at most 1 %%: %s)"
          % (args.poll_interval, 100 * cpu / args.poll_interval, "met" if cpu / args.poll_interval <= 0.01 else "NOT met"))


if __name__ == "__main__":
    main()
