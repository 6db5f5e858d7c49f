# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compile a playbook's Jinja templates once, in the process that forks the workers.

ansible-core before 2.19 compiles every templated string anew, in the worker forked for each task
and node: parsing it, generating Python source and compiling that, the largest part of a worker's
own CPU in this collection's roles. Compiled in the main process before the fork, every worker
finds the code object and only runs it.

Jinja folds constant expressions when it compiles: `{{ 59 | random }}` becomes one number in the
code. Compiled once for every node, each node would get the same one, where each compiling its own
gets its own. So a template that applies a filter or a test to constants alone is never cached;
folding anything else (arithmetic, literals) gives the same code however often it runs. A cache
entry is keyed by the exact source and every environment setting that changes the code Jinja
generates; a source the cache does not hold compiles as before, in the worker.

Only ansible-core's Jinja engine of CORE_WINDOW compiles this way; refusal() says why the cache stays
off elsewhere, and the cache holds at most MAX_SOURCE_BYTES of template source.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from collections.abc import Mapping

from jinja2 import nodes

try:
    from jinja2.utils import internal_code
except ImportError:  # a Jinja that does not hide its own frames from template tracebacks
    internal_code = set()

# the ansible-core releases (major, minor), first and last, whose templating the cache serves: from
# 2.19 templating is another engine, and each release inside is tested (test_jinja_cache.py's CORES)
CORE_WINDOW = ((2, 16), (2, 18))
# the template source the cache holds at most, in UTF-8 bytes; a source beyond it compiles in its worker
MAX_SOURCE_BYTES = 8 * 1024 * 1024
_COMPILED = {}
_STATE = {"original": None, "patched": None, "own": False, "hits": 0, "bytes": 0}
# Environment.compile's arguments after the source, and the values that make a call the plain one
# (Environment.from_string's, the only call the cache serves)
PLAIN_CALL = (("name", None), ("filename", None), ("raw", False), ("defer_init", False))
# the lexer's settings (jinja2.lexer.get_lexer keys its cache by these) and the code generator's
SETTINGS = (
    "block_start_string", "block_end_string", "variable_start_string", "variable_end_string",
    "comment_start_string", "comment_end_string", "line_statement_prefix", "line_comment_prefix",
    "trim_blocks", "lstrip_blocks", "newline_sequence", "keep_trailing_newline",
    "optimized", "is_async", "autoescape",
)


def settings_key(env):
    """What, besides the source, decides the code Jinja generates for env (None: do not cache)."""
    try:
        finalize = env.finalize
        values = tuple(getattr(env, name) for name in SETTINGS)
    except AttributeError:
        return None
    if callable(values[-1]):
        return None
    # the code calls the environment's finalize at run time; only how it passes arguments shows
    finalize_kind = None if finalize is None else (
        getattr(finalize, "jinja_pass_arg", None), getattr(finalize, "__qualname__", type(finalize).__name__))
    return (type(env), values, tuple(sorted(env.extensions)), finalize_kind)


def window_text():
    return "%d.%d to %d.%d" % (CORE_WINDOW[0] + CORE_WINDOW[1])


def refusal(core_version, enabled=True):
    """Why the cache stays off for ansible-core core_version (a version string), or None when it may serve."""
    if not enabled:
        return "switched off (GPUDIRECT_TEMPLATE_CACHE, [gpudirect] template_cache)"
    found = re.match(r"([0-9]+)[.]([0-9]+)", str(core_version))
    if found is None or not CORE_WINDOW[0] <= (int(found.group(1)), int(found.group(2))) <= CORE_WINDOW[1]:
        return "ansible-core %s is outside %s" % (core_version, window_text())
    return None


def plain_call(args, kwargs):
    """True when compile's arguments after the source are all left at the plain call's values."""
    if len(args) > len(PLAIN_CALL):
        return False
    given = dict(zip((name for name, _plain in PLAIN_CALL), args))
    for name, value in kwargs.items():
        if name in given:
            return False
        given[name] = value
    plain = dict(PLAIN_CALL)
    # an argument compile does not know yet is never plain, whatever its value
    return all(name in plain and value is plain[name] for name, value in given.items())


def install(environment_class):
    """Serve environment_class.compile(source) from the cache; True when it does (now or before)."""
    if _STATE["patched"] is environment_class:
        return True
    original = getattr(environment_class, "compile", None)
    if original is None or _STATE["patched"] is not None:
        return False

    def compile(self, source, *args, **kwargs):  # pylint: disable=redefined-builtin
        if isinstance(source, str) and plain_call(args, kwargs):
            key = settings_key(self)
            code = _COMPILED.get((key, source)) if key is not None else None
            if code is not None:
                _STATE["hits"] += 1
                return code
        return _STATE["original"](self, source, *args, **kwargs)

    compile.__wrapped__ = original
    internal_code.add(compile.__code__)  # left out of template tracebacks, as Jinja's own compile is
    _STATE["own"] = "compile" in vars(environment_class)
    environment_class.compile = compile
    _STATE["original"], _STATE["patched"] = original, environment_class
    return True


def uninstall():
    """Put the environment class's own compile back and forget what was compiled."""
    if _STATE["patched"] is not None:
        if _STATE["own"]:
            _STATE["patched"].compile = _STATE["original"]
        else:
            del _STATE["patched"].compile
    _STATE["original"] = _STATE["patched"] = None
    _STATE["hits"] = _STATE["bytes"] = 0
    _COMPILED.clear()


# what makes an expression's value depend on the render, not on the compile
_DYNAMIC = (nodes.Name, nodes.Call, nodes.ContextReference, nodes.DerivedContextReference,
            nodes.EnvironmentAttribute, nodes.ExtensionAttribute, nodes.InternalName, nodes.ImportedName)


def _dynamic(node):
    return isinstance(node, _DYNAMIC) or node.find(_DYNAMIC) is not None


def folds_a_plugin(tree):
    """True where Jinja could call a filter or test while compiling tree: one applied to
    constants alone (a `{% filter %}` block counts, whatever it holds)."""
    for node in tree.find_all((nodes.Filter, nodes.Test)):
        operands = [node.node] + list(node.args) + [pair.value for pair in node.kwargs]
        operands += [extra for extra in (node.dyn_args, node.dyn_kwargs) if extra is not None]
        if node.node is None or not any(_dynamic(operand) for operand in operands):
            return True
    return False


def precompile(env, sources):
    """Compile each source for env unless already done; return how many were compiled now.

    A source that does not compile, or that folds a filter or test, is left to the worker, which
    compiles it (and reports its errors) as it always did; so is one that would take the cache past
    MAX_SOURCE_BYTES."""
    key = settings_key(env)
    original = _STATE["original"]
    if key is None or original is None:
        return 0
    done = 0
    for text in sources:
        if (key, text) in _COMPILED:
            continue
        try:
            cost = len(text.encode("utf-8", "surrogatepass"))
            if _STATE["bytes"] + cost > MAX_SOURCE_BYTES:
                continue
            tree = env.parse(text)
            if folds_a_plugin(tree):
                continue
            _COMPILED[(key, text)] = original(env, tree)
        except Exception:  # pylint: disable=broad-except
            continue
        _STATE["bytes"] += cost
        done += 1
    return done


def template_strings(value, looks_templated, found=None):
    """Every string in value (nested lists and mappings, keys included) that looks templated.

    A value marked unsafe is never templated, so it is never collected."""
    found = [] if found is None else found
    if hasattr(value, "__UNSAFE__"):
        return found
    if isinstance(value, str):
        if looks_templated(value):
            found.append(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            template_strings(key, looks_templated, found)
            template_strings(item, looks_templated, found)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            template_strings(item, looks_templated, found)
    return found


def conditional_form(check_conditional):
    """The template the running ansible-core makes of a conditional: (before, after) it, or None.

    check_conditional(conditional, templar) is ansible-core's own; a templar stand-in records the
    string it is asked to render and stops there."""
    probe = "gpudirect_probe_conditional"
    seen = []

    class _Recorder(object):
        available_variables = {}

        def is_template(self, _data):
            return False

        def template(self, data, **_kwargs):
            seen.append(data)
            raise LookupError(probe)

    try:
        check_conditional(probe, _Recorder())
    except Exception:  # pylint: disable=broad-except
        pass
    if len(seen) != 1 or not isinstance(seen[0], str) or seen[0].count(probe) != 1:
        return None
    before, after = seen[0].split(probe)
    return before, after


def hits():
    """How many compiles this process served from the cache."""
    return _STATE["hits"]


def size():
    return len(_COMPILED)


def source_bytes():
    """How many bytes of template source the cache holds."""
    return _STATE["bytes"]
