# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Templates compiled once before the fork: served only where the code would be the same."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import random

import pytest
from jinja2 import Environment

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core import jinja_cache


class _Env(Environment):
    """An environment class of the test's own, so that patching it touches nothing else."""


@pytest.fixture
def cache():
    assert jinja_cache.install(_Env)
    yield jinja_cache
    jinja_cache.uninstall()


def _counting(env):
    """Count the compiles env's class really runs (past the cache)."""
    calls = []
    real = jinja_cache._STATE["original"]

    def counted(self, source, *args):
        calls.append(source)
        return real(self, source, *args)

    jinja_cache._STATE["original"] = counted
    return calls


def test_a_precompiled_source_is_served_without_compiling_again(cache):
    env = _Env()
    assert cache.precompile(env, ["{{ a + b }}", "{{ a + b }}", "plain {{ c | upper }}"]) == 2
    calls = _counting(env)
    assert env.from_string("{{ a + b }}").render(a=1, b=2) == "3"
    assert env.from_string("plain {{ c | upper }}").render(c="x") == "plain X"
    assert env.from_string("{{ a * b }}").render(a=2, b=3) == "6"
    assert calls == ["{{ a * b }}"]
    assert cache.hits() == 2


def test_a_filter_or_test_over_constants_alone_is_never_cached(cache):
    """Jinja calls such a filter while compiling: cached, `59 | random` would be one number for all."""
    env = _Env()
    env.filters["draw"] = random.randrange  # as ansible-core's random: no context, so foldable
    once = env.from_string("{{ 1000000000 | draw }}")
    assert len(set(once.render() for _render in range(5))) == 1  # the draw happened at compile time
    folding = ["{{ 1000000000 | draw }}", "{{ x | default(1000000000 | draw) }}", "{{ 3 is odd }}",
               "{% filter upper %}{{ x }}{% endfilter %}", "{{ [1, 2] | map('string') | list }}"]
    assert cache.precompile(env, folding) == 0
    assert cache.size() == 0
    draws = set(env.from_string("{{ 1000000000 | draw }}").render() for _render in range(5))
    assert len(draws) > 1
    assert cache.precompile(env, ["{{ n | draw }}", "{{ x is odd }}", "{{ x | default(y) }}"]) == 3


def test_an_environment_whose_settings_change_the_code_misses(cache):
    env = _Env()
    cache.precompile(env, ["<< x >> {{ x }}"])
    other = env.overlay(variable_start_string="<<", variable_end_string=">>")
    calls = _counting(other)
    assert other.from_string("<< x >> {{ x }}").render(x=1) == "1 {{ x }}"
    assert env.from_string("<< x >> {{ x }}").render(x=1) == "<< x >> 1"
    assert calls == ["<< x >> {{ x }}"]


def test_a_source_that_does_not_compile_is_left_to_the_render(cache):
    env = _Env()
    assert cache.precompile(env, ["{{ x | no_such_filter }}", "{{ unclosed", "{{ fine }}"]) == 1
    with pytest.raises(Exception, match="no_such_filter"):
        env.from_string("{{ x | no_such_filter }}")


def test_uninstall_gives_the_class_its_own_compile_back():
    assert jinja_cache.install(_Env)
    assert "compile" in vars(_Env)
    assert jinja_cache.install(_Env)  # twice is once
    assert not jinja_cache.install(Environment)  # one class at a time
    jinja_cache.uninstall()
    assert "compile" not in vars(_Env)
    assert _Env.compile is Environment.compile
    assert jinja_cache.size() == 0 and jinja_cache.hits() == 0


def test_precompile_does_nothing_before_install():
    assert jinja_cache.precompile(_Env(), ["{{ x }}"]) == 0


class _Unsafe(str):
    """What ansible-core 2.16 to 2.18 mark a value with that is never templated."""
    __UNSAFE__ = True


class _UnsafeList(list):
    __UNSAFE__ = True


def _looks(text):
    return "{{" in text or "{%" in text


def test_template_strings_walks_values_and_keys_and_leaves_unsafe_ones():
    value = {"a": ["{{ x }}", 3, ("{% if y %}1{% endif %}",)], "{{ key }}": {"plain": "no"},
             "api": _Unsafe("{{ from_a_node }}"), "list": _UnsafeList(["{{ also_from_a_node }}"])}
    assert sorted(jinja_cache.template_strings(value, _looks)) == ["{% if y %}1{% endif %}", "{{ key }}", "{{ x }}"]


def test_the_conditional_form_is_what_ansible_core_renders():
    from ansible.parsing.dataloader import DataLoader
    from ansible.playbook.conditional import Conditional
    from ansible.template import Templar

    if not hasattr(Conditional, "_check_conditional"):
        # ansible-core 2.19 and later template with another engine, which the callback leaves alone
        from ansible_collections.gpudirect.gcp.plugins.callback import preload
        assert preload.AnsibleEnvironment is None
        return
    conditional = Conditional(loader=DataLoader())
    form = jinja_cache.conditional_form(lambda text, templar: conditional._check_conditional(text, templar, {}))
    assert form is not None
    rendered = []
    templar = Templar(loader=DataLoader(), variables={"x": 2})
    real = templar.template
    templar.template = lambda data, **kw: rendered.append(data) or real(data, **kw)
    assert conditional._check_conditional("x > 1", templar, {"x": 2}) is True
    assert rendered[0] == form[0] + "x > 1" + form[1]  # then the variables it names


def test_a_conditional_form_that_cannot_be_seen_is_none():
    def never_templates(_text, _templar):
        return True

    def templates_it_bare(text, templar):
        templar.template(text)

    assert jinja_cache.conditional_form(never_templates) is None
    assert jinja_cache.conditional_form(lambda text, templar: templar.template("no probe")) is None
    assert jinja_cache.conditional_form(templates_it_bare) == ("", "")
