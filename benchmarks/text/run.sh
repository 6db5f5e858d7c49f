#!/usr/bin/env bash
# Text benchmark: 1 MB of hostile text through every writer of reports, metrics and drain reasons
# (figures, printed; exit 1 when a writer took a second or more).
#   benchmarks/text/run.sh [--mb 1]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
"$root/scripts/link-collection.sh"
exec "$root/.venv/bin/python" "$root/benchmarks/text/bench.py" "$@"
