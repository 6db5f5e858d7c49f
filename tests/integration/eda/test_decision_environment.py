# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The decision environment's build context, written by the real ansible-builder create: the collection
tarball with its rulebooks and event source, installed without the playbooks' collections, the source's
Python dependency, and none of the collection's own (they belong in the execution environment)."""

import os
import subprocess
import sys
import tarfile

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PREPARE = os.path.join(ROOT, "awx", "ee", "prepare.py")


def test_the_decision_environment_holds_the_rulebooks_the_source_and_its_dependency(tmp_path):
    out = tmp_path / "de"
    done = subprocess.run([sys.executable, PREPARE, "--base", "de", "--create", str(out)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout
    build = out / "context" / "_build"
    with tarfile.open(str(build / "collections" / "gpudirect-gcp.tar.gz")) as tar:
        names = tar.getnames()
    assert {"extensions/eda/rulebooks/gpudirect_remediate_controller.yml",
            "extensions/eda/plugins/event_source/alertmanager.py"} <= set(names)
    with open(str(build / "requirements.yml")) as handle:
        assert [c["name"] for c in yaml.safe_load(handle)["collections"]] == [
            "/build/collections/gpudirect-gcp.tar.gz"]
    containerfile = (out / "context" / "Containerfile").read_text()
    assert 'ARG ANSIBLE_GALAXY_CLI_COLLECTION_OPTS="--no-deps"' in containerfile
    assert "de-minimal-rhel9" in containerfile
    assert "aiohttp>=3.9" in (build / "requirements.txt").read_text()
    # the collection's own dependencies are left out by name
    assert (build / "exclude-collections.txt").read_text().split() == ["gpudirect.gcp"]
