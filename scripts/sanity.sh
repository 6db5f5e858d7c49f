#!/usr/bin/env bash
# ansible-test wants the collection under .../ansible_collections/gpudirect/gcp:
# copy the tracked and new (not ignored) files there and run sanity.
#   scripts/sanity.sh [ansible-test options]       the oldest supported ansible-core
#   CORE=newest scripts/sanity.sh [options]        the newest (on a Python 3.12 or newer)
#   CORE=218 scripts/sanity.sh [options]           ansible-core 2.18 (tests/requirements/core218.txt)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
core="${CORE:-oldest}"
case "$core" in
  oldest) python=python3 ;;
  newest) python=$("$root/scripts/newest-python.sh") ;;
  218) python=python3 ;;
  *) echo "sanity: CORE must be oldest, newest or 218, not $core" >&2; exit 2 ;;
esac
# The copy must live outside this git work tree: inside it, ansible-test would
# ask git for the file list and find build/ ignored.
# One copy per checkout, so that two checkouts' runs never delete each other's.
work="${SANITY_TMPDIR:-/tmp}/gpudirect-gcp-sanity-$(printf '%s' "$root" | sha256sum | cut -c1-12)-$core"
tree="$work/ansible_collections/gpudirect/gcp"
rm -rf "$work" && mkdir -p "$tree"
# a file deleted but not yet committed is still listed: skip it
(cd "$root" && git ls-files -co --exclude-standard -z | rsync -a --from0 --ignore-missing-args --files-from=- ./ "$tree/")
# ansible-test's --venv mode downloads get-pip from a host this network cannot
# reach, so sanity runs --local in a virtualenv of its own, where ansible-test
# may pin its tools without disturbing .venv.
svenv="$root/build/venv-sanity-$core"
pins="$root/tests/requirements/$core.txt"
[ "$core" = 218 ] && pins="$root/tests/requirements/core218.txt"
if [ ! -x "$svenv/bin/ansible-test" ] || [ "$pins" -nt "$svenv/bin/ansible-test" ]; then
  rm -rf "$svenv"
  "$python" -m venv "$svenv"
  "$svenv/bin/pip" install -q -U pip
  "$svenv/bin/pip" install -q "$(grep -E '^ansible-core' "$pins")" -r "$root/requirements.txt"
fi
# Seed ansible-test's cache with the offline bootstrap for the pip it pins.
# ansible-test has no public way to ask for that version, so it is read from
# the installed source as text (no import of its internals); a release that
# moves it stops here with one line instead of failing offline later.
pin_src=$(find "$svenv/lib" -path '*/ansible_test/_internal/python_requirements.py' | head -1)
pip_version=$(sed -n "s/^ *pip='\([0-9.]*\)',.*/\1/p" "$pin_src" | head -1)
if [ -z "$pip_version" ]; then
  echo "sanity: cannot find the pip version ansible-test pins in $pin_src" >&2
  exit 1
fi
cache="$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
mkdir -p "$(dirname "$cache")"
sed "s|@PIP_HOST_PYTHON@|$svenv/bin/python|" "$root/scripts/get-pip-offline.py" > "$cache"
cd "$tree"
PATH="$svenv/bin:$PATH" ansible-test sanity --color no --local --requirements \
  --python "$("$svenv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" "$@"
