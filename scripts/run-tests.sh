#!/usr/bin/env bash
# shellcheck disable=SC2317  # stage_* functions are called by name (stage_$s)
# The whole test suite, stage by stage.  `make test` runs every stage;
# `scripts/run-tests.sh <stage>...` runs some.  Every stage runs even when an
# earlier one failed, and the script exits non-zero if any did.
# Stages joined by + run side by side (`lint+sanity+build`): lint, sanity and
# the build each keep one core busy, so on two cores a group of them takes
# about half its stages' sum; the two unit stages leave a quarter of the
# cores idle each (process start-up, tests that wait), so together they take
# less than one after the other.  A group's output is printed stage by stage
# when the group ends (build/test-logs/<stage>.log).  Stages that share a
# working directory (sanity and sanity-newest, build and build-newest) are
# never in one group.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 1
export PATH="$root/.venv/bin:$PATH"
export ANSIBLE_CONFIG="$root/ansible.cfg"
export ANSIBLE_NOCOLOR=1 PY_COLORS=0
"$root/scripts/link-collection.sh"

# the static stages run on the oldest supported ansible-core (.venv) and again,
# as *-newest, on the newest (build/venv-newest, on Python 3.12 or newer);
# sanity and units also as *-218 on ansible-core 2.18 (build/venv-218), the
# core AAP 2.7 and AWX execution environments run beside 2.16
newest="$root/build/venv-newest"
core218="$root/build/venv-218"
stages=("$@")
[ "${#stages[@]}" -gt 0 ] ||
  stages=(lint+sanity+build units+units-newest+units-218 sanity-newest+sanity-218+build-newest+integration molecule)

stage_lint() {
  ansible-lint --profile production && antsibull-changelog lint
}

stage_sanity() {
  "$root/scripts/sanity.sh"
}

# one pytest worker a core: the stages side by side already keep more processes than cores
stage_units() {
  pytest -q -n "$(nproc)" tests/unit
}

stage_build() {
  local tarball
  tarball=$("$root/scripts/build-collection.sh") || return 1
  echo "built and installed $tarball"
  "$root/scripts/check-docs.sh" "$root/build/dist/installed"
}

# on_core CORE VENV MAKE-TARGET command...: the command with VENV's ansible-core first on PATH
on_core() {
  local core="$1" venv="$2" target="$3"
  shift 3
  if [ ! -x "$venv/bin/ansible" ]; then
    echo "no $venv: run make $target" >&2
    return 1
  fi
  "$venv/bin/ansible" --version | sed -n 1p  # sed reads to the end: no broken pipe
  PATH="$venv/bin:$PATH" CORE="$core" "$@"
}
on_newest() { on_core newest "$newest" "venv-newest (it needs a Python 3.12 or newer)" "$@"; }

stage_sanity-newest() { on_newest stage_sanity; }
stage_units-newest() { on_newest stage_units; }
stage_build-newest() { on_newest stage_build; }
stage_sanity-218() { on_core 218 "$core218" venv-218 stage_sanity; }
# 2.18 templates with 2.16's engine (2.19 brought the new one), so the tests that run a real
# ansible-playbook (tests/unit/roles, tests/unit/playbooks) prove nothing on it that the oldest
# and the newest do not: they run on those two, everything else on all three
stage_units-218() {
  on_core 218 "$core218" venv-218 pytest -q -n "$(nproc)" tests/unit --ignore=tests/unit/roles --ignore=tests/unit/playbooks
}

stage_integration() {
  pytest -q tests/integration
}

stage_molecule() {
  "$root/scripts/molecule-all.sh"
}

declare -A result secs
order=()
# busy CPU time of the whole machine: the sandbox nodes and the podman daemons
# count too, which a stage's own children would not
# shellcheck source=cpu-jiffies.sh
. "$root/scripts/cpu-jiffies.sh"
busy_jiffies() { local busy _total; read -r busy _total < <(cpu_jiffies); echo "$busy"; }
hz=$(getconf CLK_TCK)
group_cpu=()
# one line for the group that just ended: its wall time and the machine's busy CPU time meanwhile
group_done() {
  group_cpu+=("$(printf '%-52s %5ss wall %6s CPU-s' "$group" $((SECONDS - group_t0)) \
    $((($(busy_jiffies) - busy_at) / hz)))")
}
run_stage() {
  local s="$1" t0=$SECONDS
  if ! declare -F "stage_$s" >/dev/null; then
    echo "no stage $s" >&2
    result[$s]=FAILED; secs[$s]=0; return
  fi
  if "stage_$s"; then result[$s]=passed; else result[$s]=FAILED; fi
  secs[$s]=$((SECONDS - t0))
}
logs="$root/build/test-logs"
start_all=$SECONDS
for group in "${stages[@]}"; do
  busy_at=$(busy_jiffies) group_t0=$SECONDS
  IFS=+ read -r -a members <<< "$group"
  order+=("${members[@]}")
  if [ "${#members[@]}" -eq 1 ]; then
    s=${members[0]}
    echo "=================== stage: $s ==================="
    run_stage "$s"
    echo "------------------- $s ${result[$s]} (${secs[$s]}s)"
    group_done
    continue
  fi
  # side by side: each stage in a subshell that writes its log and its
  # result line; the parent reads them back in the group's order
  mkdir -p "$logs"
  echo "=================== stages side by side: ${members[*]} ==================="
  pids=()
  for s in "${members[@]}"; do
    rm -f "$logs/$s.result"
    ( run_stage "$s"; echo "${result[$s]} ${secs[$s]}" > "$logs/$s.result" ) > "$logs/$s.log" 2>&1 &
    pids+=("$!")
  done
  wait "${pids[@]}"
  for s in "${members[@]}"; do
    echo "=================== stage: $s ==================="
    cat "$logs/$s.log"
    # no result line: the stage's shell died before it could write one
    res=FAILED sec=0
    [ -s "$logs/$s.result" ] && read -r res sec < "$logs/$s.result"
    result[$s]=$res; secs[$s]=$sec
    echo "------------------- $s ${result[$s]} (${secs[$s]}s, side by side with the group)"
  done
  group_done
done

passed=0; failed=0
echo
echo "=================== summary ==================="
for s in "${order[@]}"; do
  printf '%-14s %-7s %5ss\n' "$s" "${result[$s]}" "${secs[$s]}"
  if [ "${result[$s]}" = passed ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
total=$((SECONDS - start_all))
# what the run cost the machine, group by group: on a CPU-bound machine no
# ordering of the stages finishes sooner than the busy CPU time over the cores
echo "=================== CPU time, group by group (the whole machine) ==================="
busy_all=0
for line in "${group_cpu[@]}"; do
  echo "$line"
  busy_all=$((busy_all + $(awk '{print $(NF-1)}' <<< "$line")))
done
echo "$busy_all CPU-s over $(nproc) core(s): $((busy_all / $(nproc)))s at the least, ${total}s taken"
if [ "$failed" -eq 0 ]; then
  echo "=================== $passed passed in ${total}s ==================="
  exit 0
fi
echo "=================== $failed failed, $passed passed in ${total}s ==================="
exit 1
