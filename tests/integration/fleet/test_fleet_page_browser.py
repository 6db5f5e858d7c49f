# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet page in a real browser (headless Chromium, Debian's package; scripts/install-system-deps.sh
installs it): the DOM it builds has the hosts in order with their day strips, and a finding's text that is
markup stays text: no element, no script, the title unchanged."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "build", "collections"))

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.fleet import fleet_page, ledger  # noqa: E402

DAY = ledger.DAY
NOW = 400 * DAY + 3600
HOSTILE = '<img src=x onerror="document.title=\'owned\'"><script>document.title="owned"</script>'


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    raise AssertionError("no Chromium on the PATH: scripts/install-system-deps.sh installs Debian's chromium")


def dom(path, tmp_path):
    argv = [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
            "--user-data-dir=%s" % (tmp_path / "profile"), "--dump-dom", "file://%s" % path]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0 and "<html" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


def test_the_browser_builds_the_page_in_order_and_runs_nothing_a_node_wrote(tmp_path):
    raws = [
        {"kind": "finding", "host": "h-busy", "time": NOW - 2 * DAY, "node": "vm-1", "component": "gpu",
         "subject": "GPU 1", "cause": "row remap pending", "place": {"block": "b1", "subblock": "s1"}},
        {"kind": "finding", "host": "h-busy", "time": NOW - DAY, "node": "vm-1", "component": "gpu",
         "subject": "GPU 1", "cause": "NVLink down", "place": {"block": "b1", "subblock": "s1"}},
        {"kind": "finding", "host": "h-repeat", "time": NOW - 5 * DAY, "node": "vm-2", "component": "gpu",
         "subject": "GPU 3", "cause": "Xid 79", "place": {"block": "b1", "subblock": "s2"}},
        {"kind": "outcome", "host": "h-repeat", "time": NOW - 4 * DAY, "node": "vm-2", "outcome": "cleared",
         "rung": "reset_gpu"},
        {"kind": "finding", "host": "h-repeat", "time": NOW - DAY, "node": "vm-3", "component": "gpu",
         "subject": "GPU 3", "cause": HOSTILE, "place": {"block": "b1", "subblock": "s2"}},
    ]
    records, _new, problems = ledger.add([], raws)
    assert problems == []
    path = tmp_path / "fleet.html"
    path.write_text(fleet_page.render(records, NOW, title="Fleet"))
    built = dom(path, tmp_path)
    assert re.search(r"<title>Fleet</title>", built)
    hosts = re.search(r'<table id="hosts">.*?<tbody>(.*?)</tbody>', built, re.S).group(1)
    order = re.findall(r"<tr(?: class=\"repeat\")?><td>(h-[a-z]+)</td>", hosts)
    assert order == ["h-repeat", "h-busy"]
    assert '<tr class="repeat"><td>h-repeat</td>' in hosts
    # the strips are SVG the browser parsed: one bar for each day a host failed (two days each)
    assert len(re.findall(r'<rect class="bar"', hosts)) == 4
    # the node's markup is text in the DOM: no img or script element anywhere
    assert not re.search(r"<img\b|<script\b", built)
    assert "&lt;img src=x onerror=" in built
