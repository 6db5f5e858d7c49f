# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The built collection holds what users run: never the working tree's results or caches, nor the
development toolchain."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import subprocess
import sys
import tarfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
# what a working tree gathers that must never ship
LEFTOVERS = ["nccl-reports/run-1/report.json", "reports/run-1/report.html", ".pytest_cache/v/cache/lastfailed",
             "plugins/modules/__pycache__/x.cpython-311.pyc", ".hypothesis/examples/x", ".ansible/tmp/x",
             "tests/unit/.pytest_cache/x"]
FORBIDDEN = ("nccl-reports/", "reports/", ".pytest_cache", "__pycache__", ".pyc", ".hypothesis/", ".ansible/",
             ".venv/", "build/", ".git/")
# the development toolchain, at the top of the tree
DEVELOPMENT = ("tests/", "extensions/molecule/", "benchmarks/", "scripts/", "inventories/sandbox/", "changelogs/fragments/",
               ".ci/", "Makefile", "requirements-dev.txt", "pytest.ini", "conftest.py", "ansible.cfg", ".ansible-lint",
               ".ansible-lint-ignore", ".yamllint", ".gitignore")
# what users run
SHIPPED = ("playbooks/diagnose.yml", "plugins/inventory/gce_gpu.py", "roles/diagnose/tasks/main.yml", "site.yml",
           "README.md", "COPYING", "requirements.txt", "requirements.yml", "meta/runtime.yml", "bindep.txt",
           "changelogs/changelog.yaml", "CHANGELOG.rst", "docs/diagnose.md", "monitoring/prometheus/gpudirect.rules.yml",
           "monitoring/alertmanager/gpudirect-remediation.yml",
           "awx/controller/job_templates.yml",
           # ansible-rulebook resolves gpudirect.gcp.<rulebook> and the source from the installed collection
           "extensions/eda/rulebooks/gpudirect_remediate.yml", "extensions/eda/plugins/event_source/alertmanager.py",
           # the user configuration the quick start copies to a project directory
           "inventories/gcp/ansible.cfg", "inventories/gcp/cluster.gce_gpu.yml", "inventories/gcp/group_vars/all.yml")


def test_tarball_has_no_results_or_caches(tmp_path):
    tree = tmp_path / "src"
    # caches are left out of the copy: a test run beside this one (the other core's units) writes and
    # deletes them while the copy walks the tree; the leftovers below stand in for them
    shutil.copytree(ROOT, str(tree), ignore=shutil.ignore_patterns(
        ".venv", "build", ".git", ".cache", "*.tar.gz", ".hypothesis", ".pytest_cache", "__pycache__",
        ".ansible"))
    for rel in LEFTOVERS:
        path = tree / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("left over\n")
    galaxy = os.path.join(os.path.dirname(sys.executable), "ansible-galaxy")
    subprocess.check_call([galaxy, "collection", "build", "--force", "--output-path", str(tmp_path), str(tree)],
                          stdout=subprocess.DEVNULL)
    tarball = [p for p in os.listdir(str(tmp_path)) if p.endswith(".tar.gz")][0]
    with tarfile.open(str(tmp_path / tarball)) as tar:
        names = tar.getnames()
    shipped = [n for n in names if any(bad in n + ("/" if not n.endswith("/") else "") for bad in FORBIDDEN)]
    assert shipped == []
    missing = [wanted for wanted in SHIPPED if wanted not in names]
    assert missing == []
    development = [n for n in names if n.startswith(DEVELOPMENT) or n + "/" in DEVELOPMENT]
    assert development == []
