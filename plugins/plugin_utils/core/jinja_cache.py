# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Compile a playbook's Jinja templates once, in the process that forks the workers.

ansible-core compiles every templated string anew, in the worker forked for each task and node:
parsing it, generating Python source and compiling that, the largest part of a worker's own CPU in
this collection's roles. Compiled in the main process before the fork, every worker finds the code
object and only runs it. Up to 2.18 a conditional is compiled as a template (`{% if ... %}`); from
EXPRESSIONS_FROM it is compiled as a Jinja expression, which the cache holds apart from templates.

Jinja folds constant expressions when it compiles: `{{ 59 | random }}` becomes one number in the
code. Compiled once for every node, each node would get the same one, where each compiling its own
gets its own. So a template that applies a filter or a test to constants alone is never cached;
folding anything else (arithmetic, literals) gives the same code however often it runs. A cache
entry is keyed by the exact source and every environment setting that changes the code Jinja
generates; a source the cache does not hold compiles as before, in the worker. A source holding a
backslash is never cached: ansible-core escapes backslashes in some compiles and not in others.

Only ansible-core's Jinja engines of CORE_WINDOW compile this way; refusal() says why the cache stays
off elsewhere, and the cache holds at most MAX_SOURCE_BYTES of template source.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from collections.abc import Mapping

from jinja2 import nodes
from jinja2.environment import TemplateExpression

try:
    from jinja2.utils import internal_code
except ImportError:  # a Jinja that does not hide its own frames from template tracebacks
    internal_code = set()

# the ansible-core releases (major, minor), first and last, whose templating the cache serves; each
# release inside is tested (test_jinja_cache.py's CORES)
CORE_WINDOW = ((2, 16), (2, 21))
# the first release whose templating engine compiles a conditional as a Jinja expression
EXPRESSIONS_FROM = (2, 19)
# the template source the cache holds at most, in UTF-8 bytes; a source beyond it compiles in its worker
MAX_SOURCE_BYTES = 8 * 1024 * 1024
_COMPILED = {}
# what marks an expression's entry in the cache, apart from a template of the same text
EXPRESSION = "expression"
_STATE = {"original": None, "original_expression": None, "patched": None, "own": (), "hits": 0, "bytes": 0,
          "capture": None}
# the environment methods the cache serves
SERVED = ("compile", "compile_expression")
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
    if callable(values[-1]) or getattr(env, "_debuggable_template_source", False):
        # a callable autoescape decides per template; ansible-core's debugging writes each
        # compile's Python source to a file of its own
        return None
    # the code calls the environment's finalize at run time; only how it passes arguments shows
    finalize_kind = None if finalize is None else (
        getattr(finalize, "jinja_pass_arg", None), getattr(finalize, "__qualname__", type(finalize).__name__))
    return (type(env), values, tuple(sorted(env.extensions)), finalize_kind)


def window_text():
    return "%d.%d to %d.%d" % (CORE_WINDOW[0] + CORE_WINDOW[1])


def _release(core_version):
    found = re.match(r"([0-9]+)[.]([0-9]+)", str(core_version))
    return None if found is None else (int(found.group(1)), int(found.group(2)))


def compiles_expressions(core_version):
    """True where ansible-core core_version compiles a conditional as a Jinja expression."""
    release = _release(core_version)
    return release is not None and release >= EXPRESSIONS_FROM


def refusal(core_version, enabled=True):
    """Why the cache stays off for ansible-core core_version (a version string), or None when it may serve."""
    if not enabled:
        return "switched off (GPUDIRECT_TEMPLATE_CACHE, [gpudirect] template_cache)"
    release = _release(core_version)
    if release is None or not CORE_WINDOW[0] <= release <= CORE_WINDOW[1]:
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
    """Serve environment_class.compile(source) and .compile_expression(source) from the cache;
    True when it does (now or before)."""
    if _STATE["patched"] is environment_class:
        return True
    originals = [getattr(environment_class, name, None) for name in SERVED]
    if None in originals or _STATE["patched"] is not None:
        return False

    def compile(self, source, *args, **kwargs):  # pylint: disable=redefined-builtin
        if isinstance(source, str) and plain_call(args, kwargs):
            key = settings_key(self)
            code = _COMPILED.get((key, source)) if key is not None else None
            if code is not None:
                _STATE["hits"] += 1
                return code
        code = _STATE["original"](self, source, *args, **kwargs)
        if _STATE["capture"] is not None and isinstance(source, nodes.Template):
            _STATE["capture"].append((source, code))  # precompile's expression, compiled as Jinja does
        return code

    def compile_expression(self, source, *args, **kwargs):
        if isinstance(source, str) and len(args) <= 1 and set(kwargs) <= {"undefined_to_none"} and not (
                args and kwargs):
            key = settings_key(self)
            code = _COMPILED.get((key, EXPRESSION, source)) if key is not None else None
            if code is not None:
                _STATE["hits"] += 1
                undefined_to_none = args[0] if args else kwargs.get("undefined_to_none", True)
                template = self.template_class.from_code(self, code, self.make_globals(None), None)
                return TemplateExpression(template, undefined_to_none)
        return _STATE["original_expression"](self, source, *args, **kwargs)

    for method, original in zip((compile, compile_expression), originals):
        method.__wrapped__ = original
        internal_code.add(method.__code__)  # left out of template tracebacks, as Jinja's own compile is
    _STATE["own"] = tuple(name for name in SERVED if name in vars(environment_class))
    environment_class.compile = compile
    environment_class.compile_expression = compile_expression
    _STATE["original"], _STATE["original_expression"] = originals
    _STATE["patched"] = environment_class
    return True


def uninstall():
    """Put the environment class's own methods back and forget what was compiled."""
    if _STATE["patched"] is not None:
        for name, original in zip(SERVED, (_STATE["original"], _STATE["original_expression"])):
            if name in _STATE["own"]:
                setattr(_STATE["patched"], name, original)
            else:
                delattr(_STATE["patched"], name)
    _STATE["original"] = _STATE["original_expression"] = _STATE["patched"] = _STATE["capture"] = None
    _STATE["own"] = ()
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


def precompile(env, sources, expressions=()):
    """Compile each template of sources, and each Jinja expression of expressions, for env unless
    already done; return how many were compiled now.

    A source that does not compile, that folds a filter or test, or that holds a backslash, is
    left to the worker, which compiles it (and reports its errors) as it always did; so is one
    that would take the cache past MAX_SOURCE_BYTES."""
    key = settings_key(env)
    if key is None or _STATE["original"] is None:
        return 0
    done = 0
    for entry, text in [((key, text), text) for text in sources] + [
            ((key, EXPRESSION, text), text) for text in expressions]:
        if entry in _COMPILED or not isinstance(text, str) or "\\" in text:
            continue
        cost = len(text.encode("utf-8", "surrogatepass"))
        if _STATE["bytes"] + cost > MAX_SOURCE_BYTES:
            continue
        try:
            code = _compile(env, text, expression=len(entry) == 3)
        except Exception:  # pylint: disable=broad-except
            continue
        if code is None:
            continue
        _COMPILED[entry] = code
        _STATE["bytes"] += cost
        done += 1
    return done


def _compile(env, text, expression):
    """text's code as env compiles it (a template, or an expression as compile_expression makes
    it), or None where compiling folds a filter or test."""
    if not expression:
        tree = env.parse(text)
        return None if folds_a_plugin(tree) else _STATE["original"](env, tree)
    captured = _STATE["capture"] = []
    try:
        _STATE["original_expression"](env, text, False)
    finally:
        _STATE["capture"] = None
    if len(captured) != 1 or folds_a_plugin(captured[0][0]):
        return None
    return captured[0][1]


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
