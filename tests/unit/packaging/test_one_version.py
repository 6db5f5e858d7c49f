# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One version everywhere: nothing says it was added in a release after the one galaxy.yml builds, and no
changelog fragment is named for a release."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import yaml
from packaging.version import Version

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ADDED = re.compile(r"version_added:\s*['\"]?([0-9][0-9.]*)")


def _version():
    with open(os.path.join(ROOT, "galaxy.yml"), encoding="utf-8") as fh:
        return Version(yaml.safe_load(fh)["version"])


def added_after(text, version):
    return [v for v in ADDED.findall(text) if Version(v) > version]


def test_the_finder_reads_version_added_in_every_form():
    assert added_after("version_added: 1.2.0\n  version_added: '1.0.0'\nversion_added: \"2.0.0\"",
                       Version("1.0.0")) == ["1.2.0", "2.0.0"]


def test_nothing_is_added_in_a_release_after_the_collections_version():
    version, found = _version(), []
    for top in ("plugins", "roles"):
        for folder, _dirs, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name.endswith((".py", ".yml")):
                    with open(os.path.join(folder, name), encoding="utf-8") as fh:
                        found += ["%s: %s" % (name, v) for v in added_after(fh.read(), version)]
    assert found == []


def test_no_fragment_is_named_for_a_release():
    names = os.listdir(os.path.join(ROOT, "changelogs", "fragments"))
    assert [n for n in names if re.match(r"\d+\.\d+", n)] == []
