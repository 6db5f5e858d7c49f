#!/usr/bin/env bash
# ansible-test wants the collection under .../ansible_collections/gpudirect/gcp:
# copy the tracked and new (not ignored) files there and run sanity.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# The copy must live outside this git work tree: inside it, ansible-test would
# ask git for the file list and find build/ ignored.
work="${SANITY_TMPDIR:-/tmp}/gpudirect-gcp-sanity"
tree="$work/ansible_collections/gpudirect/gcp"
rm -rf "$work" && mkdir -p "$tree"
(cd "$root" && git ls-files -co --exclude-standard -z | rsync -a --from0 --files-from=- ./ "$tree/")
# ansible-test's --venv mode downloads get-pip from a host this network cannot
# reach, so sanity runs --local in a virtualenv of its own, where ansible-test
# may pin its tools without disturbing .venv.
svenv="$root/build/venv-sanity"
if [ ! -x "$svenv/bin/ansible-test" ]; then
  python3 -m venv "$svenv"
  "$svenv/bin/pip" install -q -U pip
  "$svenv/bin/pip" install -q "$(grep -E '^ansible-core' "$root/requirements-dev.txt")" -r "$root/requirements.txt"
fi
# Seed ansible-test's cache with the offline bootstrap for the pip it pins.
pip_version=$("$svenv/bin/python" -c 'from ansible_test._internal.python_requirements import get_venv_packages as g
class P: version = "3.11"
print(g(P())["pip"])')
cache="$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
mkdir -p "$(dirname "$cache")"
sed "s|@PIP_HOST_PYTHON@|$svenv/bin/python|" "$root/scripts/get-pip-offline.py" > "$cache"
cd "$tree"
PATH="$svenv/bin:$PATH" ansible-test sanity --color no --local --requirements --python "$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')" "$@"
