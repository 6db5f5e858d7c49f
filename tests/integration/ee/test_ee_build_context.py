# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The build context `make ee` writes (awx/ee/prepare.py, then the real
`ansible-builder create`) for each base: the collection comes from the local
tarball, or from the git URL the operator gives, never by name from a Galaxy
where it is not published; its Python and system dependencies are found the
way the image build finds them; and the dependency pins give each base only
releases its ansible-core runs.  No container is built."""

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

import pytest
import yaml
from ansible.galaxy.dependency_resolution.versioning import meets_requirements

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
EE_DIR = os.path.join(ROOT, "awx", "ee")
PREPARE = os.path.join(EE_DIR, "prepare.py")
BIN = os.path.dirname(sys.executable)
TARBALL_IN_IMAGE = "/build/collections/gpudirect-gcp.tar.gz"

# base -> (definition, the oldest ansible-core that base carries)
BASES = {
    # Red Hat's AAP 2.5 minimal EE: ansible-core 2.16
    "aap": ("execution-environment.yml", "2.16"),
    # ghcr.io/ansible-community/community-ee-minimal: its README asks for 2.18 or newer
    "community": ("execution-environment-community.yml", "2.18"),
}

# requires_ansible of releases, from each collection's meta/runtime.yml at that
# release; the installed `ansible` packages add theirs (installed_releases).
# "next" marks the first release not checked yet where the collection may raise
# it: ansible.posix raised it in a minor release (2.2.0), the others only in a
# major one.
RECORDED = {
    "ansible.posix": [("1.6.2", "2.15"), ("2.0.0", "2.15"), ("2.1.0", "2.15"), ("2.2.0", "2.16"),
                      ("2.3.0", "next")],
    "community.crypto": [("2.18.0", "2.9.10"), ("2.26.10", "2.9.10"), ("3.0.0", "2.17"), ("4.0.0", "next")],
    "community.general": [("8.6.11", "2.13"), ("9.5.13", "2.13"), ("10.0.0", "2.15"), ("10.7.9", "2.15"),
                          ("11.0.0", "2.16"), ("11.4.10", "2.16"), ("12.0.0", "2.17"), ("12.6.5", "2.17"),
                          ("13.0.0", "2.18"), ("14.0.0", "next")],
}


def run(argv, cwd=None, check=True):
    # without the checkout's ansible.cfg, whose collection path links to the checkout
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False, env=env)
    if check:
        assert result.returncode == 0, "%s: rc %d\n%s\n%s" % (
            argv[:4], result.returncode, result.stdout, result.stderr)
    return result


def load(path):
    with open(str(path), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def declared(name):
    """The requirement lines of requirements.txt or bindep.txt (comments and blanks left out)."""
    with open(os.path.join(ROOT, name), encoding="utf-8") as handle:
        return [line.split("#", 1)[0].strip() for line in handle if line.split("#", 1)[0].strip()]


def requires(spec):
    """'>=2.16.0' (meta/runtime.yml) -> '2.16.0'."""
    return spec.strip().lstrip(">=").strip()


def core_version(text):
    """'2.16' or '2.16.0' -> (2, 16, 0), so that the two compare equal."""
    parts = [int(p) for p in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def installed_releases():
    """(collection, version, requires_ansible) of the collections the installed ansible packages ship."""
    found = []
    roots = [os.path.join(ROOT, ".venv", "lib"), os.path.join(ROOT, "build", "venv-newest", "lib")]
    for root in roots:
        if not os.path.isdir(root):
            continue
        for pyver in os.listdir(root):
            base = os.path.join(root, pyver, "site-packages", "ansible_collections")
            for name in RECORDED:
                path = os.path.join(base, *name.split("."))
                try:
                    with open(os.path.join(path, "MANIFEST.json"), encoding="utf-8") as handle:
                        version = json.load(handle)["collection_info"]["version"]
                    runtime = load(os.path.join(path, "meta", "runtime.yml"))
                except OSError:
                    continue
                found.append((name, version, requires(runtime["requires_ansible"])))
    return found


@pytest.fixture(scope="module")
def tarball(tmp_path_factory):
    """The collection tarball, built once from the checkout."""
    out = tmp_path_factory.mktemp("dist")
    run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--output-path", str(out), ROOT])
    (path,) = out.iterdir()
    return path


def prepare(out, *args, check=True):
    return run([sys.executable, PREPARE] + list(args) + [str(out)], check=check)


@pytest.fixture(scope="module", params=sorted(BASES))
def context(request, tarball, tmp_path_factory):
    """(base, staged directory, context) as `make ee` leaves them, from the tarball."""
    out = tmp_path_factory.mktemp("ee-" + request.param)
    prepare(out, "--base", request.param, "--tarball", str(tarball), "--create")
    return request.param, out, out / "context"


def galaxy_entries(ctx):
    return load(ctx / "_build" / "requirements.yml")["collections"]


def test_the_context_installs_the_collection_from_the_tarball_it_holds(context, tarball):
    _base, _out, ctx = context
    held = ctx / "_build" / "collections" / "gpudirect-gcp.tar.gz"
    with open(str(held), "rb") as one, open(str(tarball), "rb") as two:
        assert one.read() == two.read()
    with tarfile.open(str(held)) as tar:
        info = json.load(tar.extractfile("MANIFEST.json"))["collection_info"]
    assert (info["namespace"], info["name"], info["version"]) == ("gpudirect", "gcp", load(os.path.join(ROOT, "galaxy.yml"))["version"])
    entries = galaxy_entries(ctx)
    ours = [e for e in entries if "gpudirect" in e["name"]]
    assert ours == [{"name": TARBALL_IN_IMAGE, "type": "file"}]
    # nothing from git, nothing by a name no Galaxy serves
    assert all(e.get("type") != "git" for e in entries), entries
    with open(str(ctx / "Containerfile"), encoding="utf-8") as handle:
        containerfile = handle.read()
    # /build is where the galaxy stage copies _build, and where it installs from
    assert "COPY _build /build" in containerfile
    assert "ansible-galaxy collection install $ANSIBLE_GALAXY_CLI_COLLECTION_OPTS -r requirements.yml" in containerfile


def test_the_context_finds_the_collection_python_and_system_dependencies(context, tarball, tmp_path):
    # the builder stage's own introspection, from the context, over the
    # collection installed from the tarball the context holds
    _base, _out, ctx = context
    installed = tmp_path / "collections"
    run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--no-deps", "--offline",
         "-p", str(installed), str(ctx / "_build" / "collections" / "gpudirect-gcp.tar.gz")],
        # not in the checkout, whose ansible.cfg finds the collection installed already
        cwd=str(tmp_path))
    pip, bindep = tmp_path / "requirements.txt", tmp_path / "bindep.txt"
    run([sys.executable, str(ctx / "_build" / "scripts" / "introspect.py"), "introspect", str(installed),
         "--exclude-collection-reqs", str(ctx / "_build" / "exclude-collections.txt"),
         "--write-pip", str(pip), "--write-bindep", str(bindep)])
    for written, source in ((pip, "requirements.txt"), (bindep, "bindep.txt")):
        lines = [line for line in written.read_text().splitlines() if line]
        assert [line.split("  # from collection ")[0] for line in lines] == declared(source)
        assert all(line.endswith("  # from collection gpudirect.gcp") for line in lines)
    # community.crypto's own needs stay out (see the definition)
    assert (ctx / "_build" / "exclude-collections.txt").read_text().split() == ["community.crypto"]


def test_each_base_has_its_own_package_manager_and_python(context):
    base, out, ctx = context
    with open(str(ctx / "Containerfile"), encoding="utf-8") as handle:
        containerfile = handle.read()
    definition = load(out / BASES[base][0])
    image = definition["images"]["base_image"]["name"]
    assert 'ARG EE_BASE_IMAGE="%s"' % image in containerfile
    if base == "aap":
        assert image.startswith("registry.redhat.io/ansible-automation-platform-25/ee-minimal-rhel9:")
        assert 'ARG PKGMGR="/usr/bin/microdnf"' in containerfile
        assert 'ARG PYCMD="/usr/bin/python3.11"' in containerfile
    else:
        # public: pulled without a Red Hat login
        assert image.startswith("ghcr.io/ansible-community/community-ee-minimal:")
        assert 'ARG PKGMGR="/usr/bin/dnf"' in containerfile
        assert 'ARG PYCMD="/usr/bin/python3"' in containerfile
    # ansible-core and ansible-runner come with either base: never installed over it
    assert "ansible_core" not in definition["dependencies"] and "ansible_runner" not in definition["dependencies"]


def test_the_pins_give_each_base_only_releases_its_core_runs(context):
    base, _out, ctx = context
    core = BASES[base][1]
    pins = {e["name"]: e.get("version", "*") for e in galaxy_entries(ctx) if e.get("type") != "file"}
    galaxy = load(os.path.join(ROOT, "galaxy.yml"))["dependencies"]
    # every collection galaxy.yml depends on, and nothing else
    assert sorted(pins) == sorted(galaxy)
    releases = [(name, version, req) for name, rows in RECORDED.items() for version, req in rows]
    releases += installed_releases()
    admitted = [(n, v, r) for n, v, r in releases if meets_requirements(v, pins[n])]
    too_new = [(n, v, r) for n, v, r in admitted if r == "next" or core_version(r) > core_version(core)]
    assert too_new == [], "%s on ansible-core %s: %s" % (base, core, pins)
    # and each pin still admits a release galaxy.yml admits and that core runs
    for name, spec in pins.items():
        assert any(n == name and r != "next" and meets_requirements(v, galaxy[name])
                   for n, v, r in admitted), (name, spec)
    if base == "aap":
        # the AAP 2.5 minimal EE's ansible-core 2.16: community.crypto 2.x, community.general 11 at most
        assert not meets_requirements("3.0.0", pins["community.crypto"])
        assert not meets_requirements("12.0.0", pins["community.general"])
    # the collection itself runs on that core
    assert core_version(requires(load(os.path.join(ROOT, "meta", "runtime.yml"))["requires_ansible"])) \
        <= core_version(core)


def test_a_git_url_given_replaces_the_tarball(tmp_path):
    url = "https://git.corp.internal/platform/gpudirect-gcp.git"
    out = tmp_path / "ee"
    prepare(out, "--base", "aap", "--git", url, "--ref", "v1.1.0", "--create")
    ctx = out / "context"
    entries = galaxy_entries(ctx)
    assert [e for e in entries if e.get("type") in ("git", "file")] == [{"name": url, "type": "git", "version": "v1.1.0"}]
    assert not (ctx / "_build" / "collections").exists()
    with open(str(ctx / "Containerfile"), encoding="utf-8") as handle:
        containerfile = handle.read()
    # ansible-galaxy clones with git, which a minimal base may lack
    assert re.search(r"RUN .*\$PKGMGR install -y git-core", containerfile)
    # the pins still hold
    assert {e["name"] for e in entries if e.get("type") is None} == set(load(os.path.join(ROOT, "galaxy.yml"))["dependencies"])


@pytest.mark.parametrize("url, message", [
    ("https://git.example.com/your-org/gpudirect-gcp.git", "is a placeholder"),
    ("", "--git needs the URL"),
    ("gpudirect.gcp", "not a git URL"),
])
def test_a_placeholder_or_missing_git_url_is_refused(tmp_path, url, message):
    result = prepare(tmp_path / "ee", "--git", url, check=False)
    assert result.returncode == 2
    assert message in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_without_a_checkout_or_tarball_it_says_what_to_give(tmp_path):
    # the prepare.py of an installed collection: no galaxy.yml to build from
    coll = tmp_path / "gcp"
    shutil.copytree(EE_DIR, str(coll / "awx" / "ee"))
    result = run([sys.executable, str(coll / "awx" / "ee" / "prepare.py"), str(tmp_path / "out")], check=False)
    assert result.returncode == 2 and "--tarball" in result.stderr and "--git" in result.stderr


def test_the_default_builds_the_tarball_from_the_checkout(tmp_path):
    out = tmp_path / "ee"
    prepare(out)
    with tarfile.open(str(out / "collections" / "gpudirect-gcp.tar.gz")) as tar:
        assert json.load(tar.extractfile("MANIFEST.json"))["collection_info"]["name"] == "gcp"
    assert (out / "execution-environment.yml").is_file()
    assert load(out / "requirements.yml")["collections"][0] == {"name": TARBALL_IN_IMAGE, "type": "file"}


def test_the_shipped_requirements_name_no_placeholder_and_no_unpublished_name():
    for name in ("requirements.yml", "requirements-community.yml"):
        entries = load(os.path.join(EE_DIR, name))["collections"]
        names = [e["name"] for e in entries]
        assert "gpudirect.gcp" not in names and TARBALL_IN_IMAGE in names, names
        with open(os.path.join(EE_DIR, name), encoding="utf-8") as handle:
            assert "example.com" not in handle.read()


def make_dry_run(*assignments):
    result = run(["make", "-n", "-C", ROOT, "ee"] + list(assignments))
    commands = [" ".join(line.split()) for line in result.stdout.replace("\\\n", " ").splitlines()]
    return [line for line in commands if "awx/ee/prepare.py" in line]


def test_make_ee_prepares_from_the_tarball_or_the_git_url_given():
    # by default: the tarball (prepare.py builds it), into an image
    (line,) = make_dry_run()
    assert "--git" not in line and "--tarball" not in line and "--base aap" in line
    assert "--build" in line and line.endswith(" build/ee-image")
    (line,) = make_dry_run("EE_BASE=community", "EE_COLLECTION_GIT=https://git.corp.internal/p/g.git",
                           "EE_COLLECTION_REF=v1.1.0", "EE_CONTEXT_ONLY=1")
    assert "--base community" in line and "--create" in line and "--build" not in line
    assert "--git 'https://git.corp.internal/p/g.git'" in line and "--ref 'v1.1.0'" in line
