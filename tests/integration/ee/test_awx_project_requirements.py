# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""awx/project/collections/requirements.yml, which AWX installs on every
project sync: as shipped it must install without a server (the execution
environment built from awx/ee carries gpudirect.gcp and its dependencies), and
it names no source that looks real but is not."""

import os
import re
import subprocess
import sys

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
REQUIREMENTS = os.path.join(ROOT, "awx", "project", "collections", "requirements.yml")


def test_a_project_sync_installs_nothing_and_needs_no_server(tmp_path):
    # what AWX's project update runs, offline: a placeholder or an unpublished
    # name would fail here as it fails the sync
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    result = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-galaxy"), "collection", "install",
                             "--offline", "-r", REQUIREMENTS, "-p", str(tmp_path / "c")],
                            capture_output=True, text=True, check=False, env=env, cwd=str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert not (tmp_path / "c" / "ansible_collections").exists()


def test_the_sources_are_left_to_the_operator_and_documented():
    with open(REQUIREMENTS, encoding="utf-8") as handle:
        text = handle.read()
    assert yaml.safe_load(text) == {"collections": []}
    # the comments say where an entry comes from, without a URL that looks real
    assert not re.search(r"(https?|ssh|git)://", text), text
    assert "type: git" in text and "gpudirect.gcp" in text
    with open(os.path.join(ROOT, "awx", "project", "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    assert "collections/requirements.yml" in readme
