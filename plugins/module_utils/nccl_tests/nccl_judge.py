# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verdicts on parsed nccl-tests runs: busbw against the family baseline,
the GPUDirect plugin check, and what an exit code means.

Judged on large-message busbw, never on "Avg bus bandwidth" alone (that mean
depends on the -b/-e range).  Pure Python; reads baselines from families.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_parse

PASS = "pass"
FAIL = "fail"
NOT_JUDGED = "not_judged"

# nccl-tests testResult_t plus what launchers add [nccl-tests src/common.h, main()]
EXIT_CAUSES = {
    0: "success",
    1: "nccl-tests internal error (before 2.17.3 also wrong data or busbw below NCCL_TESTS_MIN_BW)",
    2: "CUDA error (driver, GPU or CUDA runtime)",
    3: "NCCL error (plugin, network, RxDM or NCCL setup; see the NCCL WARN lines)",
    4: "timeout (-T): a collective did not finish in time; a hung or very slow node",
    5: "not implemented (for example an invalid number of GPUs)",
    6: "invalid usage (bad option or value)",
    7: "wrong data, or average busbw below 0.9 x NCCL_TESTS_MIN_BW",
    124: "killed by the launcher timeout",
    126: "the *_perf binary is not executable",
    127: "the *_perf binary or mpirun was not found",
    134: "aborted (SIGABRT)",
    137: "killed (SIGKILL, often out of memory or the Ansible timeout)",
    139: "segmentation fault",
    255: "bad sizes or arguments, or mpirun could not start the job (SSH, hostfile, slots)",
}


def exit_cause(rc):
    if rc is None:
        return "did not run"
    try:
        rc = int(rc)
    except (TypeError, ValueError):
        return "unknown exit status %r" % (rc,)
    return EXIT_CAUSES.get(rc, "unknown exit code %d" % rc)


def expected_net_name(family):
    plugin = families.FAMILIES[family].get("plugin") or {}
    return plugin.get("net_name")


def check_plugin(parsed, family, expected=None):
    """Did the GPUDirect NCCL net plugin load?  Returns (ok, message)."""
    expected = expected or expected_net_name(family)
    nets = parsed.get("net_names") or []
    if not nets:
        return False, ("no 'Using network' line in the output: run with NCCL_DEBUG=INFO "
                       "(NCCL_DEBUG_SUBSYS including INIT,NET) so the plugin can be checked")
    if "Socket" in nets or ("IB" in nets and expected != "IB"):
        return False, ("NCCL fell back to 'Using network %s' instead of the %s plugin: the plugin library "
                       "was not found or failed to load (check LD_LIBRARY_PATH, NCCL_NET and the NET/Plugin lines)"
                       % ("Socket" if "Socket" in nets else "IB", expected))
    if expected and not any(n == expected or n.startswith(expected + "_") for n in nets):
        return False, "NCCL used network %s, expected %s" % (", ".join(nets), expected)
    return True, "NCCL used network %s" % ", ".join(nets)


def large_message_busbw(parsed, min_bytes=None):
    """(busbw, size): the best busbw over rows at or above min_bytes, else over the largest size."""
    rows = [r for r in parsed.get("rows") or [] if r.get("size") is not None]
    if not rows:
        return None, None
    largest = max(r["size"] for r in rows)
    floor = min(min_bytes, largest) if min_bytes else largest
    best, at = None, None
    for row in rows:
        if row["size"] < floor:
            continue
        for half in ("out_of_place", "in_place"):
            bw = (row.get(half) or {}).get("busbw_gbps")
            if bw is not None and (best is None or bw > best):
                best, at = bw, row["size"]
    return best, at


def window_avg_busbw(parsed, minbytes, maxbytes):
    """Mean busbw (out-of-place and in-place) over the rows whose size is in [minbytes, maxbytes].

    This is nccl-tests' "Avg bus bandwidth" restricted to one window, so a run over a
    wider range compares with a floor that was set for that window. None: no row in it.
    """
    values = []
    for row in parsed.get("rows") or []:
        size = row.get("size")
        if size is None or size < minbytes or size > maxbytes:
            continue
        for half in ("out_of_place", "in_place"):
            bw = (row.get(half) or {}).get("busbw_gbps")
            if bw is not None:
                values.append(bw)
    return nccl_parse.mean(values)


def _judge_floor(parsed, family, coll, multi_node, scope, out, failed):
    """No baseline: the family's average-busbw floor, over the window it was set for."""
    floor = families.FAMILIES[family].get("avg_busbw_floor") if multi_node else None
    what = "no %s baseline for %s on %s" % ("NVLink-domain" if scope == "nvlink_domain" else "network",
                                            coll or "this collective", family)
    if not multi_node:
        what = "single-node run: no network baseline"
    if not floor or floor["collective"] != coll:
        out["reasons"].append("%s and no family floor for it: not judged on bandwidth" % what)
        return
    window = "%s-%s B" % (floor["minbytes"], floor["maxbytes"])
    avg = window_avg_busbw(parsed, floor["minbytes"], floor["maxbytes"])
    if avg is None:
        out["reasons"].append("%s; the family floor %.1f GB/s is set for sizes %s [%s], which this run does "
                              "not cover: not judged on bandwidth" % (what, floor["gbps"], window, floor["source"]))
        return
    measured, required = float(avg), float(floor["gbps"])
    out["required_gbps"] = required
    out["window_avg_busbw_gbps"] = round(measured, 3)
    if measured < required:
        failed.append("%s; average busbw %.2f GB/s over %s is below the family floor %.1f GB/s [%s]"
                      % (what, measured, window, required, floor["source"]))
    else:
        out["reasons"].append("%s; average busbw %.2f GB/s over %s meets the family floor %.1f GB/s [%s]"
                              % (what, measured, window, required, floor["source"]))
        out["status"] = PASS


def judge_collective(parsed, family, collective=None, threshold=0.9, baseline_gbps=None,
                     baseline_bytes=None, check_net=True, expected_net=None, multi_node=True,
                     scope="network"):
    """Verdict for one collective run.

    scope: what the run's traffic crossed, "network" or "nvlink_domain" (A4X nodes of
        one NVLink domain); each has its own baseline.
    Returns a dict: collective, status (pass/fail/not_judged), reasons, measured_busbw_gbps,
    measured_at_bytes, baseline_gbps, baseline_bytes, threshold, required_gbps, ratio,
    peak_busbw_gbps, avg_busbw_gbps, plugin_ok, plugin_message, scope.
    """
    coll = collective or parsed.get("collective")
    out = {"collective": coll, "family": family, "status": NOT_JUDGED, "reasons": [], "scope": scope,
           "measured_busbw_gbps": None, "measured_at_bytes": None, "baseline_gbps": None,
           "baseline_bytes": None, "baseline_source": None, "threshold": threshold,
           "required_gbps": None, "ratio": None, "peak_busbw_gbps": parsed.get("peak_busbw_gbps"),
           "avg_busbw_gbps": parsed.get("avg_busbw_gbps"), "plugin_ok": None, "plugin_message": None}
    failed = []
    if not parsed.get("ok"):
        failed.append("the run failed: %s" % "; ".join(
            e for e in (parsed.get("errors") or ["no result"])[:5]))
    if check_net:
        ok, msg = check_plugin(parsed, family, expected_net)
        out["plugin_ok"], out["plugin_message"] = ok, msg
        if not ok:
            failed.append(msg)
    base = None
    if baseline_gbps is not None:
        base = {"busbw_gbps": float(baseline_gbps), "bytes": baseline_bytes, "source": "user"}
    elif multi_node and coll:
        base = families.baseline(family, coll, scope)
    measured, at = large_message_busbw(parsed, (base or {}).get("bytes") or baseline_bytes)
    out["measured_busbw_gbps"], out["measured_at_bytes"] = measured, at
    if base:
        out["baseline_gbps"], out["baseline_bytes"] = base["busbw_gbps"], base.get("bytes")
        out["baseline_source"] = base.get("source")
        out["required_gbps"] = round(threshold * base["busbw_gbps"], 3)
        if base.get("bytes") and at is not None and at < base["bytes"]:
            out["reasons"].append("largest size run (%d B) is below the baseline's size (%d B); "
                                  "compared at the largest size" % (at, base["bytes"]))
        if measured is None:
            failed.append("no busbw figure to compare with the baseline")
        else:
            out["ratio"] = round(measured / base["busbw_gbps"], 4)
            required = threshold * base["busbw_gbps"]
            if measured < required:
                failed.append("busbw %.2f GB/s at %s B is below %.0f%% of the %s baseline %.1f GB/s (needs %.2f)"
                              % (measured, at, threshold * 100, family, base["busbw_gbps"], required))
            else:
                out["reasons"].append("busbw %.2f GB/s is %.0f%% of the %s baseline %.1f GB/s"
                                      % (measured, out["ratio"] * 100, family, base["busbw_gbps"]))
        if multi_node and measured is not None and coll and scope == "network":
            ceiling = families.busbw_ceiling_gbps(family, coll, scope)
            if measured > ceiling * 1.05:
                out["reasons"].append("busbw %.1f GB/s is above the NICs' %.1f GB/s ceiling: were the ranks "
                                      "really on different nodes?" % (measured, ceiling))
    else:
        _judge_floor(parsed, family, coll, multi_node, scope, out, failed)
    if failed:
        out["status"] = FAIL
        out["reasons"] = failed + out["reasons"]
    elif base:
        out["status"] = PASS
    return out


# Runs across this many nodes or more also run the small sizes. Buffer registration and the small-message
# protocols (LL, LL128) go wrong there while a large-size bandwidth run stays clean, and a run's scale is
# what brings them out.
SMALL_MIN_NODES = 4
# nccl-tests' sizes for the stage: a scalar of one float or two (-b 4 or 8) up to 64 KiB, checked (-c 1)
SMALL_MINBYTES = "8"
SMALL_MAXBYTES = "64K"
# NCCL WARN lines about memory registration (ibv_reg_mr, cuMem/dmabuf registration, NCCL's own
# "register" calls): a data path that fails for some buffers
_REGISTRATION = re.compile(r"regist|reg_mr|ibv_reg|dmabuf", re.IGNORECASE)


def small_sizes_required(n_nodes, min_nodes=SMALL_MIN_NODES):
    """Whether a run over n_nodes must include the small-size stage; min_nodes 0 turns it off."""
    return bool(min_nodes) and int(n_nodes) >= int(min_nodes)


def judge_small_sizes(parsed, collective, rc=None):
    """Verdict of one small-size run (-b 8 -e 64K): its data, never its bandwidth.

    Fails on a row whose #wrong is above 0 (naming the size), a run that failed (its exit code, its
    errors), and an NCCL warning about memory registration. Not judged where no row checked its data
    (#wrong N/A). Returns {collective, stage, status, reasons, sizes, failed_sizes, measured_busbw_gbps}.
    """
    out = {"collective": collective, "stage": "small_sizes", "status": NOT_JUDGED, "reasons": [],
           "sizes": [], "failed_sizes": [], "measured_busbw_gbps": None, "rc": rc}
    failed = []
    where = "%s at small sizes" % collective
    if rc not in (0, None):
        failed.append("%s: exit code %s: %s" % (where, rc, exit_cause(rc)))
    checked = False
    for row in parsed.get("rows") or []:
        size = row.get("size")
        out["sizes"].append(size)
        halves = [(row.get(half) or {}).get("wrong") for half in ("out_of_place", "in_place")]
        if any(w is not None for w in halves):
            checked = True
        if any(halves):
            out["failed_sizes"].append(size)
            failed.append("%s at %s B: %d wrong elements (out of place %s, in place %s)"
                          % (collective, size, sum(w or 0 for w in halves),
                             "N/A" if halves[0] is None else halves[0], "N/A" if halves[1] is None else halves[1]))
    for note in parsed.get("notes") or []:
        if note.startswith("NCCL WARN") and _REGISTRATION.search(note):
            failed.append("%s: buffer registration failed: %s" % (where, note))
            break
    # the parser's own failures (no rows, out-of-bounds values, a failure line); wrong data is named above
    others = [e for e in parsed.get("errors") or [] if not e.startswith("wrong data")]
    if not parsed.get("ok") and others and not out["failed_sizes"]:
        failed.append("%s: %s" % (where, "; ".join(others[:3])))
    if failed:
        out["status"], out["reasons"] = FAIL, failed
    elif not checked:
        out["reasons"].append("%s: the run checked no data (#wrong N/A): not judged; run it with -c 1" % where)
    else:
        out["status"] = PASS
        out["reasons"].append("%s: no wrong data at %d sizes (%s-%s B)"
                              % (where, len(out["sizes"]), min(out["sizes"]), max(out["sizes"])))
    return out


def overall(verdicts):
    """Cluster verdict from per-collective verdicts: fail beats not_judged beats pass."""
    statuses = [v.get("status") for v in verdicts]
    if not statuses:
        return NOT_JUDGED
    if FAIL in statuses:
        return FAIL
    if NOT_JUDGED in statuses:
        return NOT_JUDGED
    return PASS
