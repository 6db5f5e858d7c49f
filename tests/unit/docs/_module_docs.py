# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The modules' documentation as ansible-doc shows it: each module's DOCUMENTATION with the collection's doc
fragments merged in (a fragment's option first, the module's own keys for it on top, as ansible-core merges
them), without starting ansible-doc for each module."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import copy
import glob
import importlib
import os

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PREFIX = "gpudirect.gcp."


def module_names():
    return sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py"))
                  if not os.path.basename(p).startswith("_"))


def own_doc(name, var="DOCUMENTATION"):
    """A module's own DOCUMENTATION (or RETURN), parsed, read from its source without importing it."""
    with open(os.path.join(ROOT, "plugins", "modules", name + ".py"), encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == var for t in node.targets):
            return yaml.safe_load(node.value.value) or {}
    raise AssertionError("%s has no %s" % (name, var))


def fragment(slug):
    """The text of a fragment slug: gpudirect.gcp.<name> (its DOCUMENTATION) or gpudirect.gcp.<name>.<var>."""
    assert slug.startswith(PREFIX), "%s: only the collection's own fragments are read here" % slug
    name, _dot, var = slug[len(PREFIX):].partition(".")
    mod = importlib.import_module("ansible_collections.gpudirect.gcp.plugins.doc_fragments." + name)
    return yaml.safe_load(getattr(mod.ModuleDocFragment, var.upper() or "DOCUMENTATION"))


def merged(doc):
    """doc with its fragments' options merged in."""
    out = copy.deepcopy(doc)
    options = out.setdefault("options", {})
    for slug in out.pop("extends_documentation_fragment", None) or []:
        for key, value in (fragment(slug).get("options") or {}).items():
            value = dict(value)
            value.update(options.get(key) or {})
            options[key] = value
    return out


def all_docs():
    """{module: {"own": its DOCUMENTATION, "merged": with the fragments}}."""
    out = {}
    for name in module_names():
        own = own_doc(name)
        out[name] = {"own": own, "merged": merged(own)}
    return out


def text(option):
    desc = option.get("description", "")
    return " ".join(" ".join(desc).split()) if isinstance(desc, list) else " ".join(str(desc).split())
