#!/usr/bin/env bash
# ansible-test wants the collection under .../ansible_collections/gpudirect/gcp:
# copy the tracked and new (not ignored) files there and run sanity.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tree="$root/build/sanity/ansible_collections/gpudirect/gcp"
rm -rf "$tree" && mkdir -p "$tree"
(cd "$root" && git ls-files -co --exclude-standard -z | rsync -a --from0 --files-from=- ./ "$tree/")
cd "$tree"
python_version="$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
ansible-test sanity --color no --venv --python "$python_version" "$@"
