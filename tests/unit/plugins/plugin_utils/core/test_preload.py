# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preload callback: the collection's plugins imported once, in the process that forks the workers."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools
import gc
import os
import subprocess
import sys
import types

import pytest

from ansible_collections.gpudirect.gcp.plugins.callback import preload as callback
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core import jinja_cache, preload

PLUGINS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))))), "plugins")


def _files(kind):
    return sorted("ansible_collections.gpudirect.gcp.plugins.%s.%s" % (kind, name[:-3])
                  for name in os.listdir(os.path.join(PLUGINS, kind))
                  if name.endswith(".py") and name != "__init__.py")


def test_every_filter_and_action_file_is_imported():
    for name in _files("filter") + _files("action"):
        sys.modules.pop(name, None)
    imported, problems = preload.import_collection_plugins()
    assert problems == []
    assert sorted(imported) == sorted(_files("filter") + _files("action"))
    assert all(name in sys.modules for name in imported)


def test_a_file_that_does_not_import_is_named_and_the_others_still_load(tmp_path, monkeypatch):
    package = tmp_path / "fake_plugins"
    package.mkdir()
    (package / "__init__.py").write_text(u"")
    (package / "good.py").write_text(u"VALUE = 1\n")
    (package / "broken.py").write_text(u"raise ValueError('not today')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    imported, problems = preload.import_collection_plugins(("fake_plugins", "no_such_package_here"))
    assert imported == ["fake_plugins.good"]
    assert problems[0] == "fake_plugins.broken: not today"
    assert problems[1].startswith("no_such_package_here: ")


class _Loader(object):
    def __init__(self, known):
        self.known, self.asked = known, []

    def get(self, name, class_only=False):
        self.asked.append((name, class_only))
        if name == "explodes":
            raise ValueError("bad plugin")
        return object if name in self.known else None


def test_core_plugins_are_loaded_by_class_and_the_missing_ones_named():
    loader = _Loader({"a", "b"})
    missing = preload.load_core_plugins({"action": loader},
                                        (("action", "a"), ("action", "c"), ("action", "explodes"),
                                         ("shell", "b"), ("action", "b")))
    assert missing == ["c", "explodes", "b"]  # "b" as a shell: no shell loader given
    assert loader.asked == [("a", True), ("c", True), ("explodes", True), ("b", True)]


def test_the_core_plugins_named_exist_in_this_ansible_core():
    from ansible.plugins.loader import action_loader, become_loader, connection_loader, shell_loader
    assert preload.load_core_plugins({"action": action_loader, "become": become_loader,
                                      "connection": connection_loader, "shell": shell_loader}) == []


def test_the_objects_alive_are_frozen_after_a_collection_once(monkeypatch):
    monkeypatch.setitem(preload._FROZEN, "done", False)
    try:
        kept = [types.SimpleNamespace(n=n) for n in range(100)]
        assert preload.freeze_heap() is True
        frozen = gc.get_freeze_count()
        assert frozen >= len(kept)
        later = [types.SimpleNamespace(n=n) for n in range(100)]
        assert preload.freeze_heap() is False
        assert gc.get_freeze_count() == frozen and later  # the second call froze nothing
    finally:
        gc.unfreeze()


def test_the_callback_preloads_once_and_freezes_once_after_the_first_plays_templates(monkeypatch):
    calls = []
    monkeypatch.setattr(preload, "import_collection_plugins", lambda: calls.append("import") or ([], ["x: broken"]))
    monkeypatch.setattr(preload, "load_core_plugins", lambda loaders: calls.append(sorted(loaders)) or [])
    monkeypatch.setattr(preload, "load_jinja_plugins", lambda loaders: calls.append("jinja " + " ".join(sorted(loaders))))
    monkeypatch.setattr(preload, "remember_jinja_builtin_lookups",
                        lambda loaders: calls.append(sorted((kind, "default" in names) for kind, (_l, names) in loaders.items())))
    monkeypatch.setattr(preload, "fill_core_memos", lambda: calls.append("memos") or (0, []))
    monkeypatch.setitem(preload._FROZEN, "done", False)
    monkeypatch.setattr(preload.gc, "collect", lambda: calls.append("collect"))
    monkeypatch.setattr(preload.gc, "freeze", lambda: calls.append("freeze"))
    # a core inside the cache's window, whichever runs the test
    monkeypatch.setattr(callback, "CORE_VERSION", "2.17.0")
    environment = type("StandIn", (object,), {})()
    monkeypatch.setattr(callback, "Templar", lambda loader: types.SimpleNamespace(environment=environment))
    monkeypatch.setattr(jinja_cache, "install", lambda cls: calls.append("install " + cls.__name__) or True)
    plugin = callback.CallbackModule()
    monkeypatch.setattr(plugin, "get_option", {"template_cache": True}.get)  # as ansible.cfg would set it
    monkeypatch.setattr(plugin, "_play_variables", lambda play: calls.append("variables of " + play) or [])
    monkeypatch.setattr(plugin, "_precompile", lambda values, task=None: calls.append("precompile"))
    warnings = []
    monkeypatch.setattr(plugin._display, "warning", warnings.append)
    plugin.v2_playbook_on_start(None)
    plugin.v2_playbook_on_play_start("one")
    plugin.v2_playbook_on_start(None)
    plugin.v2_playbook_on_play_start("two")
    assert calls == ["import", ["action", "become", "connection", "shell"], "jinja filter test",
                     [("filter", True), ("test", False)], "memos", "install StandIn",
                     "variables of one", "precompile", "collect", "freeze", "variables of two", "precompile"]
    assert plugin.environment is environment
    assert warnings == ["gpudirect.gcp.preload: cannot import x: broken"]


def _fresh_python(script):
    """script run by a fresh interpreter of this test's, with its imports."""
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))


def test_the_builtin_jinja_tests_and_filters_are_loaded_before_the_fork():
    """A worker that evaluates `is succeeded` or `| bool` would otherwise import every builtin test
    or filter file itself (on Python before 3.13 the filter file imports crypt, which times its hash
    methods on import).
    A fresh interpreter shows what the call imports."""
    script = "\n".join([
        "import sys",
        "from ansible.plugins.loader import filter_loader, init_plugin_loader, test_loader",
        "from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core import preload",
        "init_plugin_loader()",
        "import re",
        # the loader imports each file under a name of its own: ansible.plugins.test.<number>_core
        # (ansible.plugins.test.core_<number> in later releases)
        "pattern = r'^ansible[.]plugins[.](test|filter)[.]([0-9]+_core|core_[0-9]+)$'",
        "def loaded(): return sorted(re.sub(pattern, r'\\1 core', n) for n in sys.modules if re.match(pattern, n))",
        "print(loaded())",
        "counts = preload.load_jinja_plugins({'filter': filter_loader, 'test': test_loader})",
        "print(loaded())",
        "print(counts['filter'] > 50, counts['test'] > 20)",
    ])
    out = _fresh_python(script)
    before, after, counted = out.stdout.splitlines()[-3:]
    assert before == "[]"
    assert after == "['filter core', 'test core']"
    assert counted == "True True"


def test_a_jinja_loader_that_fails_costs_only_its_own_count():
    class _Broken(object):
        def all(self):
            raise ValueError("no plugins today")

    class _Fine(object):
        def all(self):
            return iter([1, 2, 3])

    assert preload.load_jinja_plugins({"filter": _Broken(), "test": _Fine()}) == {"filter": 0, "test": 3}


class _JinjaLoader(object):
    """A Jinja plugin loader as ansible-core's: get() answers through get_with_context()."""

    def __init__(self, found=(), failing=()):
        self.found, self.failing, self.asked = set(found), set(failing), []

    def get_with_context(self, name, *args, **kwargs):
        self.asked.append(name)
        if name in self.failing:
            raise KeyError(name)
        return types.SimpleNamespace(object=("plugin " + name) if name in self.found else None)

    def get(self, name, *args, **kwargs):
        return self.get_with_context(name, *args, **kwargs).object


def test_a_jinja_builtin_the_loader_does_not_hold_is_looked_up_once_before_the_fork():
    loader = _JinjaLoader(found=["bool"], failing=["broken"])
    builtins = ["default", "map", "bool", "broken"]
    counts = preload.remember_jinja_builtin_lookups({"filter": (loader, builtins)})
    assert counts == {"filter": 2}  # default and map; bool is found, broken fails
    assert sorted(loader.asked) == sorted(builtins)
    del loader.asked[:]
    for _worker in range(3):
        assert loader.get("default") is None and loader.get("map") is None
        assert loader.get("bool") == "plugin bool"
        assert loader.get("not_a_builtin") is None
        with pytest.raises(KeyError):
            loader.get("broken")
    # only what was found, failed or is no Jinja builtin is asked again
    assert sorted(set(loader.asked)) == ["bool", "broken", "not_a_builtin"] and len(loader.asked) == 9
    del loader.asked[:]
    assert loader.get_with_context("map", collection_list=["x.y"]).object is None  # any argument: asked
    assert loader.asked == ["map"]
    assert preload.remember_jinja_builtin_lookups({"filter": (loader, builtins)}) == {"filter": 2}
    assert loader.get_with_context.__wrapped__.__self__ is loader  # wrapped once, not twice
    assert preload.forget_jinja_builtin_lookups(loader)
    assert not preload.forget_jinja_builtin_lookups(loader)
    del loader.asked[:]
    loader.get("map")
    assert loader.asked == ["map"]


def test_remembered_lookups_give_ansible_core_the_same_filters_and_tests():
    """On the running ansible-core: every Jinja builtin resolves as without the memory, and a
    template using them renders the same."""
    script = "\n".join([
        "from ansible.plugins.loader import filter_loader, init_plugin_loader, test_loader",
        "from jinja2.defaults import DEFAULT_FILTERS, DEFAULT_TESTS",
        "from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core import preload",
        "init_plugin_loader()",
        "def answers(loader, names):",
        "    out = {}",
        "    for name in sorted(names):",
        "        try:",
        "            found = loader.get(name)",
        "        except Exception as exc:",
        "            found = type(exc).__name__",
        "        out[name] = getattr(found, 'ansible_name', found)",
        "    return out",
        "pairs = {'filter': (filter_loader, DEFAULT_FILTERS), 'test': (test_loader, DEFAULT_TESTS)}",
        "before = {kind: answers(*pair) for kind, pair in pairs.items()}",
        "counts = preload.remember_jinja_builtin_lookups(pairs)",
        "after = {kind: answers(*pair) for kind, pair in pairs.items()}",
        "print(before == after, counts['filter'] > 20, counts['test'] > 20)",
        "print(sum(1 for kind in after for v in after[kind].values() if v is None)"
        " == counts['filter'] + counts['test'])",
    ])
    out = _fresh_python(script)
    assert out.stdout.splitlines()[-2:] == ["True True True", "True"]


class _Results(object):
    """A class with a memo as ansible-core keeps one: keyed by how it is called."""
    made = []

    @classmethod
    @functools.cache
    def fields(cls, source_is_module):
        cls.made.append(source_is_module)
        return {"module": source_is_module}

    @classmethod
    def broken(cls, **_kwargs):
        raise ValueError("not today")


def test_core_memos_are_filled_before_the_fork_with_the_calls_ansible_core_makes(monkeypatch):
    module = types.ModuleType("fake_core_task")
    module.Results = _Results
    monkeypatch.setitem(sys.modules, "fake_core_task", module)
    del _Results.made[:]
    _Results.fields.__func__.cache_clear()
    memos = (("fake_core_task", "Results", "fields", ({"source_is_module": False}, {"source_is_module": True})),
             ("fake_core_task", "Results", "broken", ({},)),
             ("fake_core_task", "Results", "gone", ({},)),
             ("no_such_core_module_here", "Results", "fields", ({},)))
    made, absent = preload.fill_core_memos(memos)
    assert made == 2 and _Results.made == [False, True]
    assert absent == ["fake_core_task.Results.gone", "no_such_core_module_here.Results.fields"]
    assert _Results.fields(source_is_module=True) == {"module": True}  # the worker's call: from the memo
    assert _Results.made == [False, True]


def test_the_core_memos_named_are_filled_on_the_running_ansible_core():
    """Each memo of CORE_MEMOS this ansible-core has is filled, and the call ansible-core itself
    makes for a task result then finds it there."""
    script = "\n".join([
        "from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core import preload",
        "made, absent = preload.fill_core_memos()",
        "named = ['%s.%s.%s' % row[:3] for row in preload.CORE_MEMOS]",
        "calls = sum(len(row[3]) for row in preload.CORE_MEMOS if '%s.%s.%s' % row[:3] not in absent)",
        "print(made == calls, absent in ([], named))",
        "if not absent:",
        "    from ansible._internal._task import UnifiedTaskResult",
        "    memo = UnifiedTaskResult.get_result_key_to_resolved_field_mapping.__func__",
        "    before = memo.cache_info()",
        "    UnifiedTaskResult.from_action_result_dict({'changed': False})",
        "    after = memo.cache_info()",
        "    print(after.misses == before.misses and after.hits > before.hits)",
        "else:",
        "    print(True)",
    ])
    out = _fresh_python(script)
    assert out.stdout.splitlines()[-2:] == ["True True", "True"], out.stdout + out.stderr
