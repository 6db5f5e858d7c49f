#!/usr/bin/env bash
# Prints a Python 3.10 to 3.12 for the oldest supported ansible-core (2.16
# runs its controller on those): $OLDEST_PYTHON, else python3 where it is one,
# else python3.11, python3.12 or python3.10 on PATH, else a pyenv-installed
# one (3.11 first). Where there is none it says in one line what to install
# and exits 1.
set -uo pipefail
ok() { "$1" -c 'import sys, ensurepip; sys.exit(not (3, 10) <= sys.version_info[:2] <= (3, 12))' 2>/dev/null; }
candidates=()
[ -n "${OLDEST_PYTHON:-}" ] && candidates+=("$OLDEST_PYTHON")
for name in python3 python3.11 python3.12 python3.10; do
  path=$(command -v "$name" 2>/dev/null) && candidates+=("$path")
done
for minor in 11 12 10; do
  while read -r path; do
    [ -x "$path" ] && candidates+=("$path")
  done < <(find "${PYENV_ROOT:-$HOME/.pyenv}/versions" -mindepth 3 -maxdepth 3 -path "*/versions/3.$minor.*/bin/python3" \
             2>/dev/null | sort -V -r)
done
for path in "${candidates[@]}"; do
  if ok "$path"; then
    echo "$path"
    exit 0
  fi
done
echo "no Python 3.10 to 3.12 (with venv) found for ansible-core 2.16: install one (pyenv install 3.11)" \
  "or set OLDEST_PYTHON=/path/to/python3.11" >&2
exit 1
