# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sandbox nodes' bytecode cache for code imported from zip files (AnsiballZ): what runs is
what Python compiles, a changed source is compiled again, tracebacks name the zip the code came
from, and a cache directory that is not the user's own is never used."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys
import zipfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
HOOK_DIR = os.path.join(ROOT, "tests", "sandbox", "node", "usr", "lib", "python3", "dist-packages")

# imports pkg.mod from the zip given, calls it, and prints what it returned and where a raise points
PROBE = r"""
import json, sys, traceback
sys.path.insert(0, sys.argv[1])
import gpudirect_sandbox_pycache
sys.path.insert(0, sys.argv[2])
from pkg import mod
try:
    mod.fail()
except ValueError:
    where = traceback.extract_tb(sys.exc_info()[2])[-1].filename
print(json.dumps({"value": mod.value(), "where": where, "file": mod.__file__}))
"""


def _zip(path, source):
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("pkg/__init__.py", "")
        zf.writestr("pkg/mod.py", source)
    return str(path)


def _run(archive, cache):
    env = dict(os.environ, GPUDIRECT_SANDBOX_PYCACHE=str(cache))
    out = subprocess.run([sys.executable, "-c", PROBE, HOOK_DIR, archive], env=env, check=True,
                         stdout=subprocess.PIPE).stdout
    return json.loads(out)


def _entries(cache):
    mine = cache / str(os.getuid())
    return sorted(os.listdir(mine)) if mine.is_dir() else []


SOURCE = "def value():\n    return [1, 2, {'a': (3,)}]\n\n\ndef fail():\n    raise ValueError('x')\n"


def test_a_module_from_a_new_zip_of_the_same_source_runs_from_the_cache_and_names_its_own_zip(tmp_path):
    cache = tmp_path / "cache"
    first = _run(_zip(tmp_path / "a.zip", SOURCE), cache)
    kept = _entries(cache)
    assert len(kept) == 2  # pkg/__init__.py and pkg/mod.py
    second = _run(_zip(tmp_path / "b.zip", SOURCE), cache)

    assert _entries(cache) == kept  # nothing compiled again
    assert first["value"] == second["value"] == [1, 2, {"a": [3]}]
    assert first["where"] == os.path.join(str(tmp_path / "a.zip"), "pkg", "mod.py")
    assert second["where"] == os.path.join(str(tmp_path / "b.zip"), "pkg", "mod.py")


def test_a_changed_source_is_compiled_again(tmp_path):
    cache = tmp_path / "cache"
    _run(_zip(tmp_path / "a.zip", SOURCE), cache)
    changed = _run(_zip(tmp_path / "b.zip", SOURCE.replace("[1, 2", "[7, 2")), cache)

    assert changed["value"][0] == 7
    assert len(_entries(cache)) == 3


def test_a_cache_directory_others_can_write_is_never_used(tmp_path):
    cache = tmp_path / "cache"
    mine = cache / str(os.getuid())
    mine.mkdir(parents=True)
    mine.chmod(0o777)
    assert _run(_zip(tmp_path / "a.zip", SOURCE), cache)["value"][0] == 1
    assert _entries(cache) == []


def test_the_pth_file_loads_the_hook():
    with open(os.path.join(HOOK_DIR, "gpudirect_sandbox_pycache.pth")) as fh:
        assert fh.read().split() == ["import", "gpudirect_sandbox_pycache"]
