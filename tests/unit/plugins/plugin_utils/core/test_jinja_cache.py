# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Templates compiled once before the fork: served only where the code would be the same."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import random
import re
import subprocess

import pytest
import yaml
from jinja2 import Environment

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core import jinja_cache

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
CHECKS = os.path.join(ROOT, "tests", "cores", "jinja_cache_checks.py")
# the virtualenvs the cache's checks run on, each with the make target that builds it and the
# ansible-core release it holds: every release of the window (how a core outside it is refused,
# each checks by naming another release)
CORES = (
    (".venv", "venv", "2.16"),
    ("build/venv-217", "venv-217", "2.17"),
    ("build/venv-218", "venv-218", "2.18"),
    ("build/venv-219", "venv-219", "2.19"),
    ("build/venv-220", "venv-220", "2.20"),
    ("build/venv-newest", "venv-newest", "2.21"),
)


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

    def counted(self, source, *args, **kwargs):
        calls.append(source)
        return real(self, source, *args, **kwargs)

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


def test_an_expression_is_held_apart_from_a_template_and_served_as_jinja_compiles_it(cache):
    env = _Env()
    env.filters["draw"] = random.randrange
    assert cache.precompile(env, ["a < b"], ["a < b", "x", "3 | draw", "'a\\b' ~ x", "a <"]) == 3
    assert cache.size() == 3  # the template and two expressions: not the folding, escaped or broken ones
    calls = _counting(env)
    assert env.from_string("a < b").render() == "a < b"
    assert env.compile_expression("a < b")(a=1, b=2) is True
    assert env.compile_expression("x")() is None  # undefined_to_none, as Jinja's own
    assert env.compile_expression("x", False)() is not None
    assert env.compile_expression("x", undefined_to_none=False)() is not None
    assert cache.hits() == 5 and calls == []
    with pytest.raises(TypeError):
        env.compile_expression("x", later_option=1)  # an argument the cache does not know goes through
    assert cache.hits() == 5


def test_uninstall_gives_the_class_its_own_compile_back():
    assert jinja_cache.install(_Env)
    assert "compile" in vars(_Env) and "compile_expression" in vars(_Env)
    assert jinja_cache.install(_Env)  # twice is once
    assert not jinja_cache.install(Environment)  # one class at a time
    jinja_cache.uninstall()
    assert "compile" not in vars(_Env) and "compile_expression" not in vars(_Env)
    assert _Env.compile is Environment.compile and _Env.compile_expression is Environment.compile_expression
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
        # ansible-core 2.19 and later compile a conditional as an expression, without a form around it
        from ansible import release
        assert jinja_cache.compiles_expressions(release.__version__)
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


def test_the_window_is_one_constant_and_says_why_outside_it():
    assert jinja_cache.window_text() == "2.16 to 2.21"
    for version, why in (("2.16.0", None), ("2.17.14", None), ("2.18.19", None), ("2.18.0rc1", None),
                         ("2.19.0", None), ("2.21.5", None),
                         ("2.15.13", "ansible-core 2.15.13 is outside 2.16 to 2.21"),
                         ("2.22.0", "ansible-core 2.22.0 is outside 2.16 to 2.21"),
                         ("3.17.0", "ansible-core 3.17.0 is outside 2.16 to 2.21"),
                         ("devel", "ansible-core devel is outside 2.16 to 2.21")):
        assert jinja_cache.refusal(version) == why, version
    assert [jinja_cache.compiles_expressions(v) for v in ("2.18.9", "2.19.0", "2.21.5", "devel")] == [
        False, True, True, False]
    assert jinja_cache.refusal("2.17.0", enabled=False).startswith("switched off (GPUDIRECT_TEMPLATE_CACHE")


def test_only_the_plain_call_is_plain(monkeypatch):
    for args, kwargs, plain in (((), {}, True), ((None, None, False, False), {}, True),
                                ((), {"name": None, "defer_init": False}, True),
                                (("t",), {}, False), ((None, "t.j2"), {}, False), ((), {"raw": True}, False),
                                ((None, None, False, True), {}, False), ((None,), {"name": None}, False),
                                ((None, None, False, False, None), {}, False), ((), {"later": None}, False),
                                ((), {"raw": 0}, False)):
        assert jinja_cache.plain_call(args, kwargs) is plain, (args, kwargs)
    # a row of the table reaches both the keyword and the positional forms
    monkeypatch.setattr(jinja_cache, "PLAIN_CALL", jinja_cache.PLAIN_CALL + (("later", None),))
    assert jinja_cache.plain_call((), {"later": None}) and jinja_cache.plain_call((None,) * 2 + (False,) * 2 + (None,), {})


def test_compile_passes_every_argument_through_and_serves_only_the_plain_call(cache):
    env = _Env()
    assert cache.precompile(env, ["{{ x }}"]) == 1
    calls = []
    real = cache._STATE["original"]

    def recorded(self, source, *args, **kwargs):
        calls.append((args, kwargs))
        return real(self, source, *args, **kwargs)

    cache._STATE["original"] = recorded
    assert "def root(" in env.compile("{{ x }}", "t", "t.j2", True, True)
    assert env.compile("{{ x }}", name="t", filename="t.j2").co_filename == "t.j2"
    with pytest.raises(TypeError, match="later_option"):
        env.compile("{{ x }}", None, later_option=None)
    assert calls == [(("t", "t.j2", True, True), {}), ((), {"name": "t", "filename": "t.j2"}),
                     ((None,), {"later_option": None})]
    assert cache.hits() == 0
    assert env.compile("{{ x }}", None, None, raw=False) is env.compile("{{ x }}") and cache.hits() == 2
    assert len(calls) == 3


def test_the_cache_holds_at_most_its_bytes_and_compiles_the_rest_as_before(cache, monkeypatch):
    env = _Env()
    held = len("{{ a }}{{ b }}é".encode("utf-8"))  # 16 bytes, 15 characters
    monkeypatch.setattr(cache, "MAX_SOURCE_BYTES", held + 2)
    assert cache.precompile(env, ["{{ a }}", "{{ b }}é", "{{ c }}", "{{ a }}"]) == 2
    assert cache.size() == 2 and cache.source_bytes() == held
    calls = _counting(env)
    assert env.from_string("{{ c }}").render(c=3) == "3"
    assert env.from_string("{{ b }}é").render(b=2) == "2é"
    assert calls == ["{{ c }}"]
    assert cache.precompile(env, ["{{ c }}", "{}", "{}"]) == 1  # what still fits is still taken
    assert cache.source_bytes() == held + 2
    cache.uninstall()
    assert cache.source_bytes() == 0


def test_the_callback_documents_the_option_the_window_and_the_cap():
    from ansible_collections.gpudirect.gcp.plugins.callback import preload

    doc = yaml.safe_load(preload.DOCUMENTATION)
    option = doc["options"]["template_cache"]
    assert (option["type"], option["default"]) == ("bool", True)
    assert option["env"] == [{"name": "GPUDIRECT_TEMPLATE_CACHE"}]
    assert option["ini"] == [{"section": "gpudirect", "key": "template_cache"}]
    text = " ".join(" ".join(doc["description"]).split())
    assert text.count(jinja_cache.window_text()) == 2
    assert "at most %d MiB of template source" % (jinja_cache.MAX_SOURCE_BYTES >> 20) in text
    assert jinja_cache.refusal("2.17.0", False).startswith("switched off (%s, [%s] %s)" % (
        option["env"][0]["name"], option["ini"][0]["section"], option["ini"][0]["key"]))


def _rules(makefile):
    """Each make target's prerequisites."""
    found = re.findall(r"^([A-Za-z0-9_.-]+):(?![=])([^\n]*)$", makefile, re.M)
    return dict((name, deps.split()) for name, deps in found)


def _table_problems(cores, makefile):
    """What is wrong with a CORES table: a virtualenv `make test` does not build, a release of the
    window with no row, a row inside the window for no release of it."""
    problems, rules = [], _rules(makefile)
    reached, todo = set(), ["test"]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(rules.get(name, ()))
    for venv, target, _release in cores:
        if target not in reached:
            problems.append("make test does not build %s" % target)
        if "$(CURDIR)/%s\n" % venv not in makefile:
            problems.append("the Makefile makes no %s" % venv)
    (major, first), (last_major, last) = jinja_cache.CORE_WINDOW
    assert major == last_major
    window = ["%d.%d" % (major, minor) for minor in range(first, last + 1)]
    releases = [release for _venv, _target, release in cores]
    if sorted(releases, key=lambda text: tuple(int(part) for part in text.split("."))) != window:
        problems.append("the rows hold %s, the window %s" % (releases, window))
    return problems


def test_every_release_of_the_window_has_a_core_that_make_test_builds():
    with open(os.path.join(ROOT, "Makefile")) as handle:
        makefile = handle.read()
    assert _table_problems(CORES, makefile) == []
    window = [release for _venv, _target, release in CORES]
    assert _table_problems(CORES + (("build/venv-299", "venv-299", "2.99"),), makefile) == [
        "make test does not build venv-299", "the Makefile makes no build/venv-299",
        "the rows hold %s, the window %s" % (window + ["2.99"], window)]
    assert _table_problems(CORES[:-1], makefile) == ["the rows hold %s, the window %s" % (window[:-1], window)]


def _run_checks(venv, target, release, tmp_path):
    """tests/cores/jinja_cache_checks.py on venv's ansible-core, every check passed (none skipped)."""
    python = os.path.join(ROOT, venv, "bin", "python")
    if not os.path.exists(python):
        pytest.fail("no %s: run make %s" % (venv, target))
    config = tmp_path / "ansible.cfg"
    config.write_text(u"[gpudirect]\ntemplate_cache = false\n")
    env = dict((name, value) for name, value in os.environ.items()
               if name not in ("GPUDIRECT_TEMPLATE_CACHE", "PYTHONPATH", "PYTEST_ADDOPTS"))
    # the checks need no pytest plugin, and loading each installed one doubles their start
    env.update(GPUDIRECT_CHECK_CORE=release, ANSIBLE_CONFIG=str(config), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    proc = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", CHECKS], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    with open(CHECKS) as handle:
        checks = len(re.findall(r"^def test_", handle.read(), re.M))
    assert proc.returncode == 0 and re.search(r"^%d passed in " % checks, proc.stdout, re.M), proc.stdout[-4000:]


@pytest.mark.parametrize("venv, target, release", CORES, ids=[row[1] for row in CORES])
def test_the_cache_serves_on_each_core_of_its_window_and_refuses_outside(venv, target, release, tmp_path):
    _run_checks(venv, target, release, tmp_path)


def test_a_missing_core_fails_naming_the_make_target(tmp_path):
    with pytest.raises(pytest.fail.Exception, match="^no build/venv-299: run make venv-299$"):
        _run_checks("build/venv-299", "venv-299", "2.99", tmp_path)
