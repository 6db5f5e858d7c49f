# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The template cache on the ansible-core that runs this file.

tests/unit/plugins/plugin_utils/core/test_jinja_cache.py runs it with each core of its CORES, under an
ansible.cfg that switches the cache off ([gpudirect] template_cache), GPUDIRECT_CHECK_CORE naming the
release expected ("2.17"); how a core outside the window is refused, it checks by naming another. Outside tests/unit, so that the
unit stages, which run on one core each, do not collect it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import sys

import pytest
from ansible import release
from ansible.plugins.loader import callback_loader, init_plugin_loader

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
init_plugin_loader([os.path.join(ROOT, "build", "collections")])

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core import jinja_cache, preload  # noqa: E402 pylint: disable=wrong-import-position

CORE = release.__version__
EXPECTED = os.environ["GPUDIRECT_CHECK_CORE"]
PREFIX = "gpudirect.gcp.preload: templates compiled in each worker: "
OUTSIDE = "%d.99.0" % jinja_cache.CORE_WINDOW[1][0]


@pytest.fixture(autouse=True)
def clean(monkeypatch):
    # the playbook start's imports are the preload tests' concern; here only the cache's part runs
    monkeypatch.setattr(preload, "import_collection_plugins", lambda: ([], []))
    monkeypatch.setattr(preload, "load_core_plugins", lambda loaders: [])
    monkeypatch.setattr(preload, "load_jinja_plugins", lambda loaders: {})
    monkeypatch.setattr(preload, "remember_jinja_builtin_lookups", lambda loaders: {})
    monkeypatch.delenv("GPUDIRECT_TEMPLATE_CACHE", raising=False)
    yield
    jinja_cache.uninstall()


def _callback(monkeypatch, cache=None):
    """The callback as ansible-playbook loads it, its options read from the environment and ansible.cfg."""
    if cache is not None:
        monkeypatch.setenv("GPUDIRECT_TEMPLATE_CACHE", cache)
    plugin = callback_loader.get("gpudirect.gcp.preload")
    plugin.set_options()
    said = []
    monkeypatch.setattr(plugin._display, "vvv", said.append)
    return plugin, said


def _templar(variables):
    """ansible-core's Templar, and what marks a string as a template it may render (from 2.19 a
    string is rendered only when trusted; before, every string is)."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar
    try:
        from ansible.template import trust_as_template
    except ImportError:
        def trust_as_template(text):
            return text
    return Templar(loader=DataLoader(), variables=variables), trust_as_template


def test_the_core_is_the_one_expected():
    assert ".".join(CORE.split(".")[:2]) == EXPECTED
    assert jinja_cache.refusal(CORE) is None
    assert jinja_cache.refusal(OUTSIDE) == "ansible-core %s is outside %s" % (OUTSIDE, jinja_cache.window_text())


def test_the_option_comes_from_ansible_cfg_and_the_environment_over_it(monkeypatch):
    assert _callback(monkeypatch)[0].get_option("template_cache") is False  # the ansible.cfg given
    assert _callback(monkeypatch, "true")[0].get_option("template_cache") is True
    assert _callback(monkeypatch, "no")[0].get_option("template_cache") is False


def test_the_cache_serves_inside_the_window_and_refuses_in_one_line_outside(monkeypatch):
    plugin, said = _callback(monkeypatch, "true")
    plugin.v2_playbook_on_start(None)
    plugin.v2_playbook_on_start(None)
    assert said == [] and plugin.templar is not None
    environment_class = jinja_cache._STATE["patched"]
    assert environment_class is not None and environment_class in type(plugin.environment).__mro__
    assert jinja_cache.precompile(plugin.environment, ["{{ a + b }}"]) == 1
    templar, trusted = _templar({"a": 1, "b": 2})
    assert str(templar.template(trusted("{{ a + b }}"))) == "3"
    assert jinja_cache.hits() == 1

    jinja_cache.uninstall()
    monkeypatch.setattr(sys.modules[type(plugin).__module__], "CORE_VERSION", OUTSIDE)
    outside, said = _callback(monkeypatch, "true")
    outside.v2_playbook_on_start(None)
    assert said == [PREFIX + "ansible-core %s is outside %s" % (OUTSIDE, jinja_cache.window_text())]
    assert outside.templar is None and jinja_cache._STATE["patched"] is None


def test_a_conditional_is_served_in_the_form_this_core_compiles_it(monkeypatch):
    """Up to 2.18 inside the template ansible-core makes of it, from 2.19 as a Jinja expression."""
    from ansible.playbook.task import Task

    plugin, _said = _callback(monkeypatch, "true")
    plugin.v2_playbook_on_start(None)
    task = Task.load({"action": {"module": "ansible.builtin.debug", "msg": "{{ a - 0 }}"}, "when": ["a < b "]})
    plugin.v2_playbook_on_task_start(task, False)
    templar, trusted = _templar({"a": 1, "b": 2})
    assert str(templar.template(trusted("{{ a - 0 }}"))) == "1"
    hits = jinja_cache.hits()
    assert hits == 1
    if jinja_cache.compiles_expressions(CORE):
        assert templar.evaluate_conditional(trusted("a < b ")) is True
    else:
        from ansible.playbook.conditional import Conditional
        assert Conditional(loader=templar._loader)._check_conditional(trusted("a < b "), templar, {"a": 1, "b": 2})
    assert jinja_cache.hits() == hits + 1
    assert jinja_cache.size() == 2


def test_switched_off_the_cache_does_nothing_and_says_so_once(monkeypatch):
    plugin, said = _callback(monkeypatch)
    plugin.v2_playbook_on_start(None)
    plugin.v2_playbook_on_start(None)
    assert plugin.templar is None and jinja_cache._STATE["patched"] is None
    assert said == [PREFIX + jinja_cache.refusal(CORE, False)]


def test_the_real_environment_gets_every_argument_through(monkeypatch):
    plugin, _said = _callback(monkeypatch, "true")
    plugin.v2_playbook_on_start(None)
    env = plugin.environment
    assert jinja_cache.precompile(env, ["{{ x }}"]) == 1
    raw = env.compile("{{ x }}", "t", "t.j2", True)
    assert isinstance(raw, str) and re.search(r"def root\(", raw)
    assert env.compile("{{ x }}", name="t", filename="t.j2").co_filename == "t.j2"
    assert "def root" in env.compile("{{ x }}", raw=True, defer_init=True)
    with pytest.raises(TypeError, match="later_option"):
        env.compile("{{ x }}", later_option=1)
    assert jinja_cache.hits() == 0
    assert env.compile("{{ x }}") is env.compile("{{ x }}") and jinja_cache.hits() == 2
