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
    """The collection's plugin modules path imports, as 'kind.name' (module_utils.families, ...)."""
    with open(path) as fh:
        tree = ast.parse(fh.read(), path)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PREFIX):
            rest = node.module[len(PREFIX):]
            if "." in rest:
                out.add(rest)
            else:  # from ...plugins.module_utils import families, topology
                out.update("%s.%s" % (rest, alias.name) for alias in node.names)
    return out


def _graph():
    graph = {}
    for kind in sorted(os.listdir(PLUGINS)):
        folder = os.path.join(PLUGINS, kind)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py") and name != "__init__.py":
                graph["%s.%s" % (kind, name[:-3])] = _collection_imports(os.path.join(folder, name))
    return graph


def _agent_files():
    """The module_utils files the node_health role copies to nodes for its agent (run there without Ansible)."""
    with open(os.path.join(ROOT, "roles", "node_health", "vars", "main.yml")) as fh:
        names = yaml.safe_load(fh)["_node_health_module_utils"]
    return ["module_utils.%s" % name[:-3] for name in names]


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
    assert "plugin_utils.gce_hosts" in graph["inventory.gce_gpu"]
