#!/usr/bin/env bash
# Runs every Molecule scenario under extensions/molecule.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/extensions"
shopt -s nullglob
scenarios=(molecule/*/molecule.yml)
if [ "${#scenarios[@]}" -eq 0 ]; then
  echo "no Molecule scenarios yet"
  exit 0
fi
molecule test --all
