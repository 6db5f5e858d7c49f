# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL environment files: reading the plugin installer's profile and checking an env against a node."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

_ASSIGN = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*?)\s*$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _unquote(value):
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1], value[0]
    return value, ""


def parse_profile(text, variables=None):
    """Read `export KEY=VALUE` lines of a shell profile such as the installer's nccl-env-profile.sh.

    variables: values for `$NAME`/`${NAME}` references (e.g. NCCL_LIB_DIR); names
    neither given nor assigned earlier in the file stay as written.
    Returns (env dict in file order, list of lines that are not plain assignments).
    """
    known = dict(variables or {})
    env = {}
    skipped = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _ASSIGN.match(line)
        if not match:
            skipped.append(line)
            continue
        key, value = match.group(1), match.group(2)
        if " #" in value and not value.startswith(("'", '"')):
            value = value.split(" #", 1)[0].rstrip()
        value, quote = _unquote(value)
        if quote != "'":
            value = _VAR.sub(lambda m: known.get(m.group(1) or m.group(2), m.group(0)), value)
        env[key] = value
        known[key] = value
    return env, skipped


def _split_ifaces(value):
    return [v.strip() for v in value.split(",") if v.strip()]


def _binding_ifaces(value):
    # "<if>:8-21,112-125;<if>:..." [CT run-nccl-tests.sh]
    return [part.split(":", 1)[0].strip() for part in value.split(";") if part.strip()]


_PROBLEM_VAR = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\b")


def findings(path, problems, unreadable=None):
    """The env file's findings as (subject, cause): the rule the node health agent and diagnose share.

    unreadable: why the file could not be read, which is then the only finding (subject: the file);
    else one per problem of check_env, named by the variable at fault.
    """
    if unreadable is not None:
        return [(path, "cannot read: %s" % unreadable)]
    out = []
    for problem in problems:
        match = _PROBLEM_VAR.match(problem)
        out.append((match.group(1) if match else path, "%s: %s" % (path, problem)))
    return out


def is_file_var(key, value=""):
    """Variables that name a file NCCL or the plugin must open (a missing tuner config aborts TCPXO jobs;
    a missing profiler library only costs a warning in the job's log, and its data)."""
    return key.endswith("_CONFIG_PATH") or key.endswith("_CONFIG_FILE") or (
        key == "NCCL_PROFILER_PLUGIN" and str(value).startswith("/"))


def check_env(env, iface_vars, binding_vars, interfaces, plugin_lib_dir, plugin_library=None,
              path_exists=os.path.exists, plugin_missing_ok=False):
    """Problems with an NCCL env on this node, one line each, naming the variable and the thing at fault.

    iface_vars: variables whose value is a comma-separated interface list.
    binding_vars: variables of the form `<if>:<cpus>;<if>:<cpus>`.
    interfaces: the node's interface names.
    plugin_lib_dir: must be the first LD_LIBRARY_PATH entry and exist.
    plugin_library: a file that must be in plugin_lib_dir (e.g. libnccl-net.so).
    plugin_missing_ok: when the plugin is not installed yet (check mode before the install), skip
        the checks of files under the plugin's install directory (the parent of plugin_lib_dir).
    """
    plugin_root = os.path.dirname(plugin_lib_dir.rstrip("/")) if plugin_lib_dir else None
    skip_plugin = bool(plugin_missing_ok and plugin_lib_dir and not path_exists(plugin_lib_dir))
    problems = []
    present = set(interfaces)
    for key in sorted(env):
        value = str(env[key])
        if "\n" in value or "\r" in value:
            problems.append("%s: value contains a line break, which env files cannot carry" % key)
    for key in sorted(set(iface_vars) | set(binding_vars)):
        if key not in env:
            continue
        names = _binding_ifaces(env[key]) if key in binding_vars else _split_ifaces(env[key])
        if not names:
            problems.append("%s is empty: it must name this node's interfaces" % key)
        for name in names:
            if name not in present:
                problems.append("%s names interface %s, which this node does not have (it has %s)"
                                % (key, name, ", ".join(sorted(present)) or "none"))
    ld_path = [p for p in str(env.get("LD_LIBRARY_PATH", "")).split(":") if p]
    if plugin_lib_dir:
        if not ld_path or ld_path[0].rstrip("/") != plugin_lib_dir.rstrip("/"):
            problems.append("LD_LIBRARY_PATH must start with the plugin directory %s, got %r"
                            % (plugin_lib_dir, env.get("LD_LIBRARY_PATH", "")))
        elif skip_plugin:
            pass
        elif not path_exists(plugin_lib_dir):
            problems.append("LD_LIBRARY_PATH: plugin directory %s does not exist (is the plugin installed?)"
                            % plugin_lib_dir)
        elif plugin_library and not path_exists(os.path.join(plugin_lib_dir, plugin_library)):
            problems.append("LD_LIBRARY_PATH: %s has no %s (is the plugin installed?)" % (plugin_lib_dir, plugin_library))
    for key in sorted(env):
        value = str(env[key])
        if skip_plugin and plugin_root and value.startswith(plugin_root + "/"):
            continue
        if is_file_var(key, value) and value and not path_exists(value):
            problems.append("%s names %s, which does not exist on this node" % (key, env[key]))
    return problems


# Variables a shell sets for itself; never part of a plugin's NCCL environment.
_SHELL_OWN = frozenset(["_", "PWD", "OLDPWD", "SHLVL", "PATH"])
CLEAN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
_SOURCE = '. "$1" >/dev/null 2>&1; rc=$?; env -0; exit $rc'
_PLAIN = "env -0"


def _env0(text):
    out = {}
    for item in (text or "").split("\0"):
        key, sep, value = item.partition("=")
        if sep and key:
            out[key] = value
    return out


def sourced_env(run, bash, path, variables=None):
    """What sourcing a plugin's shell script (gIB's set_nccl_env.sh) sets, read by running it.

    The script may compute values (per machine type, per release), so it is not
    parsed but sourced, the way users source it, by bash in an empty environment
    (PATH and the given variables only); the result is every variable it set or
    changed.  run(argv) -> (rc, stdout, stderr); the argv is a list, the path an
    argument, never part of a shell string.
    Returns (env dict, exit status of the script).
    """
    base = ["env", "-i", "PATH=%s" % CLEAN_PATH] + ["%s=%s" % kv for kv in sorted((variables or {}).items())]
    shell = [bash, "--noprofile", "--norc", "-c"]
    rc0, before, err0 = run(base + shell + [_PLAIN])
    if rc0 != 0:
        raise ValueError("cannot run %s: %s" % (bash, (err0 or "").strip() or "exit %d" % rc0))
    rc, after, _err = run(base + shell + [_SOURCE, "gpudirect-source", path])
    old, new = _env0(before), _env0(after)
    env = dict((k, v) for k, v in new.items() if k not in _SHELL_OWN and old.get(k) != v)
    return env, rc
