# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The supported ansible-core range is said once (meta/runtime.yml), the test ends are its ends, and the
ansible-core and collections the tests run on are inside what the collection declares. The unit tests run
on both ends, so both are checked."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

import yaml
from ansible import release
from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _yaml(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def _pins(end):
    with open(os.path.join(ROOT, "tests", "requirements", end + ".txt"), encoding="utf-8") as fh:
        lines = [line.strip() for line in fh if line.strip() and not line.startswith("#")]
    return dict(re.match(r"([a-z-]+)(.*)", line).groups() for line in lines)


def _supported():
    return SpecifierSet(_yaml("meta", "runtime.yml")["requires_ansible"])


def test_this_ansible_core_is_one_the_collection_supports():
    assert Version(release.__version__) in _supported(), (release.__version__, str(_supported()))


def test_the_test_ends_are_the_ends_of_the_supported_range():
    supported = _supported()
    lowest = [s.version for s in supported if s.operator == ">="]
    # an upper bound only where a newer ansible-core is known to break the collection
    below = [s.version for s in supported if s.operator == "<"]
    assert len(lowest) == 1 and len(below) <= 1
    oldest, newest = SpecifierSet(_pins("oldest")["ansible-core"]), SpecifierSet(_pins("newest")["ansible-core"])
    low = Version(lowest[0])
    assert "%d.%d.0" % (low.major, low.minor) in oldest
    assert "%d.%d.0" % (low.major, low.minor + 1) not in oldest
    # the newest pin allows one minor release: the last below the bound, else the newest tested
    (top,) = [Version(s.version) for s in newest if s.operator == ">="]
    assert "%d.%d.0" % (top.major, top.minor + 1) not in newest and top > low
    if below:
        high = Version(below[0])
        assert (top.major, top.minor + 1) == (high.major, high.minor)


def test_the_readme_and_the_dev_requirements_state_the_same_range():
    declared = _yaml("meta", "runtime.yml")["requires_ansible"]
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        assert "ansible-core `%s`" % re.sub(r"(\d+\.\d+)\.0\b", r"\1", declared) in fh.read()
    with open(os.path.join(ROOT, "requirements-dev.txt"), encoding="utf-8") as fh:
        (dev,) = [line.strip()[len("ansible-core"):] for line in fh if line.startswith("ansible-core")]
    assert SpecifierSet(dev) == _supported()


def test_the_collections_installed_here_satisfy_the_declared_dependencies():
    import ansible_collections  # the collections PyPI's ansible brings (the tests' own tree first)

    declared = _yaml("galaxy.yml")["dependencies"]
    found = {}
    for base in ansible_collections.__path__:
        for name in declared:
            manifest = os.path.join(base, *name.split(".")) + "/MANIFEST.json"
            if name not in found and os.path.exists(manifest):
                with open(manifest, encoding="utf-8") as fh:
                    found[name] = json.load(fh)["collection_info"]["version"]
    assert sorted(found) == sorted(declared)
    for name, version in found.items():
        assert Version(version) in SpecifierSet(declared[name]), (name, version, declared[name])
    assert _yaml("requirements.yml")["collections"] == [{"name": n, "version": v} for n, v in declared.items()]


def test_the_middle_core_is_inside_the_range_and_between_the_ends():
    supported = _supported()
    middle = SpecifierSet(_pins("core218")["ansible-core"])
    (low,) = [Version(s.version) for s in SpecifierSet(_pins("oldest")["ansible-core"]) if s.operator == ">="]
    (mid,) = [Version(s.version) for s in middle if s.operator == ">="]
    (top,) = [Version(s.version) for s in SpecifierSet(_pins("newest")["ansible-core"]) if s.operator == ">="]
    assert low < mid < top and mid in supported
    assert "%d.%d.0" % (mid.major, mid.minor + 1) not in middle
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        said = "tested on %d.%d, %d.%d and %d.%d" % (low.major, low.minor, mid.major, mid.minor, top.major, top.minor)
        assert said in fh.read()
