#!/usr/bin/env bash
# Scaling benchmark: how a run's wall time grows with the node count on this
# machine (SANDBOX; figures and the ratio, printed; nothing is asserted).
#   benchmarks/scaling/run.sh [--sizes 2,16] [--tasks 20] [--repeat 3] [--site] [--keep]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
export PATH="$root/.venv/bin:$PATH"
export ANSIBLE_CONFIG="$root/ansible.cfg" ANSIBLE_NOCOLOR=1
"$root/scripts/link-collection.sh"
exec "$root/.venv/bin/python" "$root/benchmarks/scaling/bench.py" "$@"
