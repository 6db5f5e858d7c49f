#!/usr/bin/env bash
# Installs the Debian packages the sandbox and the tests need, only when missing.
#   scripts/install-system-deps.sh          everything
#   scripts/install-system-deps.sh --venv   only what `python3 -m venv` needs
# (Debian's python3 has no ensurepip without python3-venv).
set -euo pipefail
python="${PYTHON:-python3}"
missing=()
"$python" -c 'import ensurepip' 2>/dev/null || missing+=("python3-venv")

declare -A want=(
  [podman]=podman
  [runc]=runc
  [debootstrap]=debootstrap
  [docker-registry]=docker-registry
  [ssh]=openssh-client
  [ssh-keygen]=openssh-client
  [mpirun]=openmpi-bin
  [rsync]=rsync
  [ip]=iproute2
  [ping]=iputils-ping
  [git]=git
  [openssl]=openssl
  [shellcheck]=shellcheck
  # promtool validates the node health metrics and alert rules; Prometheus, Alertmanager and
  # ansible-rulebook's Java carry the alert-to-remediation chain in the sandbox
  [promtool]=prometheus
  [prometheus-alertmanager]=prometheus-alertmanager
  [java]=default-jre-headless
  # the fleet page's test opens it in a real browser, headless
  [chromium]=chromium
)
[ "${1:-}" = --venv ] && want=()
for cmd in "${!want[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin" command -v "$cmd" >/dev/null 2>&1 || missing+=("${want[$cmd]}")
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
mapfile -t pkgs < <(printf '%s\n' "${missing[@]}" | sort -u)
echo "installing Debian packages: ${pkgs[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "error: missing packages (${pkgs[*]}) and not root: install them with apt-get" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
