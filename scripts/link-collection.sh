#!/usr/bin/env bash
# Makes this checkout importable as the collection gpudirect.gcp without
# installing it: build/collections/ansible_collections/gpudirect/gcp -> checkout.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/build/collections/ansible_collections/gpudirect"
mkdir -p "$dest"
ln -sfn "$root" "$dest/gcp"
