"""STAND-IN for a training job's processes on one node (what torchrun does there; sandbox nodes have no
GPU, no PyTorch and no NCCL), for the job evidence to find, dump and judge.

  srun --nodes=4 --ntasks-per-node=1 python3 gpudirect_standin_job.py [--ranks-per-node 2]
       [--odd-rank 5] [--diag-fail-rank 5] [--ras-port 28028 (0: any free port)]

Started once per node by srun, it starts --ranks-per-node workers with RANK, LOCAL_RANK and WORLD_SIZE
as torchrun gives them. Each worker prints an "NCCL DIAG" line as NCCL 2.31+ does at communicator init
(--diag-fail-rank's says its network check FAILED), writes a flight-recorder file
<TORCH_NCCL_DEBUG_INFO_TEMP_FILE><rank> (STAND-IN text, not PyTorch's pickle) and then blocks: in
stand_in_nccl_all_reduce, or, for --odd-rank, still in stand_in_forward_step (the rank the others wait
for) - the functions py-spy shows. The node's first launcher also answers as NCCL RAS (the RAS stand-in
beside this file) for the whole job, hung from the start with --odd-rank one collective behind, with the
real pids of its own workers. The job's hosts are the Slurm node names (scontrol show hostnames).
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def stand_in_nccl_all_reduce():
    while True:
        time.sleep(0.5)


def stand_in_forward_step():
    while True:
        time.sleep(0.5)


def worker(rank, odd_rank, diag_fail_rank):
    host = os.environ.get("SLURMD_NODENAME", "localhost")
    verdict = "FAILED: bandwidth to peers 0.0 GB/s" if rank == diag_fail_rank else "passed"
    print("%s:%d:%d NCCL DIAG network check (STAND-IN) %s" % (host, os.getpid(), os.getpid(), verdict), flush=True)
    prefix = os.environ.get("TORCH_NCCL_DEBUG_INFO_TEMP_FILE", "/tmp/nccl_trace_rank_")
    with open(prefix + str(rank), "w") as handle:
        handle.write("STAND-IN flight recorder of rank %d: last collective %s\n"
                     % (rank, "none (still in the forward step)" if rank == odd_rank else "AllReduce #2"))
    if rank == odd_rank:
        stand_in_forward_step()
    stand_in_nccl_all_reduce()


def hosts_of_job():
    nodelist = os.environ.get("SLURM_JOB_NODELIST", "")
    if not nodelist:
        return [os.environ.get("SLURMD_NODENAME", "localhost")]
    out = subprocess.run(["scontrol", "show", "hostnames", nodelist], check=True, stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    return out.split()


def main(argv=None):
    parser = argparse.ArgumentParser(description="STAND-IN for a job's ranks on one node")
    parser.add_argument("--ranks-per-node", type=int, default=2)
    parser.add_argument("--odd-rank", type=int, default=-1)
    parser.add_argument("--diag-fail-rank", type=int, default=-1)
    parser.add_argument("--ras-port", type=int, default=28028)
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        worker(args.worker, args.odd_rank, args.diag_fail_rank)
        return
    # scancel and a test's end send SIGTERM: the workers go with the launcher
    signal.signal(signal.SIGTERM, lambda _signum, _frame: sys.exit(0))
    hosts = hosts_of_job()
    node_index = int(os.environ.get("SLURM_NODEID", "0"))
    per_node = args.ranks_per_node
    workers = {}
    for local in range(per_node):
        rank = node_index * per_node + local
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(local), WORLD_SIZE=str(len(hosts) * per_node),
                   LOCAL_WORLD_SIZE=str(per_node))
        workers[rank] = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", str(rank), "--odd-rank", str(args.odd_rank),
             "--diag-fail-rank", str(args.diag_fail_rank)], env=env)
    sys.path.insert(0, HERE)
    import gpudirect_standin_ras as ras  # noqa: E402 (beside this file)
    job = ras.Job({"comm": "0x5eed", "hosts": hosts, "ranks_per_host": per_node, "rate": 1.0, "hang_at": 0,
                   "odd_rank": args.odd_rank, "pids": dict((str(r), p.pid) for r, p in workers.items())})
    server = ras.Server(("127.0.0.1", args.ras_port), job)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    print(json.dumps({"node": hosts[node_index] if node_index < len(hosts) else "?", "ranks": sorted(workers),
                      "ras_port": server.server_address[1]}), flush=True)
    try:
        for proc in workers.values():
            proc.wait()
    finally:
        for proc in workers.values():
            proc.terminate()


if __name__ == "__main__":
    main()
