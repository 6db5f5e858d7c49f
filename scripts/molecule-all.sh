#!/usr/bin/env bash
# Runs every Molecule scenario under extensions/molecule/ (each one starts its
# own sandbox cluster, named after the scenario), one more at a time than the
# machine has cores (three on two cores) by default: a scenario leaves the CPUs
# idle while it waits (NCCL test runs over MPI and SSH, nodes starting and
# stopping), and the one more fills that time; at most one for each 3 GiB of
# memory available (a lane's nodes, its controller and its nested podman).
#   scripts/molecule-all.sh                 all scenarios
#   scripts/molecule-all.sh rxdm sandbox    only these
#   MOLECULE_JOBS=1 scripts/molecule-all.sh one at a time
# Logs: build/molecule/<scenario>.log.  Exits non-zero if any scenario failed.
# The scenarios in MOLECULE_NEWEST (default: diagnose) run on the newest supported
# ansible-core (build/venv-newest, `make venv-newest`), the others on the oldest.
# The summary says how busy the CPUs were over the stage (from /proc/stat),
# the figure to look at before changing MOLECULE_JOBS.
# Each scenario's seconds are kept in build/molecule/_durations (generated, not
# in git); the next run starts the longest first, so that the lanes end close
# together.  A fresh checkout (CI) has none yet and starts the scenarios that
# are long on the 2-core test machine first (long_first below).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 1
export PATH="$root/.venv/bin:$PATH"
export ANSIBLE_CONFIG="$root/ansible.cfg" ANSIBLE_NOCOLOR=1 PY_COLORS=0 NO_COLOR=1
# every line reaches the log when it is printed, so that its time stamp is right
export PYTHONUNBUFFERED=1
cores=$(nproc)
lanes_by_memory=$(awk '/^MemAvailable:/{print int($2 / (3 * 1024 * 1024)); exit}' /proc/meminfo)
lanes=$((cores + 1 < lanes_by_memory ? cores + 1 : lanes_by_memory))
jobs="${MOLECULE_JOBS:-$((lanes > 0 ? lanes : 1))}"
logs="$root/build/molecule"
mkdir -p "$logs"
"$root/scripts/link-collection.sh"

if [ "$#" -gt 0 ]; then
  scenarios=("$@")
else
  scenarios=()
  for f in extensions/molecule/*/molecule.yml; do
    [ -e "$f" ] || continue
    d="$(basename "$(dirname "$f")")"
    case "$d" in _*) continue ;; esac
    scenarios+=("$d")
  done
fi
if [ "${#scenarios[@]}" -eq 0 ]; then
  echo "no Molecule scenarios found under extensions/molecule/" >&2
  exit 1
fi
for s in "${scenarios[@]}"; do
  if [ ! -f "extensions/molecule/$s/molecule.yml" ]; then
    echo "error: no scenario extensions/molecule/$s/molecule.yml" >&2
    exit 2
  fi
done

durations="$logs/_durations"
# Without figures of a run of this checkout (a fresh clone, CI), the scenarios that take longest
# on the 2-core test machine start first, in this order; the rest follow by name.
long_first=(site diagnose topology slurm nccl_tests node_health rxdm a4x_max)
if [ "${#scenarios[@]}" -gt 1 ]; then
  mapfile -t scenarios < <(for s in "${scenarios[@]}"; do
    if [ -s "$durations" ]; then
      secs="$(awk -v s="$s" '$1 == s {v = $2} END {print v}' "$durations")"
      secs="${secs:-999999}"   # not measured in the last run: first
    else
      secs=0                   # not in the list: after those in it
      for i in "${!long_first[@]}"; do
        [ "${long_first[$i]}" = "$s" ] && secs=$((900000 - i))
      done
    fi
    echo "$secs $s"
  done | sort -k1,1rn -k2,2 | cut -d' ' -f2)
fi

# Build the node and stand-in images once, before scenarios run side by side.
echo "molecule: building (or reusing) the sandbox images"
if ! "$root/.venv/bin/python" tests/sandbox/sandbox.py images > "$logs/_images.log" 2>&1; then
  tail -5 "$logs/_images.log" >&2
  echo "molecule: sandbox images could not be built (see $logs/_images.log)" >&2
  exit 1
fi

newest_scenarios=" ${MOLECULE_NEWEST-diagnose} "
for s in "${scenarios[@]}"; do
  if [[ $newest_scenarios == *" $s "* ]] && [ ! -x "$root/build/venv-newest/bin/molecule" ]; then
    echo "molecule: $s runs on the newest ansible-core: run make venv-newest first (it needs Python 3.12 or newer)" >&2
    exit 2
  fi
done

# Scenarios run from extensions/ with the base config named explicitly.
run_one() {
  local s="$1" t0=$SECONDS rc path="$PATH"
  [[ $newest_scenarios == *" $s "* ]] && path="$root/build/venv-newest/bin:$PATH"
  # each line stamped with the time of day, so that a log shows where a scenario's time went
  # (sed reads all of it: head would close the pipe and ansible would print a traceback)
  (cd "$root/extensions" && PATH="$path" && ansible --version | sed -n 1p &&
    molecule -c molecule/config.yml test -s "$s") 2>&1 |
    while IFS= read -r line; do printf '%(%H:%M:%S)T %s\n' -1 "$line"; done > "$logs/$s.log"
  rc=${PIPESTATUS[0]}
  echo "$s $rc $((SECONDS - t0))" >> "$logs/_results"
  if [ "$rc" -eq 0 ]; then status=passed; else status=FAILED; fi
  printf 'molecule: %-16s %-7s %4ss  (%s)\n' "$s" "$status" "$((SECONDS - t0))" "$logs/$s.log"
}
export -f run_one
export logs root newest_scenarios
: > "$logs/_results"
# shellcheck source=cpu-jiffies.sh
. "$root/scripts/cpu-jiffies.sh"
read -r busy0 total0 < <(cpu_jiffies)
start=$SECONDS
echo "molecule: ${#scenarios[@]} scenario(s), $jobs at a time: ${scenarios[*]}"
printf '%s\n' "${scenarios[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one "$@"' _ {}

failed=0
# keep the seconds of every scenario that passed, for the next run's order
touch "$durations"
while read -r s rc secs; do
  [ "$rc" -eq 0 ] || continue
  awk -v s="$s" '$1 != s' "$durations" > "$durations.tmp" && echo "$s $secs" >> "$durations.tmp" &&
    mv "$durations.tmp" "$durations"
done < "$logs/_results"
while read -r s rc _secs; do
  if [ "$rc" -ne 0 ]; then
    failed=$((failed + 1))
    echo "---- $s failed; last lines of $logs/$s.log:"
    grep -E 'FAILED|Error|ERROR|fatal:|failed=[1-9]|CRITICAL' "$logs/$s.log" | tail -8
  fi
done < "$logs/_results"
done_count=$(wc -l < "$logs/_results")
read -r busy1 total1 < <(cpu_jiffies)
echo "molecule: $((done_count - failed)) passed, $failed failed of ${#scenarios[@]} in $((SECONDS - start))s," \
  "$jobs at a time, CPUs $(( (busy1 - busy0) * 100 / (total1 - total0 > 0 ? total1 - total0 : 1) ))% busy over $(nproc) core(s)"
[ "$failed" -eq 0 ] && [ "$done_count" -eq "${#scenarios[@]}" ]
