#!/usr/bin/env bash
# Inventory benchmark: gpudirect.gcp.gce_gpu (cold and warm cache) against
# google.cloud.gcp_compute, both talking to the Compute API emulator served as
# https://compute.googleapis.com through a local CONNECT proxy.
#
#   benchmarks/inventory/run.sh [--projects 4] [--instances 2500] [--latency-ms 30] [--repeat 3]
#
# google.cloud comes from the PyPI `ansible` package, installed into its own
# virtualenv under build/ (never into .venv).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
export PATH="$root/.venv/bin:$PATH"
export ANSIBLE_CONFIG="$root/ansible.cfg"
"$root/scripts/link-collection.sh"

bench_venv="$root/build/bench-venv"
# ansible 12.x is the newest community package for Python 3.11 (ansible-core 2.19)
ansible_spec="${BENCH_ANSIBLE_SPEC:-ansible>=12,<13}"
if [ ! -x "$bench_venv/bin/ansible-inventory" ] || [ ! -f "$bench_venv/.installed" ]; then
  echo "installing $ansible_spec (google.cloud) into $bench_venv" >&2
  python3 -m venv "$bench_venv"
  "$bench_venv/bin/pip" install -q -U pip
  "$bench_venv/bin/pip" install -q "$ansible_spec" "google-auth>=2.20" "requests>=2.28"
  touch "$bench_venv/.installed"
fi
if [ "${1:-}" = "--install-only" ]; then
  exit 0
fi
exec "$root/.venv/bin/python" "$root/benchmarks/inventory/bench.py" --gcp-venv "$bench_venv" "$@"
