# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for the output of one nccl-tests ``*_perf`` run.

Accepts the text printed to stdout (any layout from 2.x: the old per-collective
columns with an ``error`` column, the 2.13+ layout with ``#wrong``, extra
``-I``/``-S`` columns, launcher prefixes, interleaved ``NCCL INFO`` lines,
comment lines whose ``#`` a launcher dropped) or the JSON file written by
``-J`` (both spellings of the bandwidth key).  Pure Python, no Ansible
imports: the ``nccl_tests_parse`` filter and the ``nccl_tests`` module share it.

``parse()`` never raises; anything it cannot read ends up in ``errors`` with
``ok: false``.

It lives with the nccl-tests runs (module_utils/nccl_tests/): the runner, the judge, the
metrics, nccl_env_used and the filter read its results; nothing of the plugin or profile does.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
import re

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text

# One launcher prefix; applied repeatedly because they stack, e.g.
# "(head, rank=0, pid=3808) [1,0]<stdout>: ...".
_PREFIX = re.compile(
    r"^(?:"
    r"\[\d+,\d+\]<std(?:out|err)>:"        # Open MPI --tag-output
    r"|\s*\d+:\s"                           # srun -l
    r"|\([^()]*(?:rank=|pid=)[^()]*\)\s?"   # SkyPilot / Ray
    r")"
)
_VERSION = re.compile(r"nccl-tests version (\S+)(?:\s+nccl-headers=(\d+))?(?:\s+nccl-library=(\d+))?")
_STARTING = re.compile(r"Collective test (?:starting|concluded):\s*(\S+)")
_RANK = re.compile(
    r"^Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*)$")
_OOB = re.compile(r"^Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)?")
_AVG = re.compile(r"^Avg bus bandwidth\s*:\s*([-+0-9.eE]+|nan|inf)\s*(OK|FAILED)?", re.I)
_REDUCING = re.compile(r"Reducing maxBytes to (\d+)")
_FAILURE = re.compile(r"Test (?:CUDA |NCCL )?failure|Test timeout|Invalid number of GPUs|Invalid usage"
                      r"|Error: |mpirun detected that|mpirun noticed that|ORTE was unable|"
                      r"There are not enough slots|Primary job\s+terminated|prterun|Segmentation fault")
_EXIT_CODE = re.compile(r"Exit code:\s*(\d+)")
_ERROR_LINE = re.compile(r"^error:\s*(\S.*)$")
_NCCL_INFO = re.compile(r"\bNCCL (INFO|WARN)\b\s?(.*)$")
_USING_NET = re.compile(r"Using network (\S+)")
# Each form in which NCCL (and the GPUDirect plugins, which copy its helpers) prints a value it uses, as
# (pattern, what the name starts with, group of the rest of the name, group of the value). /etc/nccl.conf and
# NCCL_CONF_FILE reach NCCL as environment variables (setenv without overwrite), so their values print as the
# first form.
_ENV_FORMS = (
    # ncclLoadParam "%s set by environment to %lld." and the string reads "NCCL_X set by environment to %s";
    # socket.cc/net_ib "NCCL_SOCKET_IFNAME set to %s", "NCCL_IB_HCA set to %s", the tuner loader's
    # "TUNER/Plugin: NCCL_TUNER_PLUGIN set to %s"; the TCPX plugin "... set by environment to: %s"
    (re.compile(r"^(?:[A-Za-z0-9_]+/[A-Za-z0-9_]+ ?: )?(NCCL_[A-Z0-9_]+) set (?:by environment )?to:? (.*)$"),
     "", 1, 2),
    # init.cc: "Comm config netName reset to NCCL_NET=%s", "... reset to %d by NCCL_GRAPH_MIXING_SUPPORT=%d"
    (re.compile(r"^Comm config \S+ reset to (?:\S+ by )?(NCCL_[A-Z0-9_]+)=(.*)$"), "", 1, 2),
    # the TCPX plugin: "TCPX_GPUDIRECTTCPX_TX_BINDINGS %s" (the variable is NCCL_GPUDIRECTTCPX_TX_BINDINGS)
    (re.compile(r"^TCPX_(GPUDIRECTTCPX_[A-Z0-9_]+) (.*)$"), "NCCL_", 1, 2),
    # the TCPX plugin: "NET/GPUDirectTCPX : unix client prefix %s" (the default /tmp when unset)
    (re.compile(r"^NET/GPUDirectTCPX : unix client prefix (.*)$"), "NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX", None, 1),
)
# ncclLoadParam: a value strtoll could not read (out of range) and the default NCCL used instead
_ENV_INVALID = re.compile(r"^Invalid value (.*) for (NCCL_[A-Z0-9_]+), using default (-?\d+)\.?$")
# The plugins NCCL loaded, with the interface version where the line names one: (kind, pattern, name group,
# version group). 2.19-2.27 "NET/Plugin: Loaded net plugin %s (v%d)" ("coll"/"collnet", 2.28 "gin", later
# "GIN/Plugin: Loaded gin plugin"); tuner 2.19-2.20 "Using tuner plugin: '%s'", 2.21-2.27 "TUNER/Plugin: Using
# tuner plugin %s", 2.28+ "TUNER/Plugin: Using %s (v%d)"; profiler 2.23-2.25 "PROFILER/Plugin: loaded
# ncclProfiler_v%d.", 2.26-2.27 "PROFILER/Plugin: loaded %s", 2.28+ "PROFILER/Plugin: Loaded %s (v%d)";
# 2.28+ "ENV/Plugin: Using %s (v%d)".
_PLUGIN_FORMS = (
    ("net", re.compile(r"^NET/Plugin: Loaded net plugin (.+?) \(v(\d+)\)"), 1, 2),
    ("collnet", re.compile(r"^NET/Plugin: Loaded coll(?:net)? plugin (.+?) \(v(\d+)\)"), 1, 2),
    ("gin", re.compile(r"^(?:NET|GIN)/Plugin: Loaded gin plugin (.+?) \(v(\d+)\)"), 1, 2),
    ("tuner", re.compile(r"^TUNER/Plugin: Using (?!internal tuner plugin)(?:tuner plugin )?(.+?)(?: \(v(\d+)\))?$"),
     1, 2),
    ("tuner", re.compile(r"^Using tuner plugin: '(.*)'$"), 1, None),
    ("profiler", re.compile(r"^PROFILER/Plugin: loaded ncclProfiler_v(\d+)\.?$"), None, 1),
    ("profiler", re.compile(r"^PROFILER/Plugin: [Ll]oaded (.+?)(?: \(v(\d+)\))?$"), 1, 2),
    ("env", re.compile(r"^ENV/Plugin: Using (.+?)(?: \(v(\d+)\))?$"), 1, 2),
)
# NCCL fell back to its own network or tuner code
_PLUGIN_INTERNAL = (
    ("net", re.compile(r"^NET/Plugin ?: (?:Using internal network plugin|Could not find:"
                       r"|.*using internal implementation)")),
    ("tuner", re.compile(r"^TUNER/Plugin: (?:Using internal tuner plugin|Could not find:.*Using internal)")),
)
# old numeric path levels (graph/paths.cc levelsOldToNew, 2.19 to 2.30): 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4+ SYS
_OLD_LEVELS = ("LOC", "PIX", "PXB", "PHB", "SYS")
_LEVEL_VARS = ("NCCL_P2P_LEVEL", "NCCL_NET_GDR_LEVEL")
# lists NCCL matches each interface or device against, so their order means nothing (socket.cc, net_ib)
_UNORDERED_LISTS = ("NCCL_SOCKET_IFNAME", "NCCL_IB_HCA", "NCCL_OOB_NET_IFNAME")
# a network NCCL looked for and found no device of: "NET/IB : No device found."
_NO_DEVICE = re.compile(r"NET/(\S+?)\s*: No device found")
ENV_VARS_KEPT = 200
_NCCL_VERSION = re.compile(r"NCCL version (\S+)")
_DATA_START = re.compile(r"^\d+\s+\d+\s+[A-Za-z_][A-Za-z0-9_]*(\s|$)")
# digits are matched once (no "\d+\.?\d*", which backtracks quadratically on a long run of digits)
_NUMBER = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$")

_HEADER_FIELDS = (
    ("nthread", r"nThread\s+(\d+)"),
    ("ngpus", r"nGpus\s+(\d+)"),
    ("minbytes", r"minBytes\s+(\d+)"),
    ("maxbytes", r"maxBytes\s+(\d+)"),
    ("warmup_iters", r"warmup iters:\s*(\d+)"),
    ("iters", r"(?<!warmup )(?<!agg )iters:\s*(\d+)"),
    ("agg_iters", r"agg iters:\s*(\d+)"),
    ("validation", r"validation:\s*(\d+)"),
    ("graph", r"graph:\s*(\d+)"),
    ("unalign", r"unalign:\s*(\d+)"),
)
_HEADER_KNOWN = ("nThread", "nGpus", "minBytes", "maxBytes", "step", "warmup", "iters", "agg", "validation",
                 "graph", "unalign")

# Columns that start a half of a row in the column-name line.
_TIME_COLS = ("time", "cpu_time")


def _num(tok):
    return bool(_NUMBER.match(tok))


def strip_prefixes(line):
    """Remove any stacked launcher prefixes from one output line."""
    for _attempt in range(8):
        m = _PREFIX.match(line)
        if not m or m.end() == 0:
            break
        line = line[m.end():]
    return line


def _empty_result(collective):
    return {
        "collective": collective,
        "nccl_tests_version": None,
        "nccl_version": None,
        "source_format": None,
        "header": {},
        "ranks": 0,
        "devices": [],
        "hosts": [],
        "columns": [],
        "rows": [],
        "avg_busbw_gbps": None,
        "avg_busbw_reported_gbps": None,
        "avg_busbw_check": None,
        "peak_busbw_gbps": None,
        "largest_size": None,
        "largest_busbw_gbps": None,
        "out_of_bounds": None,
        "wrong_total": 0,
        "net_names": [],
        "plugin_lines": [],
        # what NCCL said it read (first value per variable; a variable ranks read differently is in env_differs)
        "env_set": {},
        "env_differs": [],
        "env_plugin": None,
        # {kind: {name, version}}: net, collnet, gin, tuner, profiler, env; "internal" where NCCL fell back
        "plugins": {},
        # values NCCL could not read, with the default it used instead (env_set holds the default)
        "env_invalid": {},
        "no_device": [],
        "exit_code_reported": None,
        "errors": [],
        "notes": [],
        "ok": False,
    }


def _collective_from_prog(prog):
    name = (prog or "").rsplit("/", 1)[-1]
    m = re.match(r"^([a-z_]+?)_perf", name)
    return m.group(1) if m else None


def _parse_header(text, res):
    hdr = res["header"]
    for key, pat in _HEADER_FIELDS:
        m = re.search(pat, text)
        if m:
            hdr[key] = int(m.group(1))
    m = re.search(r"step:\s*(\d+)\((factor|bytes)\)", text)
    if m:
        hdr["step"] = int(m.group(1))
        hdr["step_kind"] = m.group(2)
    # fields added by forks, e.g. "single_test: 0 test_buffer_kind: 2"
    for key, value in re.findall(r"(?:^|\s)([A-Za-z_][A-Za-z0-9_]*):\s*(\S+)", text):
        if key.split("_")[0] in _HEADER_KNOWN or key in ("iters", "step"):
            continue
        hdr[key] = int(value) if value.isdigit() else value


def _layout_from_columns(cols):
    """Split a column-name line into (prefix columns, half columns, trailing columns)."""
    starts = [i for i, c in enumerate(cols) if c in _TIME_COLS]
    if len(starts) < 2:
        return None
    prefix = cols[:starts[0]]
    half = cols[starts[0]:starts[1]]
    rest = cols[starts[1]:]
    tail = rest[len(half):]
    return prefix, half, tail


def _half(values, names):
    out = {"time_us": None, "algbw_gbps": None, "busbw_gbps": None, "wrong": None}
    for name, val in zip(names, values):
        if name in _TIME_COLS:
            out["time_us"] = finite_float(val)
        elif name == "algbw":
            out["algbw_gbps"] = finite_float(val)
        elif name == "busbw":
            out["busbw_gbps"] = finite_float(val)
        elif name in ("#wrong", "wrong"):
            wrong = None if val.upper() == "N/A" else finite_float(val)
            out["wrong"] = None if wrong is None else int(wrong)
        elif name == "error":
            out["max_error"] = None if val.upper() == "N/A" else finite_float(val)
        else:
            out.setdefault("extra", {})[name] = finite_float(val) if _num(val) else val
    return out


def _non_finite(tokens):
    """Whether a row holds inf, nan or a number too large for a float (each would be dropped as null)."""
    for tok in tokens:
        low = tok.lower().lstrip("+-")
        if low in ("inf", "infinity", "nan"):
            return True
        if _num(tok) and finite_float(tok) is None:
            return True
    return False


def finite_float(val):
    """A finite number, else None: nan and inf have no place in strict JSON."""
    try:
        out = float(val)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def mean(values):
    """The mean of finite numbers, itself finite: each value is divided before the sum, so bandwidths near
    the float limit cannot add up to infinity (which strict JSON cannot hold)."""
    values = list(values)
    if not values:
        return None
    return sum(v / len(values) for v in values)


def _guess_layout(tokens, collective, res):
    """Column layout for a data row when no column-name line was seen."""
    rest = tokens[3:]
    prefix = ["size", "count", "type"]
    if rest and not _num(rest[0]) and rest[0].upper() != "N/A":
        prefix.append("redop")
        rest = rest[1:]
    # each half is time, algbw, busbw, wrong|error (+ -I columns); a root column
    # makes the remainder odd
    if len(rest) % 2 == 1:
        prefix.append("root")
        rest = rest[1:]
    n = len(rest) // 2
    if n < 3:
        return None
    last = rest[n - 1] if n >= 4 else None
    tail_name = "#wrong"
    if last is not None and ("e" in last.lower() and last.upper() != "N/A"):
        tail_name = "error"
    half = ["time", "algbw", "busbw"] + ([tail_name] if n >= 4 else [])
    half += ["extra%d" % i for i in range(n - len(half))]
    res["notes"].append("no column-name line; layout inferred from the data rows")
    return prefix, half, []


def _row_width(layout):
    prefix, half, tail = layout
    return len(prefix) + 2 * len(half) + len(tail)


def _parse_row(tokens, layout):
    prefix, half, tail = layout
    if len(tokens) < _row_width(layout):
        return None
    row = {"size": None, "count": None, "type": None, "redop": None, "root": None}
    for name, val in zip(prefix, tokens):
        if name == "size":
            row["size"] = int(val)
        elif name == "count":
            row["count"] = int(val)
        elif name == "type":
            row["type"] = val
        elif name == "redop":
            row["redop"] = val
        elif name == "root":
            row["root"] = int(val) if re.match(r"^-?\d+$", val) else val
    i = len(prefix)
    row["out_of_place"] = _half(tokens[i:i + len(half)], half)
    i += len(half)
    row["in_place"] = _half(tokens[i:i + len(half)], half)
    i += len(half)
    extra = tokens[i:]
    if extra:
        row["extra"] = " ".join(extra)
    return row


def _strtoll(text):
    """What C's strtoll(text, NULL, 0) reads of a value (NCCL's integer parameters), or None where it reads no
    digit: leading blanks and a sign, 0x for hex, a leading 0 for octal, and it stops at the first other
    character."""
    m = re.match(r"\s*([-+]?)(?:0[xX]([0-9a-fA-F]+)|(0[0-7]*)|([1-9][0-9]*))", text or "")
    # more digits than any 64-bit number has: strtoll saturates, and Python would refuse to read them
    if not m or len(m.group(0)) > 64:
        return None
    value = int(m.group(2), 16) if m.group(2) else int(m.group(3), 8) if m.group(3) else int(m.group(4))
    return -value if m.group(1) == "-" else value


def _level(text):
    """A path level (NCCL_P2P_LEVEL, NCCL_NET_GDR_LEVEL) as NCCL reads it: a name as given (strcmp), or an
    old number mapped to its name."""
    number = _strtoll(text) if re.match(r"^[0-9]", text) else None
    return text if number is None else _OLD_LEVELS[min(number, len(_OLD_LEVELS) - 1)]


def _items(text):
    """An interface or device list as NCCL matches it: its leading ^ (exclude) and = (exact) and the set of
    items. Items are not trimmed: NCCL does not trim them either."""
    mods = re.match(r"^\^?=?", text).group(0)
    return mods, frozenset(item for item in text[len(mods):].split(","))


def same_value(name, one, other):
    """Whether two spellings of a variable's value mean the same to NCCL: blanks at either end, the same number
    as strtoll reads it (NCCL prints the number it read: NCCL_IB_DISABLE=00 prints 0), the same path level,
    or the same interface/device list in another order."""
    if one is None or other is None:
        return one is other
    one, other = str(one).strip(), str(other).strip()
    if one == other:
        return True
    if name in _LEVEL_VARS:
        return _level(one) == _level(other)
    if name in _UNORDERED_LISTS:
        return _items(one) == _items(other)
    for printed, given in ((one, other), (other, one)):
        if re.match(r"^-?[0-9]{1,20}$", printed) and _strtoll(given) == int(printed):
            return True
    return False


def _read_value(name, value, res):
    """One value NCCL said it used: the first per variable is kept; another spelling of it is no difference."""
    seen = res["env_set"].get(name)
    if seen is None and len(res["env_set"]) < ENV_VARS_KEPT:
        res["env_set"][name] = value
    elif seen is not None and not same_value(name, seen, value) and name not in res["env_differs"]:
        res["env_differs"].append(name)


def _plugin_line(body, res):
    """The plugins NCCL loaded and their interface versions; a plugin loaded after a name NCCL could not find
    replaces the fallback."""
    plugins = res["plugins"]
    for kind, pattern, name_group, version_group in _PLUGIN_FORMS:
        m = pattern.match(body)
        if m:
            if (plugins.get(kind) or {}).get("name") in (None, "internal") or kind not in plugins:
                version = m.group(version_group) if version_group else None
                plugins[kind] = {"name": m.group(name_group).strip() if name_group else None,
                                 "version": int(version) if version else None}
            return True
    for kind, pattern in _PLUGIN_INTERNAL:
        if pattern.match(body):
            plugins.setdefault(kind, {"name": "internal", "version": None})
            return True
    return False


def _env_line(body, res):
    """The environment NCCL used, in each form NCCL and the net plugins print a value in, the plugins it loaded
    and the networks it found no device of."""
    for pattern, head, name_group, value_group in _ENV_FORMS:
        m = pattern.match(body)
        if m:
            value = m.group(value_group).strip()
            # ncclLoadParam ends its line with a full stop
            value = value[:-1].rstrip() if value.endswith(".") else value
            if value != "(null)":
                _read_value(head + (m.group(name_group) if name_group else ""), value, res)
            return
    m = _ENV_INVALID.match(body)
    if m:
        name = m.group(2)
        if name not in res["env_invalid"] and len(res["env_invalid"]) < ENV_VARS_KEPT:
            res["env_invalid"][name] = m.group(1)
        _read_value(name, m.group(3), res)
        return
    if _plugin_line(body, res):
        env = res["plugins"].get("env")
        res["env_plugin"] = env["name"] if env else None
        return
    m = _NO_DEVICE.search(body)
    if m and m.group(1) not in res["no_device"]:
        res["no_device"].append(m.group(1))


def _parse_text(text, collective, res):
    res["source_format"] = "text"
    layout = None
    header_lines = []
    mpirun_block = False
    lines = text.splitlines()
    # the text stops mid-line: its last line may be a data row cut inside its last value
    ends_mid_line = bool(text) and not text.endswith(("\n", "\r"))
    for number, raw in enumerate(lines, 1):
        line = strip_prefixes(raw.rstrip("\r\n"))
        info = _NCCL_INFO.search(line)
        if info:
            body = info.group(2)
            m = _USING_NET.search(body)
            if m and m.group(1) not in res["net_names"]:
                res["net_names"].append(m.group(1))
            if "NET/Plugin" in body or "NET/" in body.split(":")[0]:
                if len(res["plugin_lines"]) < 20:
                    res["plugin_lines"].append(body.strip())
            _env_line(body.strip(), res)
            m = _NCCL_VERSION.search(body)
            if m and not res["nccl_version"]:
                res["nccl_version"] = m.group(1)
            if info.group(1) == "WARN" and len(res["notes"]) < 50:
                res["notes"].append("NCCL WARN " + body.strip())
            continue
        m = _NCCL_VERSION.search(line)
        if m and "nccl-tests" not in line and not res["nccl_version"]:
            res["nccl_version"] = m.group(1)
        body = line.strip()
        comment = body.startswith("#")
        body = body.lstrip("#").strip()
        if not body:
            continue
        m = _VERSION.search(body)
        if m:
            res["nccl_tests_version"] = m.group(1)
            if m.group(2):
                res["header"]["nccl_headers"] = int(m.group(2))
            if m.group(3):
                res["header"]["nccl_library"] = int(m.group(3))
            continue
        m = _STARTING.search(body)
        if m:
            res["collective"] = res["collective"] or _collective_from_prog(m.group(1))
            continue
        if body.startswith("nThread") or "minBytes" in body:
            header_lines.append(body)
            _parse_header(body, res)
            continue
        m = _RANK.match(body)
        if m:
            res["devices"].append({
                "rank": int(m.group(1)),
                "group": int(m.group(2)) if m.group(2) is not None else None,
                "pid": int(m.group(3)), "host": m.group(4), "device": int(m.group(5)),
                "bus_id": m.group(6), "name": m.group(7).strip()})
            if m.group(4) not in res["hosts"]:
                res["hosts"].append(m.group(4))
            continue
        toks = body.split()
        if toks and toks[0] == "size" and "count" in toks:
            cols = list(toks)
            layout = _layout_from_columns(cols)
            res["columns"] = cols
            continue
        m = _OOB.match(body)
        if m:
            res["out_of_bounds"] = int(m.group(1))
            if m.group(2) == "FAILED":
                res["errors"].append("out-of-bounds values: %s" % m.group(1))
            continue
        m = _AVG.match(body)
        if m:
            res["avg_busbw_reported_gbps"] = finite_float(m.group(1))
            if m.group(2):
                res["avg_busbw_check"] = m.group(2)
                if m.group(2) == "FAILED":
                    res["errors"].append("average bus bandwidth below NCCL_TESTS_MIN_BW: %s" % body)
            continue
        m = _REDUCING.search(body)
        if m:
            res["header"]["maxbytes_reduced_to"] = int(m.group(1))
            res["errors"].append("nccl-tests lowered maxBytes to %s (memory limit): %s" % (m.group(1), body))
            continue
        if not comment and _DATA_START.match(body):
            if layout is None:
                layout = _guess_layout(toks, res["collective"], res)
            row = _parse_row(toks, layout) if layout else None
            if row is not None and ends_mid_line and number == len(lines) and len(toks) <= _row_width(layout):
                # every column is there, but the last may have lost its end ("N/A" -> "N/", "148.3" -> "14");
                # a row followed by more tokens than its layout has was printed whole
                res["errors"].append("the output ends inside a data row (cut short): %s" % _said(body, 200))
            elif row is None:
                # a row cut short (output truncated mid-line) is no measurement: the run is not ok
                res["errors"].append("unreadable or cut data row: %s" % _said(body, 200))
            elif _non_finite(toks):
                res["errors"].append("data row with a value that is not a finite number: %s" % _said(body, 200))
            else:
                res["rows"].append(row)
            continue
        m = _ERROR_LINE.match(body)
        if m and comment:
            res["errors"].append("error: " + m.group(1).strip())
            continue
        m = _EXIT_CODE.search(body)
        if m and mpirun_block:
            res["exit_code_reported"] = int(m.group(1))
            continue
        if _FAILURE.search(body):
            if "mpirun" in body or "Primary job" in body:
                mpirun_block = True
            if len(res["errors"]) < 50:
                res["errors"].append(_said(body, 300))
            continue


def _json_half(half):
    half = half or {}
    out = {
        "time_us": finite_float(half.get("time", half.get("cpu_time"))),
        "algbw_gbps": finite_float(half.get("alg_bw")),
        "busbw_gbps": finite_float(half.get("bus_bw")),
        "wrong": None,
    }
    nwrong = half.get("nwrong")
    if isinstance(nwrong, (int, float)) and not isinstance(nwrong, bool):
        out["wrong"] = int(nwrong)
    return out


def _parse_json(doc, collective, res):
    res["source_format"] = "json"
    if not isinstance(doc, dict):
        res["errors"].append("JSON input is not an object")
        return
    args = doc.get("args") or []
    if isinstance(args, list) and args and not res["collective"]:
        res["collective"] = _collective_from_prog(str(args[0]))
    res["nccl_version"] = doc.get("nccl_version")
    res["header"]["json_version"] = doc.get("version")
    cfg = doc.get("config") or {}
    if isinstance(cfg, dict):
        mapping = (("nthreads", "nthread"), ("ngpus", "ngpus"), ("minimum_bytes", "minbytes"),
                   ("maximum_bytes", "maxbytes"), ("step_factor", "step"), ("step_bytes", "step"),
                   ("warmup_iters", "warmup_iters"), ("iterations", "iters"),
                   ("aggregated_iterations", "agg_iters"), ("validation", "validation"), ("graph", "graph"))
        for src, dst in mapping:
            if src in cfg:
                res["header"][dst] = cfg[src]
        if "step_factor" in cfg:
            res["header"]["step_kind"] = "factor"
        elif "step_bytes" in cfg:
            res["header"]["step_kind"] = "bytes"
        for dev in cfg.get("devices") or []:
            if not isinstance(dev, dict):
                continue
            res["devices"].append({"rank": dev.get("rank"), "group": dev.get("group"), "pid": dev.get("pid"),
                                   "host": dev.get("hostname"), "device": dev.get("device"),
                                   "bus_id": dev.get("device_hex"), "name": dev.get("device_info")})
            if dev.get("hostname") and dev.get("hostname") not in res["hosts"]:
                res["hosts"].append(dev.get("hostname"))
    for item in doc.get("results") or []:
        if not isinstance(item, dict):
            res["notes"].append("unreadable JSON result entry")
            continue
        root = item.get("root")
        if isinstance(root, str):
            root = root.strip()
            root = int(root) if re.match(r"^-?\d+$", root) else (root or None)
        redop = item.get("redop")
        redop = redop.strip() if isinstance(redop, str) else redop
        try:
            size = int(item.get("size"))
            count = int(item.get("count")) if item.get("count") is not None else None
        except (TypeError, ValueError):
            res["notes"].append("JSON result entry without a size")
            continue
        negative = [(k, v) for k, v in (("size", size), ("count", count)) if v is not None and v < 0]
        if negative:
            # the text form cannot carry one (a row starts with digits); nccl-tests never writes one
            res["errors"].append("JSON result entry with a negative %s: %d" % negative[0])
            continue
        res["rows"].append({"size": size, "count": count, "type": item.get("type"), "redop": redop,
                            "root": root, "out_of_place": _json_half(item.get("out_of_place")),
                            "in_place": _json_half(item.get("in_place"))})
    oob = doc.get("out_of_bounds")
    if isinstance(oob, dict):
        try:
            res["out_of_bounds"] = int(oob.get("count"))
        except (TypeError, ValueError):
            pass
        if oob.get("okay") is False:
            res["errors"].append("out-of-bounds values: %s" % oob.get("count"))
    avg = doc.get("average_bus_bandwidth", doc.get("average_bus_bandwidith"))
    if isinstance(avg, dict):
        res["avg_busbw_reported_gbps"] = finite_float(avg.get("bandwidth", avg.get("bandwidith")))
        okay = avg.get("okay")
        if okay is True:
            res["avg_busbw_check"] = "OK"
        elif okay is False:
            res["avg_busbw_check"] = "FAILED"
            res["errors"].append("average bus bandwidth below NCCL_TESTS_MIN_BW")
    for err in doc.get("errors") or []:
        res["errors"].append(_said(err, 300))


def _said(text, limit):
    """Output quoted in an error: masked before it is cut (a cut credential no longer looks like one)."""
    return safe_text.mask_text(text)[:limit]


def _finish(res):
    busbws = []
    for row in res["rows"]:
        for half in ("out_of_place", "in_place"):
            h = row[half]
            if h.get("busbw_gbps") is not None:
                busbws.append(h["busbw_gbps"])
            if h.get("wrong"):
                res["wrong_total"] += h["wrong"]
    res["ranks"] = len(res["devices"])
    if busbws:
        res["avg_busbw_gbps"] = round(mean(busbws), 3)
        res["peak_busbw_gbps"] = max(busbws)
    if res["rows"]:
        big = max(res["rows"], key=lambda r: r["size"])
        res["largest_size"] = big["size"]
        vals = [big[h]["busbw_gbps"] for h in ("out_of_place", "in_place") if big[h]["busbw_gbps"] is not None]
        res["largest_busbw_gbps"] = max(vals) if vals else None
    failure = [e for e in res["errors"] if "lowered maxBytes" not in e]
    if res["wrong_total"]:
        failure.append("wrong data: %d elements" % res["wrong_total"])
        res["errors"].append("wrong data: %d wrong elements reported" % res["wrong_total"])
    if res["out_of_bounds"]:
        failure.append("oob")
    if not res["rows"]:
        res["errors"].append("no result rows found")
        failure.append("no rows")
    res["ok"] = not failure
    # quoted output: credentials masked, one line each
    res["errors"] = [safe_text.one_line(safe_text.mask_text(e)) for e in res["errors"]]


def parse(data, collective=None):
    """Parse one nccl-tests run: text, bytes, a JSON string or an already loaded JSON object.

    Returns the dict documented in the ``nccl_tests_parse`` filter.  Never raises.
    """
    res = _empty_result(collective or None)
    try:
        if isinstance(data, bytes):
            data = data.decode("utf-8", "replace")
        if isinstance(data, dict):
            _parse_json(data, collective, res)
        elif isinstance(data, str):
            stripped = data.lstrip()
            doc = None
            if stripped.startswith("{"):
                try:
                    doc = json.loads(stripped)
                except ValueError as exc:
                    res["errors"].append("input looks like JSON but does not parse: %s" % exc)
                    res["source_format"] = "json"
            if doc is not None:
                _parse_json(doc, collective, res)
            elif res["source_format"] is None:
                _parse_text(data, collective, res)
        elif isinstance(data, list):
            _parse_text("\n".join(str(x) for x in data), collective, res)
        else:
            res["errors"].append("input is %s, expected the text or JSON of an nccl-tests run"
                                 % type(data).__name__)
        _finish(res)
    except Exception as exc:  # the contract is: never raise on bad input
        res["errors"].append("parser error: %s: %s" % (type(exc).__name__, exc))
        res["ok"] = False
    return res
