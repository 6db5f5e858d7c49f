# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA DCGM's diagnostic, where the node has it: ``dcgmi diag -r LEVEL -j``, its JSON read per test
and per GPU.

Three outcomes, as for every GPU check: a test that fails is a finding on its GPU; a test that warns is
a ``warn``; DCGM that cannot run (not connected to its host engine, a DCGM_ST_* error, the time limit,
output that is not its JSON) is a ``warn`` that starts "could not run", never a GPU fault. A node
without ``dcgmi`` is not checked at all: DCGM is optional.

The JSON is the one DCGM 3.x and 4.x print with -j: {"version", "Driver Version Detected",
"DCGM Diagnostic" (older releases: "DCGM GPU Diagnostic"): {"test_categories": [{"category",
"tests": [{"name", "results": [{"status", "gpu_id", "info", "warnings": [{"error_id",
"error_severity", "warning"}]}]}]}]}}; cluster-health-scanner reads the same fields.

Plain Python with no ansible import: the node health agent ships it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd

# DCGM's error severities (dcgmErrorSeverity_t in dcgm_errors.h: MONITOR 1, ISOLATE 2, UNKNOWN 3,
# TRIAGE 4, CONFIG 5, RESET 6) as repair rungs: isolate means the GPU cannot take work (Google's host
# repair), reset a GPU reset, config a setting the host phase puts right; the rest a reboot.
# cluster-health-scanner reads RESET as 3; the header, followed here, says 6.
SEVERITY_RUNGS = {6: "reset_gpu", 5: "rerun", 2: "report_host"}
DEFAULT_RUNG = "reboot"
_DCGM_STATUS = re.compile(r"DCGM_ST_[A-Z_]+")
# the result statuses of a test that ran; "skip" and "not run" prove nothing
RAN = ("pass", "fail", "warn", "warning")


class ParseError(ValueError):
    pass


def finding(subject, severity, cause, rung, action=None):
    return fd.make("gpu", subject, severity, cause, rung=rung, action=action, phase=None)


def parse(text):
    """dcgmi's JSON -> {version, driver, results: [{category, test, status, gpu, info, warnings}]}."""
    try:
        doc = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise ParseError("dcgmi printed no JSON (%s)" % exc)
    if not isinstance(doc, dict):
        raise ParseError("dcgmi's JSON is not an object")
    diag = doc.get("DCGM Diagnostic") or doc.get("DCGM GPU Diagnostic")
    if not isinstance(diag, dict) or not isinstance(diag.get("test_categories"), list):
        raise ParseError("dcgmi's JSON has no test_categories")
    results = []
    for category in diag["test_categories"]:
        for test in (category or {}).get("tests") or []:
            for res in (test or {}).get("results") or []:
                warnings = [w for w in res.get("warnings") or [] if isinstance(w, dict)]
                info = res.get("info")
                results.append({
                    "category": category.get("category"), "test": test.get("name"),
                    "status": str(res.get("status") or "").lower(),
                    "gpu": None if res.get("gpu_id") in (None, "") else str(res.get("gpu_id")),
                    "info": "; ".join(info) if isinstance(info, list) else info,
                    "warnings": warnings})
    return {"version": doc.get("version"), "driver": doc.get("Driver Version Detected"), "results": results}


def _first_line(text):
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[0] if lines else "no output"


def gather(run, which, level=1, timeout_s=300):
    """Run the diagnostic; None where the node has no dcgmi. timeout(1) bounds it (exit 124)."""
    dcgmi = which("dcgmi")
    if not dcgmi or not level:
        return None
    argv = [dcgmi, "diag", "-r", str(level), "-j"]
    limit = which("timeout")
    if limit:
        argv = [limit, "--kill-after=10", str(int(timeout_s))] + argv
    rc, out, err = run(argv)
    ev = {"level": level, "rc": rc, "report": None, "error": None}
    if rc in (124, 137) and limit:
        ev["error"] = "dcgmi diag -r %s did not finish in %ds" % (level, timeout_s)
        return ev
    try:
        # dcgmi exits non-zero when a test fails; its JSON then says which
        ev["report"] = parse(out)
    except ParseError as exc:
        status = _DCGM_STATUS.search((err or "") + (out or ""))
        ev["error"] = "dcgmi diag -r %s exited %d: %s" % (
            level, rc, status.group(0) if status else _first_line(err or out) if rc else exc)
    return ev


def judge(ev, labels=None):
    """Findings of the diagnostic; labels maps a GPU index to the GPU checks' subject ('GPU 3 (0000:8b:00)'),
    so that DCGM's finding and the others on one GPU are one finding in a diagnosis."""
    if ev is None:
        return []
    if ev.get("error"):
        return [finding("DCGM", "warn", "could not run: %s" % ev["error"], "rerun")]
    labels = labels or {}
    out = []
    results = (ev.get("report") or {}).get("results") or []
    ran = [res for res in results if res["status"] in RAN]
    if not ran:
        # every test skipped (or none listed) is no pass: nothing was proven
        skipped = len(results)
        return [finding("DCGM", "warn", "could not check: dcgmi diag -r %s ran no test%s" % (
            ev.get("level"), " (%d skipped or not run)" % skipped if skipped else ""), "rerun")]
    for res in results:
        if res["status"] not in ("fail", "warn", "warning"):
            continue  # pass, skip
        subject = labels.get(res["gpu"], "GPU %s" % res["gpu"]) if res["gpu"] is not None else "DCGM"
        text = "; ".join(w.get("warning") or "" for w in res["warnings"] if w.get("warning")) or res.get("info") or \
            res["status"]
        what = "DCGM %s %s" % (res.get("category") or "diagnostic", res.get("test") or "test")
        if res["status"] == "fail":
            rungs = [SEVERITY_RUNGS.get(w.get("error_severity"), DEFAULT_RUNG) for w in res["warnings"]]
            rung = max(rungs, key=fd.rung_order) if rungs else DEFAULT_RUNG
            action = (fd.gpu_reset(res["gpu"]) if rung == "reset_gpu" and res["gpu"] is not None
                      else (["reboot"] if rung == "reboot" else None))
            out.append(finding(subject, "fail", "%s failed: %s" % (what, text), rung, action))
        else:
            out.append(finding(subject, "warn", "%s warns: %s" % (what, text), "rerun"))
    return out
