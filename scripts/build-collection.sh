#!/usr/bin/env bash
# Builds the collection tarball and installs it into a scratch path to prove it installs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/build/dist"
rm -rf "$out" && mkdir -p "$out"
ansible-galaxy collection build --force --output-path "$out" "$root" >/dev/null
tarball=$(ls "$out"/gpudirect-gcp-*.tar.gz)
# --no-deps: the dependencies (galaxy.yml, requirements.yml) come from PyPI's
# ansible package in .venv; resolving them would ask Galaxy, which the build
# machines cannot reach.
ansible-galaxy collection install --no-deps --force -p "$out/installed" "$tarball" >/dev/null
echo "$tarball"
