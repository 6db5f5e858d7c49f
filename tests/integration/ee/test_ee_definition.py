# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The execution environment as a user builds it, from the collection tarball
alone: ansible-builder finds the collection's own dependencies through
meta/execution-environment.yml, and renders the build context of the shipped
definition (awx/ee/, on the published base).  Only building the tarball reads
the checkout; everything after reads the installed collection."""

import os
import re
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN = os.path.dirname(sys.executable)


def run(argv, cwd=None):
    # without the checkout's ansible.cfg, whose collection path links to the
    # checkout: there an install of the tarball finds it installed and does nothing
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False, env=env)
    assert result.returncode == 0, "%s: rc %d\n%s\n%s" % (
        argv[:3], result.returncode, result.stdout, result.stderr)
    return result.stdout


def declared(name):
    """The requirement lines of a requirements.txt or bindep.txt (comments and blanks left out)."""
    with open(os.path.join(ROOT, name), encoding="utf-8") as handle:
        return [line.split("#", 1)[0].strip() for line in handle if line.split("#", 1)[0].strip()]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The collection built from the checkout and installed from its tarball, alone."""
    tmp = tmp_path_factory.mktemp("ee")
    run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--output-path", str(tmp / "dist"), ROOT],
        cwd=str(tmp))
    (tarball,) = (tmp / "dist").iterdir()
    run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--no-deps", "--offline",
         "-p", str(tmp / "installed"), str(tarball)], cwd=str(tmp))
    assert (tmp / "installed" / "ansible_collections" / "gpudirect" / "gcp" / "MANIFEST.json").is_file()
    return tmp / "installed"


def test_introspect_lists_exactly_the_declared_dependencies(installed):
    out = run([os.path.join(BIN, "ansible-builder"), "introspect", str(installed)])
    # YAML after a comment line naming the directory: each requirement as
    # "REQUIREMENT  # from collection NAME"
    data = yaml.safe_load(out)
    for kind, source in (("python", "requirements.txt"), ("system", "bindep.txt")):
        found = [entry.split("  # from collection ") for entry in data[kind]]
        assert {origin for _req, origin in found} == {"gpudirect.gcp"}, data[kind]
        assert [req for req, _origin in found] == declared(source)


def test_the_shipped_definition_renders_its_build_context(installed, tmp_path):
    coll = installed / "ansible_collections" / "gpudirect" / "gcp"
    ee_dir = coll / "awx" / "ee"
    # as a user with the tarball does: the shipped prepare.py, given that tarball
    (tarball,) = (installed.parent / "dist").iterdir()
    work = tmp_path / "ee"
    run([sys.executable, str(ee_dir / "prepare.py"), "--tarball", str(tarball), "--create", str(work)],
        cwd=str(tmp_path))
    with open(str(work / "context" / "Containerfile"), encoding="utf-8") as handle:
        containerfile = handle.read()
    with open(str(ee_dir / "execution-environment.yml"), encoding="utf-8") as handle:
        base = yaml.safe_load(handle)["images"]["base_image"]["name"]
    # a published base, by registry, name and tag, that --build-arg EE_BASE_IMAGE overrides
    assert re.match(r"^[a-z0-9.-]+\.[a-z]+/[\w./-]+:[\w.-]+$", base), base
    assert 'ARG EE_BASE_IMAGE="%s"' % base in containerfile
    assert "FROM $EE_BASE_IMAGE" in containerfile
    # the collection comes from the tarball in the context, never by name from
    # a Galaxy where it is not published
    with open(str(work / "context" / "_build" / "requirements.yml"), encoding="utf-8") as handle:
        names = [c["name"] for c in yaml.safe_load(handle)["collections"]]
    assert "gpudirect.gcp" not in names and names[0] == "/build/collections/gpudirect-gcp.tar.gz"
    assert (work / "context" / "_build" / "collections" / "gpudirect-gcp.tar.gz").is_file()
    assert "/usr/bin/python3.11" in containerfile and "microdnf" in containerfile


def test_the_build_command_ships_with_the_definition(installed):
    ee_dir = installed / "ansible_collections" / "gpudirect" / "gcp" / "awx" / "ee"
    with open(str(ee_dir / "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    assert "make ee" in readme and "prepare.py" in readme
    assert "ansible-builder build -f execution-environment.yml" in readme
    assert "--build-arg EE_BASE_IMAGE=" in readme
    assert "EE_COLLECTION_GIT" in readme and "execution-environment-community.yml" in readme
    # the sandbox's stand-ins, and any tarball or context left by a build, stay out of the tarball
    assert sorted(os.listdir(str(ee_dir))) == [
        "README.md", "decision-environment.yml", "execution-environment-community.yml", "execution-environment.yml",
        "prepare.py", "requirements-community.yml", "requirements-de.yml", "requirements.yml"]
