# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils holds only what modules ship to nodes; controller-only code lives in plugin_utils."""

import ast
import os

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLUGINS = os.path.join(ROOT, "plugins")
PREFIX = "ansible_collections.gpudirect.gcp.plugins."


def _collection_imports(path):
    """The collection's plugin modules path imports, as dotted names under plugins
    (module_utils.families, module_utils.gpu.health, ...)."""
    with open(path) as fh:
        tree = ast.parse(fh.read(), path)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PREFIX):
            rest = node.module[len(PREFIX):]
            if os.path.isdir(os.path.join(PLUGINS, *rest.split("."))):
                # from ...plugins.module_utils.gpu import dcgm, xid: the modules of a package
                out.update("%s.%s" % (rest, alias.name) for alias in node.names)
            else:
                out.add(rest)
    return out


def _graph():
    """Every plugin file, by its dotted name under plugins, with what it imports of the collection."""
    graph = {}
    for folder, dirs, files in os.walk(PLUGINS):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        rel = os.path.relpath(folder, PLUGINS)
        if rel == ".":
            continue
        for name in sorted(files):
            if name.endswith(".py") and name != "__init__.py":
                dotted = ".".join(rel.split(os.sep) + [name[:-3]])
                graph[dotted] = _collection_imports(os.path.join(folder, name))
    return graph


def _agent_files():
    """The module_utils files the node_health role copies to nodes for its agent (run there without Ansible)."""
    with open(os.path.join(ROOT, "roles", "node_health", "vars", "main.yml")) as fh:
        names = yaml.safe_load(fh)["_node_health_module_utils"]
    return ["module_utils.%s" % name[:-3].replace("/", ".") for name in names if not name.endswith("__init__.py")]


def _shipped(graph):
    """Every module_utils file a module or the node health agent imports, directly or through another
    module_utils file."""
    seen = set(_agent_files())
    todo = [name for name in graph if name.startswith("modules.")] + sorted(seen)
    while todo:
        for dep in graph.get(todo.pop(), ()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def test_every_module_utils_file_is_used_by_a_module():
    graph = _graph()
    unused = sorted(n for n in graph if n.startswith("module_utils.") and n not in _shipped(graph))
    assert unused == [], "controller-only code belongs in plugins/plugin_utils: %s" % ", ".join(unused)


@pytest.mark.parametrize("kind", ["modules", "module_utils"])
def test_node_code_never_imports_controller_code(kind):
    graph = _graph()
    wrong = sorted("%s -> %s" % (n, d) for n, deps in graph.items() if n.startswith(kind + ".")
                   for d in deps if d.startswith(("plugin_utils.", "filter.", "inventory.")))
    assert wrong == []


def test_the_graph_sees_imports():
    # the checks above would pass on an empty graph
    graph = _graph()
    assert "module_utils.families" in graph["modules.nccl_tests"]
    assert "plugin_utils.gce.gce_hosts" in graph["inventory.gce_gpu"]


# module_utils' subjects from the bottom up: a file imports its own subject and those below it, never
# one above or beside it (the finding and the text helpers sit low so that every check can use them)
LAYERS = (("common",), ("families", "findings", "_module"), ("host",), ("gpu", "nic", "rxdm"), ("nccl",),
          ("nccl_tests", "job"), ("health",))
_RANK = dict((subject, rank) for rank, subjects in enumerate(LAYERS) for subject in subjects)


def _subject(dotted):
    return dotted.split(".")[1]


def test_module_utils_imports_run_down_the_layers_only():
    graph = _graph()
    wrong = []
    for name, deps in sorted(graph.items()):
        if not name.startswith("module_utils."):
            continue
        for dep in sorted(deps):
            if not dep.startswith("module_utils.") or _subject(dep) == _subject(name):
                continue
            if _RANK[_subject(dep)] >= _RANK[_subject(name)]:
                wrong.append("%s -> %s" % (name, dep))
    assert wrong == []


def test_every_module_utils_subject_has_a_layer():
    subjects = set(_subject(n) for n in _graph() if n.startswith("module_utils."))
    assert subjects == set(_RANK)


def test_the_layer_check_sees_an_import_back_up():
    # the import that once ran from nccl_tests/ up to health/ would be caught
    name, dep = "module_utils.nccl_tests.nccl_report", "module_utils.health.node_health"
    assert _RANK[_subject(dep)] >= _RANK[_subject(name)]
    assert "module_utils.findings.findings_report" in _graph()[name]
