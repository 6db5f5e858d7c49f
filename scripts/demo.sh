#!/usr/bin/env bash
# make demo / make demo-down: the collection's main job on a SANDBOX cluster.
#   scripts/demo.sh up [NODES] [FAMILY] [VARIANT]   (env NODES, FAMILY, VARIANT work too;
#                                                   2, a3-mega, ubuntu; VARIANT el or cos: docs/sandbox.md)
#   scripts/demo.sh down [--images]       remove everything `up` made
#                                         (--images: the cached images too)
# It installs nothing: `make deps` does that.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export PATH="$root/.venv/bin:$PATH"
export ANSIBLE_CONFIG="$root/ansible.cfg"
name="${GPUDIRECT_DEMO_NAME:-demo}"
py="$root/.venv/bin/python"
sandbox=("$py" "$root/tests/sandbox/sandbox.py")
state="$root/build/sandbox/$name"
# the reports go where every run's go (outside the source tree), and outlive the sandbox
reports="${GPUDIRECT_REPORT_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/gpudirect-gcp/reports}"

say() { printf '\n=== %s\n' "$*"; }

banner() {
  cat <<TXT
=====================================================================
 SANDBOX DEMO - not Google Cloud.  The nodes are podman containers on
 this machine shaped like $1 VMs (systemd, SSH, one network per VPC at
 the VPC MTU).  There are no GPUs and no RDMA devices; RxDM, the NCCL
 plugin installer and nccl-tests are clearly labelled STAND-INs, and
 the bandwidth figures are replays of recorded real runs.
=====================================================================
TXT
}

up() {
  local nodes="${1:-${NODES:-2}}" family="${2:-${FAMILY:-a3-mega}}" variant="${3:-${VARIANT:-ubuntu}}"
  if [ ! -x "$py" ]; then
    echo "demo: $py is missing: run \`make deps\` (or \`make demo\`, which runs it)" >&2
    exit 1
  fi
  if [ ! -f "$root/playbooks/site.yml" ]; then
    echo "demo: not yet: playbooks/site.yml does not exist in this checkout, so there is nothing to run" >&2
    exit 2
  fi
  banner "$family"
  "$root/scripts/link-collection.sh"
  t0=$SECONDS
  say "sandbox: $nodes x $family, $variant nodes (images are built once and cached)"
  if [ -f "$state/state.json" ]; then
    "${sandbox[@]}" down --name "$name"
  fi
  "${sandbox[@]}" up --name "$name" --family "$family" --nodes "$nodes" --variant "$variant"
  "${sandbox[@]}" status --name "$name"

  # the emulator and its token, for the inventory plugin and preflight's firewall check alike
  GCP_COMPUTE_API_ENDPOINT="$(cat "$state/emulator.url")"
  export GCP_COMPUTE_API_ENDPOINT GCP_AUTH_KIND=accesstoken GCP_ACCESS_TOKEN=sandbox-token-not-a-secret
  export GPUDIRECT_SANDBOX="$name"
  say "inventory: the gce_gpu plugin, from the Compute API emulator at $GCP_COMPUTE_API_ENDPOINT"
  ansible-inventory -i inventories/sandbox/ --graph

  mkdir -p "$reports"
  say "ansible-playbook playbooks/site.yml -i inventories/sandbox/  (SANDBOX)"
  rc=0
  ansible-playbook playbooks/site.yml -i inventories/sandbox/ -e "nccl_tests_report_dir=$reports" || rc=$?

  say "done in $((SECONDS - t0))s on a SANDBOX cluster with stand-ins (exit $rc)"
  if compgen -G "$reports/*" > /dev/null; then
    echo "report: $reports"
    find "$reports" -maxdepth 2 -type f -newer "$state/state.json" | sort | sed 's/^/  /'
  else
    echo "report: none written (see the play output above)"
  fi
  echo "nodes: ssh -i $state/id_ed25519 ops_example_com@<ip>   (addresses: tests/sandbox/sandbox.py status --name $name)"
  echo "remove everything: make demo-down"
  return "$rc"
}

down() {
  local images="${1:-}"
  if [ -f "$state/state.json" ] || [ -d "$state" ]; then
    "${sandbox[@]}" down --name "$name"
  else
    echo "demo: no sandbox named $name is running"
  fi
  if [ -d "$reports" ]; then
    echo "demo: the reports stay in $reports"
  fi
  if [ "$images" = "--images" ]; then
    "${sandbox[@]}" prune-images
  fi
}

case "${1:-up}" in
  up) shift || true; up "$@" ;;
  down) shift; down "${1:-}" ;;
  *) echo "usage: $0 up [NODES] [FAMILY] [VARIANT] | down [--images]" >&2; exit 2 ;;
esac
