#!/usr/bin/env bash
# Node check benchmark: how long one run of the node checks (gpudirect-health, the code diagnose,
# the timer and the Slurm hooks share) takes on a healthy SANDBOX node (figures, printed).
#   benchmarks/node_check/run.sh [--family a3-mega] [--repeat 5] [--keep]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
export PATH="$root/.venv/bin:$PATH"
export ANSIBLE_CONFIG="$root/ansible.cfg" ANSIBLE_NOCOLOR=1
"$root/scripts/link-collection.sh"
exec "$root/.venv/bin/python" "$root/benchmarks/node_check/bench.py" "$@"
