# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Removing the demo sandbox removes what the sandbox made, never the user's reports."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def test_demo_down_leaves_the_reports(tmp_path):
    reports = tmp_path / "state" / "gpudirect-gcp" / "reports" / "a3-mega-cluster-1"
    reports.mkdir(parents=True)
    (reports / "report.json").write_text("{}\n")
    # a name of this run's own: the unit stages of the three ansible-core releases run side by side
    legacy = os.path.join(ROOT, "build", "demo", "reports", "keep-probe-%d" % os.getpid())
    os.makedirs(legacy, exist_ok=True)
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"), GPUDIRECT_DEMO_NAME="probe-no-such-sandbox")
    env.pop("GPUDIRECT_REPORT_DIR", None)
    try:
        out = subprocess.run([os.path.join(ROOT, "scripts", "demo.sh"), "down"], env=env, cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=120,
                             check=False)
        assert out.returncode == 0, out.stdout
        assert (reports / "report.json").exists()
        assert os.path.isdir(legacy)
        assert "the reports stay in %s" % (tmp_path / "state" / "gpudirect-gcp" / "reports") in out.stdout
    finally:
        os.rmdir(legacy)
