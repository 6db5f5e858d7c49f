# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The generated parts of the docs match the code they are generated from."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_readme_and_role_readmes_are_current():
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_docs.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
