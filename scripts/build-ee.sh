#!/usr/bin/env bash
# Builds the sandbox's execution environment image localhost/gpudirect-gcp-ee:latest
# with ansible-builder 3 and podman, from local images only.  It builds the
# shipped definition (awx/ee/execution-environment.yml, on Red Hat's minimal
# EE) with the sandbox's stand-ins merged over it (tests/sandbox/ee/overrides.yml):
#   1. the EE base: localhost/gpudirect-standin-base (the sandbox's Debian
#      image) + pip/venv/ssh (tests/sandbox/ee/base/Containerfile), apt from the
#      Debian mirror, in place of the published base this machine cannot pull;
#   2. the collection tarball, and the collections galaxy.yml depends on copied
#      from the controller's own `ansible` package (.venv), never from Galaxy;
#   3. skipped when the image's io.gpudirect.ee.inputs label already holds the
#      hash of these inputs (tests/sandbox/ee/ee_inputs.py digest): nothing changed;
#   4. otherwise wheels of every Python package, fetched on this host (pip
#      download), so nothing inside the build needs a package index, and
#      ansible-builder build -f build/ee/execution-environment.yml (ansible-builder
#      in its own virtualenv, build/ee-venv).
# With --run-sandbox NAME it then runs site.yml on sandbox NAME through
# ansible-runner inside the EE, the way AWX runs a job (--playbook NAME picks
# another playbook of awx/project, --extra-vars FILE.yml adds extra variables
# as AWX adds survey answers, --skip-tags TAGS as a job template's skip tags;
# --no-build reuses the image already built, --rebuild builds even when the
# inputs did not change).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$root/tests/sandbox/podman/containers.conf}"
EE_IMAGE=localhost/gpudirect-gcp-ee:latest
BASE_IMAGE=localhost/gpudirect-ee-base:latest
INPUTS_LABEL=io.gpudirect.ee.inputs
work="$root/build/ee"
ctx_in="$work/context"
venv="$root/build/ee-venv"
py="$root/.venv/bin/python"
ee_tools="$root/tests/sandbox/ee"
definition="$work/execution-environment.yml"
sandbox=""
playbook=site.yml
extravars=""
skiptags=""
build=1
rebuild=0

while [ $# -gt 0 ]; do
  case "$1" in
    --run-sandbox) sandbox="$2"; shift 2 ;;
    --playbook) playbook="$2"; shift 2 ;;
    --extra-vars) extravars="$2"; shift 2 ;;
    --skip-tags) skiptags="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --rebuild) rebuild=1; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "build-ee.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

t0=$SECONDS
step() { echo "== [$((SECONDS - t0))s] $*"; }

if [ "$build" = 1 ]; then
step "stand-in base image"
if ! podman image exists localhost/gpudirect-standin-base:latest; then
  python3 -c "import sys; sys.path.insert(0, 'tests/sandbox'); from sandboxlib import images; images.base_image()"
fi

step "EE base image $BASE_IMAGE"
podman build --pull=never -q -t "$BASE_IMAGE" "$ee_tools/base" >/dev/null

step "collection tarball"
rm -rf "$ctx_in/collections" && mkdir -p "$ctx_in/collections"
"$root/.venv/bin/ansible-galaxy" collection build --force --output-path "$ctx_in/collections" "$root" >/dev/null
mv "$ctx_in"/collections/gpudirect-gcp-*.tar.gz "$ctx_in/collections/gpudirect-gcp.tar.gz"

step "collections galaxy.yml depends on, from the controller's ansible package"
# Galaxy cannot be reached: the dependencies are the ones the collection is
# tested with on the controller, copied into the build context and from there
# into the image (append_galaxy in tests/sandbox/ee/overrides.yml).
"$py" "$ee_tools/ee_inputs.py" deps galaxy.yml "$ctx_in/deps"

step "definition: awx/ee/execution-environment.yml with the sandbox's overrides -> $definition"
"$py" "$ee_tools/ee_inputs.py" definition awx/ee/execution-environment.yml tests/sandbox/ee/overrides.yml "$definition"

# The inputs: the collection by content (awx/ee is in it), the merged
# definition, this script, its dependencies' manifests and the base image.
# Wheels are left out on purpose: a newer release on PyPI alone does not
# rebuild a cached image (--rebuild does).
podman image inspect --format '{{.Id}}' "$BASE_IMAGE" > "$ctx_in/base-image-id"
mapfile -t dep_manifests < <(find "$ctx_in/deps" -name MANIFEST.json -o -name FILES.json | sort)
inputs=$("$py" "$ee_tools/ee_inputs.py" digest "$ctx_in/collections/gpudirect-gcp.tar.gz" \
  "$definition" "$0" "$ctx_in/base-image-id" ${dep_manifests[@]+"${dep_manifests[@]}"})
have=$(podman image inspect --format "{{index .Labels \"$INPUTS_LABEL\"}}" "$EE_IMAGE" 2>/dev/null || true)

if [ "$rebuild" = 0 ] && [ "$have" = "$inputs" ]; then
  step "EE image $EE_IMAGE is up to date (inputs ${inputs:0:12}); not rebuilt"
else
step "ansible-builder in $venv"
if [ ! -x "$venv/bin/ansible-builder" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "ansible-builder>=3.1,<4"
fi
"$venv/bin/ansible-builder" --version

step "wheels (pip download on this host)"
mkdir -p "$ctx_in/wheels"
# What the builder's stages install: ansible-core and ansible-runner (base),
# bindep/pyyaml/packaging (builder), the collection's requirements.txt,
# dumb-init (final), and pip/setuptools/wheel for building.
# The wheels are for the image's Python, whatever Python runs this script (the
# newest ansible-core's tests run it from a Python 3.12+ virtualenv), and its
# ansible-core range is the one the merged definition installs.
ee_python=$(podman run --rm "$BASE_IMAGE" python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
core_pin=$("$py" -c "import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))['dependencies']['ansible_core']['package_pip'])" "$definition")
"$venv/bin/pip" download -q --dest "$ctx_in/wheels" --only-binary=:all: --python-version "$ee_python" \
  "$core_pin" "ansible-runner>=2.3" pyyaml packaging "dumb-init==1.2.5" \
  pip setuptools wheel -r requirements.txt
# bindep and its parser ship as source only in places: allow sdists for them
"$venv/bin/pip" download -q --dest "$ctx_in/wheels" bindep

step "ansible-builder build -> $EE_IMAGE (inputs ${inputs:0:12})"
"$venv/bin/ansible-builder" build -f "$definition" -c "$work/ctx" \
  --container-runtime podman -t "$EE_IMAGE" -v 1 \
  --extra-build-cli-args="--pull=never --label $INPUTS_LABEL=$inputs"
fi
podman run --rm "$EE_IMAGE" ansible-galaxy collection list gpudirect.gcp
podman run --rm "$EE_IMAGE" ansible-doc -t inventory gpudirect.gcp.gce_gpu >/dev/null && echo "EE: inventory plugin docs load"
step "EE image ready"
fi

[ -n "$sandbox" ] || exit 0

step "$playbook on sandbox $sandbox through ansible-runner in the EE"
inv="$root/build/sandbox/$sandbox/inventory.yml"
[ -f "$inv" ] || { echo "build-ee.sh: no sandbox $sandbox ($inv missing); run tests/sandbox/sandbox.py up --name $sandbox" >&2; exit 2; }
# A private data dir laid out as AWX lays it out for a job
pdd="$work/runner-$sandbox"
rm -rf "$pdd" && mkdir -p "$pdd/project" "$pdd/inventory" "$pdd/env"
cp awx/project/*.yml "$pdd/project/"
cp "$inv" "$pdd/inventory/hosts.yml"
key=$(python3 -c "import yaml,sys; d=yaml.safe_load(open(sys.argv[1])); import json
def find(n):
    if isinstance(n, dict):
        for k, v in n.items():
            if k == 'ansible_ssh_private_key_file': return v
            r = find(v)
            if r: return r
print(find(d) or '')" "$inv")
# host keys are checked against the known_hosts the sandbox wrote (mounted below)
known_hosts="$root/build/sandbox/$sandbox/known_hosts"
printf '{"ANSIBLE_FORCE_COLOR": "0", "ANSIBLE_NOCOLOR": "1"}\n' > "$pdd/env/envvars"
# a job template's skip tags reach ansible-playbook the same way (env/cmdline)
if [ -n "$skiptags" ]; then printf -- '--skip-tags %s\n' "$skiptags" > "$pdd/env/cmdline"; fi
# NCCL reports go to the private data dir (as the AWX job templates set it);
# the caller's extra variables are added to that
python3 - "$pdd/env/extravars" "$extravars" <<'PY'
import sys, yaml
out = {"nccl_tests_report_dir": "/runner/artifacts/nccl-reports"}
if sys.argv[2]:
    with open(sys.argv[2]) as fh:
        out.update(yaml.safe_load(fh) or {})
with open(sys.argv[1], "w") as fh:
    yaml.safe_dump(out, fh)
PY
set +e
podman run --rm --network host -v "$pdd:/runner:Z" ${key:+-v "$key:$key:ro"} -v "$known_hosts:$known_hosts:ro" \
  --user root "$EE_IMAGE" \
  ansible-runner run /runner -p "$playbook"
rc=$?
set -e
step "ansible-runner exit status: $rc (artifacts in $pdd/artifacts)"
exit $rc
