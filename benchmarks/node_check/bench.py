# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node check benchmark on a SANDBOX node: the wall time of one gpudirect-health run (GPUs, RDMA
ports where the family has them, NICs, RxDM, plugin, profile, host maintenance) on a healthy,
configured node, and the time the agent itself reports; the median of --repeat runs.

The node is a podman container with systemd: its tools are real where they can be (ip, systemctl,
docker over podman, the metadata stand-in over HTTP) and STAND-INs where they cannot (nvidia-smi,
dmesg, ibv_devinfo). A real nvidia-smi -q -x on 8 GPUs takes longer than the stand-in; the figure is
the checks' own cost plus this node's tools.
"""

from __future__ import absolute_import, division, print_function

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SANDBOX = [sys.executable, os.path.join(ROOT, "tests", "sandbox", "sandbox.py")]
PLAYBOOK = os.path.join(ROOT, ".venv", "bin", "ansible-playbook")
TARGET_S = 5.0


def run(argv, log, check=True, capture=False):
    with open(log, "a") as fh:
        fh.write("\n$ %s\n" % " ".join(argv))
        fh.flush()
        proc = subprocess.run(argv, cwd=ROOT, stdout=subprocess.PIPE if capture else fh, stderr=fh, check=False,
                              universal_newlines=True)
    if check and proc.returncode != 0:
        sys.exit("bench: %s failed (exit %d), see %s" % (" ".join(argv[:3]), proc.returncode, log))
    return proc


def ssh_argv(name):
    sys.path.insert(0, os.path.join(ROOT, "tests", "sandbox"))
    from sandboxlib import cluster, common, inventory  # pylint: disable=import-outside-toplevel
    state = common.load_state(name)
    node = state["nodes"][0]
    return (["ssh", "-i", cluster.key_file(name)] + inventory.ssh_common_args(name).split()
            + ["%s@%s" % (common.SSH_USER, node["nics"][0]["ip"])])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", default="a3-mega")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="leave the sandbox running")
    args = parser.parse_args()
    name = "bench-check"
    work = os.path.join(ROOT, "build", "bench-node-check")
    os.makedirs(work, exist_ok=True)
    log = os.path.join(work, "bench.log")
    open(log, "w").close()
    inventory = os.path.join(ROOT, "build", "sandbox", name, "inventory.yml")
    run(SANDBOX + ["up", "--name", name, "--family", args.family, "--nodes", "1"], log)
    walls, reported = [], []
    try:
        run([PLAYBOOK, "-i", inventory, "gpudirect.gcp.site", "--skip-tags", "nccl_tests"], log)
        run([PLAYBOOK, "-i", inventory, "gpudirect.gcp.node_health", "-e", "node_health_timer=false"], log)
        ssh = ssh_argv(name)
        for _run in range(args.repeat):
            start = time.monotonic()
            proc = run(ssh + ["sudo", "/usr/local/sbin/gpudirect-health", "--json"], log, check=False, capture=True)
            walls.append(time.monotonic() - start)
            lines = proc.stdout.splitlines()
            if proc.returncode != 0 or len(lines) < 2:
                sys.exit("bench: the node check did not pass on a healthy node (exit %d): %s"
                         % (proc.returncode, lines[:1]))
            reported.append(json.loads(lines[-1])["duration_s"])
    finally:
        if not args.keep:
            run(SANDBOX + ["down", "--name", name], log, check=False)
    wall, own = statistics.median(walls), statistics.median(reported)
    print("node check benchmark, SANDBOX node (podman, STAND-IN GPUs) on %d CPU(s), family %s, median of %d"
          % (os.cpu_count() or 0, args.family, args.repeat))
    print("%-34s %8.2f s" % ("agent's own time (duration_s)", own))
    print("%-34s %8.2f s" % ("wall time over SSH (+ sudo, python)", wall))
    print("target: at most %.0f s on a healthy node: %s" % (TARGET_S, "met" if wall <= TARGET_S else "MISSED"))
    print("log: %s" % log)


if __name__ == "__main__":
    main()
