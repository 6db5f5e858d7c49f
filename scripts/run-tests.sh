#!/usr/bin/env bash
# shellcheck disable=SC2317  # stage_* functions are called by name (stage_$s)
# The whole test suite, stage by stage.  `make test` runs every stage;
# `scripts/run-tests.sh <stage>...` runs some.  Every stage runs even when an
# earlier one failed, and the script exits non-zero if any did.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 1
export PATH="$root/.venv/bin:$PATH"
export ANSIBLE_CONFIG="$root/ansible.cfg"
export ANSIBLE_NOCOLOR=1 PY_COLORS=0
"$root/scripts/link-collection.sh"

# the static stages run on the oldest supported ansible-core (.venv) and again,
# as *-newest, on the newest (build/venv-newest, on Python 3.12 or newer)
newest="$root/build/venv-newest"
stages=("$@")
[ "${#stages[@]}" -gt 0 ] || stages=(lint sanity units build sanity-newest units-newest build-newest integration molecule)

stage_lint() {
  ansible-lint --profile production && antsibull-changelog lint
}

stage_sanity() {
  "$root/scripts/sanity.sh"
}

stage_units() {
  pytest -q -n 2 tests/unit
}

stage_build() {
  local tarball
  tarball=$("$root/scripts/build-collection.sh") || return 1
  echo "built and installed $tarball"
  "$root/scripts/check-docs.sh" "$root/build/dist/installed"
}

on_newest() {
  if [ ! -x "$newest/bin/ansible" ]; then
    echo "no $newest: run make venv-newest (it needs a Python 3.12 or newer)" >&2
    return 1
  fi
  "$newest/bin/ansible" --version | head -1
  PATH="$newest/bin:$PATH" CORE=newest "$@"
}

stage_sanity-newest() { on_newest stage_sanity; }
stage_units-newest() { on_newest stage_units; }
stage_build-newest() { on_newest stage_build; }

stage_integration() {
  pytest -q tests/integration
}

stage_molecule() {
  "$root/scripts/molecule-all.sh"
}

declare -A result secs
start_all=$SECONDS
for s in "${stages[@]}"; do
  echo "=================== stage: $s ==================="
  t0=$SECONDS
  if "stage_$s"; then result[$s]=passed; else result[$s]=FAILED; fi
  secs[$s]=$((SECONDS - t0))
  echo "------------------- $s ${result[$s]} (${secs[$s]}s)"
done

passed=0; failed=0
echo
echo "=================== summary ==================="
for s in "${stages[@]}"; do
  printf '%-14s %-7s %5ss\n' "$s" "${result[$s]}" "${secs[$s]}"
  if [ "${result[$s]}" = passed ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
total=$((SECONDS - start_all))
if [ "$failed" -eq 0 ]; then
  echo "=================== $passed passed in ${total}s ==================="
  exit 0
fi
echo "=================== $failed failed, $passed passed in ${total}s ==================="
exit 1
