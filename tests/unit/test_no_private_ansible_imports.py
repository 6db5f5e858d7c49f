# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""No code of this collection imports a private part of ansible-core or ansible-test.

A module is private when a component of its dotted path (or a name imported from it)
starts with an underscore, and ansible_test has no public Python API at all. Such imports
break without notice between ansible-core releases.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGES = ("ansible", "ansible_test")


def _private(dotted):
    parts = dotted.split(".")
    return parts[0] in PACKAGES and (parts[0] == "ansible_test" or any(p.startswith("_") for p in parts[1:]))


def private_imports(source, path="<text>"):
    """The private ansible / ansible_test modules source imports, as dotted names."""
    found = []
    for node in ast.walk(ast.parse(source, path)):
        if isinstance(node, ast.Import):
            found.extend(a.name for a in node.names if _private(a.name))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if _private(node.module):
                found.append(node.module)
            elif node.module.split(".")[0] in PACKAGES:
                found.extend("%s.%s" % (node.module, a.name) for a in node.names if _private("%s.%s" % (
                    node.module, a.name)))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) and _private(node.args[0].value):
            found.append(node.args[0].value)
    return found


def _python_files():
    tracked = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "*.py"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    return [p for p in tracked if os.path.isfile(os.path.join(ROOT, p))]


def test_no_python_file_imports_a_private_ansible_module():
    files = _python_files()
    assert len(files) > 50 and "plugins/inventory/gce_gpu.py" in files
    wrong = {}
    for path in files:
        with open(os.path.join(ROOT, path), "rb") as fh:
            found = private_imports(fh.read(), path)
        if found:
            wrong[path] = found
    assert wrong == {}


def private_names(source, path="<text>"):
    """The string constants of source that name a private ansible / ansible_test module."""
    return [node.value for node in ast.walk(ast.parse(source, path))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and " " not in node.value
            and _private(node.value)]


def test_the_one_private_module_named_is_a_preload_memo_that_is_skipped_when_absent():
    """The preload callback fills ansible-core's own per-process memos before the fork (on 2.21 a
    private module holds them): named in one table, looked up at run time, and skipped (with no
    error) on a core that has no such module. No other file names a private module."""
    from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core import preload

    named = {}
    for path in _python_files():
        if path == "tests/unit/test_no_private_ansible_imports.py":
            continue
        with open(os.path.join(ROOT, path), "rb") as fh:
            found = private_names(fh.read(), path)
        if found:
            named[path] = sorted(set(found))
    assert named == {"plugins/plugin_utils/core/preload.py": sorted(set(row[0] for row in preload.CORE_MEMOS))}
    assert preload.fill_core_memos((("ansible._no_such_module", "Result", "fields", ({},)),)) == (
        0, ["ansible._no_such_module.Result.fields"])


@pytest.mark.parametrize("source", [
    "from ansible.module_utils import _internal",
    "from ansible.module_utils._internal import _json",
    "import ansible._internal._templating",
    "from ansible_test._internal.python_requirements import get_venv_packages",
    "import importlib\nimportlib.import_module('ansible.module_utils._internal')",
])
def test_private_imports_are_found(source):
    assert private_imports(source) != []


@pytest.mark.parametrize("source", [
    "from ansible.module_utils.basic import AnsibleModule",
    "from ansible.template import trust_as_template",
    "from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule",
    "from . import _local",
])
def test_public_imports_pass(source):
    assert private_imports(source) == []
