#!/usr/bin/env bash
# Prints a Python 3.12 or newer for the newest supported ansible-core, which
# needs one on the controller: $NEWEST_PYTHON, else python3.14 .. python3.12 or
# python3 on PATH, else a pyenv-installed one. Where there is none it says in
# one line what to install and exits 1.
set -uo pipefail
ok() { "$1" -c 'import sys, ensurepip; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; }
candidates=()
[ -n "${NEWEST_PYTHON:-}" ] && candidates+=("$NEWEST_PYTHON")
for name in python3.14 python3.13 python3.12 python3; do
  path=$(command -v "$name" 2>/dev/null) && candidates+=("$path")
done
while read -r path; do
  [ -x "$path" ] && candidates+=("$path")
done < <(find "${PYENV_ROOT:-$HOME/.pyenv}/versions" -mindepth 3 -maxdepth 3 -path '*/versions/3.1[2-9]*/bin/python3' \
           2>/dev/null | sort -V -r)
for path in "${candidates[@]}"; do
  if ok "$path"; then
    echo "$path"
    exit 0
  fi
done
echo "no Python 3.12 or newer (with venv) found for ansible-core 2.21: install one (Debian 13: apt-get install" \
  "python3-venv; Debian 12: pyenv install 3.12) or set NEWEST_PYTHON=/path/to/python3.12" >&2
exit 1
