# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where reports go by default is said the way the roles do it: $GPUDIRECT_REPORT_DIR, else the XDG state
directory's gpudirect-gcp/reports; no doc still says the old playbook_dir default."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PARTS = ("GPUDIRECT_REPORT_DIR", "XDG_STATE_HOME", ".local/state", "gpudirect-gcp/reports")


def _default(role, var):
    with open(os.path.join(ROOT, "roles", role, "defaults", "main.yml"), encoding="utf-8") as fh:
        return yaml.safe_load(fh)[var]


def test_both_roles_default_to_the_same_place():
    for role, var in (("nccl_tests", "nccl_tests_report_dir"), ("diagnose", "diagnose_report_dir")):
        default = _default(role, var)
        assert all(part in default for part in PARTS), (role, default)


def test_the_docs_state_that_default_and_not_the_old_one():
    docs = glob.glob(os.path.join(ROOT, "docs", "*.md")) + [os.path.join(ROOT, "README.md")]
    text = {}
    for path in docs:
        with open(path, encoding="utf-8") as fh:
            text[os.path.relpath(path, ROOT)] = fh.read()
    assert [p for p, t in text.items() if "playbook_dir" in t] == []
    for path in ("README.md", "docs/awx.md"):
        assert "GPUDIRECT_REPORT_DIR" in text[path] and "gpudirect-gcp/reports" in text[path], path
