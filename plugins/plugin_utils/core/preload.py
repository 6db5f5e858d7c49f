# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the gpudirect.gcp.preload callback does before ansible-playbook forks its workers.

ansible-playbook runs every task on every node in a worker forked from the main process. A
worker that templates one of this collection's filters, or runs one of its action plugins,
imports that plugin's file (and the code it imports) again, since the main process never did:
about 25 ms of CPU a task and node on a 2-core machine. Imported here, in the main process,
every worker inherits them. The same goes for the connection, become and shell plugins, the
action plugins that nearly every task uses, and ansible-core's own Jinja tests and filters: the
first `is succeeded` or `| bool` a worker evaluates loads every builtin test or filter file (on
Python before 3.13 the filter file imports crypt, which times its hash methods on import), a few
ms a task and node.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gc
import importlib
import pkgutil

COLLECTION_PACKAGES = (
    "ansible_collections.gpudirect.gcp.plugins.filter",
    "ansible_collections.gpudirect.gcp.plugins.action",
)
# (loader, plugin) pairs: what a module task on a node needs, and the action plugins behind the
# tasks the roles run most (the builtin modules that have one, and the controller-side ones)
CORE_PLUGINS = (
    ("connection", "ssh"),
    ("become", "sudo"),
    ("shell", "sh"),
    ("action", "normal"),
    ("action", "command"),
    ("action", "copy"),
    ("action", "template"),
    ("action", "set_fact"),
    ("action", "assert"),
    ("action", "fail"),
    ("action", "validate_argument_spec"),
)
# ansible-core's own per-process memos (functools.cache) a worker fills on its first task result,
# each as (module, class, method, the keyword arguments of each call as ansible-core makes it: the
# memo keys a keyword call apart from a positional one). ansible-core 2.21 works out a task result's
# fields from its type hints there, compiling each hint anew: about 7 ms a worker.
CORE_MEMOS = (
    ("ansible._internal._task", "UnifiedTaskResult", "get_result_key_to_resolved_field_mapping",
     ({"source_is_module": False}, {"source_is_module": True})),
    ("ansible._internal._task", "UnifiedTaskResult", "_get_field_name_to_result_key_mapping",
     tuple({"for_callback": callback, "for_round_trip": round_trip}
           for callback in (False, True) for round_trip in (False, True))),
)
_FROZEN = {"done": False}
# marks a loader's get_with_context as this module's memo (forget_jinja_builtin_lookups finds it)
_MEMO_MARK = "_gpudirect_builtin_misses"


def import_collection_plugins(packages=COLLECTION_PACKAGES):
    """Import every plugin file of the packages; return (imported module names, problems).

    A file that does not import is a problem for the task that uses it, which reports it in
    its own words; here it is only listed."""
    imported, problems = [], []
    for package_name in packages:
        try:
            package = importlib.import_module(package_name)
        except ImportError as exc:
            problems.append("%s: %s" % (package_name, exc))
            continue
        for _finder, name, is_package in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
            if is_package:
                continue
            try:
                importlib.import_module(name)
            except Exception as exc:  # pylint: disable=broad-except
                problems.append("%s: %s" % (name, exc))
            else:
                imported.append(name)
    return imported, problems


def load_core_plugins(loaders, plugins=CORE_PLUGINS):
    """Load each (kind, name) with loaders[kind]; return the names that could not be loaded."""
    missing = []
    for kind, name in plugins:
        loader = loaders.get(kind)
        try:
            found = loader.get(name, class_only=True) if loader is not None else None
        except Exception:  # pylint: disable=broad-except
            found = None
        if found is None:
            missing.append(name)
    return missing


def load_jinja_plugins(loaders):
    """Load every builtin and legacy plugin of each Jinja loader ({"filter": ..., "test": ...});
    return how many each holds (0 where one fails: its tasks load their plugins themselves)."""
    counts = {}
    for kind, loader in loaders.items():
        try:
            counts[kind] = sum(1 for _plugin in loader.all())
        except Exception:  # pylint: disable=broad-except
            counts[kind] = 0
    return counts


def remember_jinja_builtin_lookups(loaders):
    """Make each Jinja loader ({"filter": (loader, builtin names), ...}) look a Jinja builtin's name
    up once a process, here before the fork; return how many names each now answers from memory.

    ansible-core asks its plugin loader first for every filter or test a template names, and
    only when the loader finds none takes Jinja's own (`default`, `map`, `length`, `defined`...).
    Each environment remembers the answer, but every worker templates with environments of its
    own, and the loader does not remember that it found nothing: it walks every builtin filter
    file again, about 1 ms a name in each worker. A name the loader did not find here is not
    found in the worker either (both look in ansible.builtin and the same plugin paths), so
    only such misses are remembered; a name the loader finds, or that fails, is asked each time."""
    counts = {}
    for kind, (loader, names) in loaders.items():
        original = getattr(loader, "get_with_context", None)
        if original is None or hasattr(original, _MEMO_MARK):
            counts[kind] = len(getattr(original, _MEMO_MARK, ()))
            continue
        counts[kind] = len(_memo_misses(loader, original, frozenset(names)))
    return counts


def _memo_misses(loader, original, builtin_names):
    misses = {}

    def get_with_context(name, *args, **kwargs):
        if not args and not kwargs and name in misses:
            return misses[name]
        found = original(name, *args, **kwargs)
        if not args and not kwargs and name in builtin_names and getattr(found, "object", True) is None:
            misses[name] = found
        return found

    setattr(get_with_context, _MEMO_MARK, misses)
    get_with_context.__wrapped__ = original
    loader.get_with_context = get_with_context
    for name in sorted(builtin_names):
        try:
            loader.get(name)
        except Exception:  # pylint: disable=broad-except
            continue  # asked again in the worker, which reports it as it always did
    return misses


def forget_jinja_builtin_lookups(loader):
    """Give loader back its own lookup; True when it had the memo."""
    if hasattr(vars(loader).get("get_with_context"), _MEMO_MARK):
        del loader.get_with_context
        return True
    return False


def fill_core_memos(memos=CORE_MEMOS):
    """Make each call of memos once, here before the fork; return (calls made, the memos this
    ansible-core does not have: another release keeps its own, or none)."""
    made, absent = 0, []
    for module_name, class_name, method_name, calls in memos:
        try:
            method = getattr(getattr(importlib.import_module(module_name), class_name), method_name)
        except (ImportError, AttributeError):
            absent.append("%s.%s.%s" % (module_name, class_name, method_name))
            continue
        for kwargs in calls:
            try:
                method(**kwargs)
            except Exception:  # pylint: disable=broad-except
                continue  # the worker makes the call, and meets the problem, as it always did
            made += 1
    return made, absent


def freeze_heap():
    """Collect the garbage, then move every object still alive out of the collector's reach, once
    a process; True when this call froze them.

    A forked worker's garbage collection would otherwise walk the main process's objects,
    writing to their pages and so copying them into the worker (copy-on-write). What is
    frozen is the playbook, the inventory and the variables, which live for the whole run. Once:
    an object frozen alive is never collected, even once it is garbage, so each further freeze
    would keep more of it."""
    if _FROZEN["done"]:
        return False
    _FROZEN["done"] = True
    gc.collect()
    gc.freeze()
    return True
