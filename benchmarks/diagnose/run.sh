#!/usr/bin/env bash
# Diagnose benchmark: node checks and the whole diagnosis on 2- and 4-node
# SANDBOX clusters (figures and the ratio, printed; nothing is asserted).
#   benchmarks/diagnose/run.sh [--repeat 3] [--sizes 2,4] [--family a3-mega] [--keep]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
export PATH="$root/.venv/bin:$PATH"
export ANSIBLE_CONFIG="$root/ansible.cfg" ANSIBLE_NOCOLOR=1
"$root/scripts/link-collection.sh"
exec "$root/.venv/bin/python" "$root/benchmarks/diagnose/bench.py" "$@"
