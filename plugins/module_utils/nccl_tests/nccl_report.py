# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reports of an nccl_tests run: JSON, JUnit XML and HTML with inline SVG charts.

Input is the result of the ``gpudirect.gcp.nccl_tests`` module (see
docs/validation.md for the JSON schema).  Pure Python, stdlib only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
from xml.etree import ElementTree as ET

from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import findings_report
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_env_used, pair_matrix
from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text

esc = safe_text.html

SCHEMA = "gpudirect.gcp/nccl-report/v1"


shown = nccl_env_used.shown


def shown_env(env):
    """An environment as results and reports show it: secret names' values and credentials masked,
    each name and value on one line."""
    return dict((safe_text.one_line(k), safe_text.one_line(v)) for k, v in safe_text.mask_env(env).items())


def _shown_all(items):
    return [shown(item) for item in items] if isinstance(items, (list, tuple)) else items


def scrub_runs(runs):
    """Each run as the report keeps it: its command line and output with the same masking as the
    environment (mpirun's -x NAME=value carries the environment into the command), the errors and
    reasons quoted from its output and the environment NCCL echoed masked too."""
    out = []
    for run in runs or []:
        if not isinstance(run, dict):
            continue
        run = dict(run)
        if isinstance(run.get("command"), (list, tuple)):
            run["command"] = safe_text.mask_argv(run["command"])
        elif run.get("command") is not None:
            run["command"] = safe_text.mask_text(run["command"])
        if run.get("output_tail") is not None:
            run["output_tail"] = safe_text.mask_text(run["output_tail"])
        if run.get("errors") is not None:
            run["errors"] = _shown_all(run["errors"])
        if isinstance(run.get("verdict"), dict):
            run["verdict"] = dict(run["verdict"], reasons=_shown_all(run["verdict"].get("reasons") or []))
        if run.get("nccl_env") is not None:
            run["nccl_env"] = _masked_nccl_env(run["nccl_env"])
        out.append(run)
    return out


def _scrub_verdicts(verdicts):
    return [dict(v, reasons=_shown_all(v.get("reasons") or [])) if isinstance(v, dict) else v for v in verdicts or []]


STANDIN_MARK = "STAND-IN"


def from_standins(result, findings=None):
    """Whether any output in the report came from the sandbox's stand-ins (they say so in their output)."""
    texts = [run.get("output_tail") or "" for run in result.get("runs") or []]
    texts += [f.get("cause") or "" for f in findings or []]
    return any(STANDIN_MARK in t for t in texts)


# what a report shows of each blame by placement (plugin_utils/diagnose/place_blame.py FIELDS; the
# diagnosis reaches a module as plain data, so the module_utils side names its fields itself)
PLACE_BLAME_TEXT = ("level", "suspect", "where", "line")
PLACE_BLAME_COUNTS = ("failing", "total")


def place_blames(diagnosis):
    """The diagnosis' blames by placement as a report shows them: each text one line, the counts whole numbers,
    the place its parts' text, the hosts text; an entry of another shape is left out, never the report."""
    items = (diagnosis or {}).get("place_blame") if isinstance(diagnosis, dict) else None
    out = []
    for item in items if isinstance(items, (list, tuple)) else []:
        if not isinstance(item, dict) or not all(isinstance(item.get(k), int) and not isinstance(item.get(k), bool)
                                                 for k in PLACE_BLAME_COUNTS):
            continue
        shown = dict((k, safe_text.one_line(safe_text.to_text(item.get(k) or ""), 2000)) for k in PLACE_BLAME_TEXT)
        shown.update((k, item[k]) for k in PLACE_BLAME_COUNTS)
        share = item.get("share")
        shown["share"] = share if isinstance(share, (int, float)) and not isinstance(share, bool) else None
        place = item.get("place") if isinstance(item.get("place"), dict) else {}
        shown["place"] = dict((safe_text.one_line(k, 40), safe_text.one_line(safe_text.to_text(v), 200))
                              for k, v in place.items() if v is not None)
        hosts = item.get("hosts") if isinstance(item.get("hosts"), (list, tuple)) else []
        shown["hosts"] = [safe_text.one_line(safe_text.to_text(h), 300) for h in hosts]
        out.append(shown)
    return out


# the pairwise search's figures against the log2 bound (nccl_pairing.isolation_cost), as JUnit properties
ISOLATION_FIGURES = ("nodes", "rounds", "runs", "extra_runs", "log2_bound", "ratio")


def isolation_line(isolation):
    """The pairwise search's cost in words, or "" where the result has none."""
    if not isinstance(isolation, dict) or not all(isinstance(isolation.get(k), (int, float))
                                                  for k in ISOLATION_FIGURES):
        return ""
    stages = isolation.get("stages") if isinstance(isolation.get("stages"), dict) else {}
    per_stage = ", ".join("%s %s" % (safe_text.one_line(k, 40), stages[k]) for k in stages
                          if isinstance(stages[k], int) and stages[k])
    return ("Isolation took %d extra run(s) beyond the first round against a log2 bound of %d for %d node(s) "
            "(ratio %.2f); %d run(s) in %d round(s)%s." % (
                isolation["extra_runs"], isolation["log2_bound"], isolation["nodes"], isolation["ratio"],
                isolation["runs"], isolation["rounds"], " (%s)" % per_stage if per_stage else ""))


def build_report(result, run_id, started=None, finished=None, findings=None, hosts=None, diagnosis=None,
                 standins=False):
    """Assemble the report document from the module result and, for a diagnosis, its findings.

    standins: the caller knows some evidence came from stand-ins (the sandbox's nodes say so)."""
    runs = scrub_runs(result.get("runs"))
    summary = summarize(result)
    items = findings_report.clean(findings)
    if diagnosis is not None:
        summary["diagnosis"] = diagnosis
    return {
        "findings": items,
        "diagnosed_hosts": list(hosts or []),
        "diagnosis": diagnosis,
        # failing nodes that cluster in one sub-block or block: that place, with its counts
        "place_blame": place_blames(diagnosis),
        "from_standins": bool(standins) or from_standins(result, items),
        "schema": SCHEMA,
        "run_id": run_id,
        "started": started or result.get("started_at"),
        "finished": finished or result.get("finished_at"),
        "family": result.get("family"),
        "mode": result.get("mode"),
        "nodes": result.get("nodes") or [],
        "gpus_per_node": result.get("gpus_per_node"),
        "threshold": result.get("threshold"),
        "verdict": result.get("verdict"),
        "collectives": _scrub_verdicts(result.get("collectives")),
        "bad_nodes": result.get("bad_nodes") or [],
        "node_table": result.get("node_table") or {},
        "pairwise": result.get("pairwise"),
        "topology": result.get("topology") or {},
        "pair_matrix": pair_matrix.compact(result),
        "runs": runs,
        "env": shown_env(result.get("env")),
        "nccl_env": _masked_nccl_env(result.get("nccl_env")),
        "summary": summary,
    }


def _masked_nccl_env(used):
    """The environment NCCL used (nccl_env_used) masked as the passed env is, the plugin's name and the
    conflicts' causes too, each on one line (nccl_env_used does so already; a result from elsewhere may not)."""
    if not used:
        return None
    effective = used.get("effective") or {}
    values = shown_env(dict((k, v.get("value")) for k, v in effective.items()))
    passed = shown_env(dict((k, v.get("passed")) for k, v in effective.items() if v.get("passed") is not None))
    effective = dict((safe_text.one_line(k), dict(v, value=values[safe_text.one_line(k)],
                                                  passed=passed.get(safe_text.one_line(k)),
                                                  source=shown(v.get("source"))))
                     for k, v in effective.items())
    conflicts = [dict(c, subject=shown(c.get("subject")), cause=shown(c.get("cause")))
                 for c in used.get("conflicts") or [] if isinstance(c, dict)]
    plugins = used.get("plugins") if isinstance(used.get("plugins"), dict) else {}
    plugins = dict((shown(kind), {"name": shown(item.get("name")), "version": _version(item.get("version"))})
                   for kind, item in plugins.items() if isinstance(item, dict))
    return {"plugin": shown(used.get("plugin")), "plugins": plugins, "network": shown(used.get("network")),
            "effective": effective, "conflicts": conflicts}


def _version(value):
    """A plugin interface version as an int, or None (a result from elsewhere may carry anything)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def nccl_env_section(report):
    """What NCCL used of each variable and where it came from, the conflicts first."""
    used = report.get("nccl_env")
    if not used or not (used.get("effective") or used.get("conflicts") or used.get("plugins") or used.get("network")):
        return ""
    parts = ["<h2>NCCL environment as NCCL used it</h2>",
             "<p>Environment plugin: %s</p>" % esc(used.get("plugin") or "none"),
             "<p>Network: %s</p>" % esc(used.get("network") or "not said")]
    plugins = used.get("plugins") or {}
    if plugins:
        parts.append("<table><tr><th>plugin</th><th>name</th><th>interface</th></tr>")
        parts += ["<tr><td>%s</td><td>%s</td><td>%s</td></tr>" % (
            esc(kind), esc(plugins[kind].get("name") or "not named"),
            esc("" if plugins[kind].get("version") is None else "v%d" % plugins[kind]["version"]))
            for kind in sorted(plugins)]
        parts.append("</table>")
    if used.get("conflicts"):
        parts.append("<ul>")
        parts += ["<li class=\"%s\">%s %s: %s</li>"
                  % (esc(c["severity"]), esc(c["severity"].upper()), esc(c["subject"]), esc(c["cause"]))
                  for c in used["conflicts"]]
        parts.append("</ul>")
    parts.append("<table><tr><th>variable</th><th>NCCL used</th><th>the run passed</th><th>source</th></tr>")
    for name in sorted(used.get("effective") or {}):
        item = used["effective"][name]
        parts.append("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
            esc(name), esc(item.get("value")), esc("" if item.get("passed") is None else item["passed"]),
            esc(item.get("source"))))
    parts.append("</table>")
    return "".join(parts)


def summarize(result):
    """Small summary for set_stats / AWX: verdict, peak busbw per collective, bad nodes."""
    peaks = {}
    for verdict in result.get("collectives") or []:
        peaks[verdict.get("collective")] = verdict.get("peak_busbw_gbps")
    return {
        "verdict": result.get("verdict"),
        "family": result.get("family"),
        "mode": result.get("mode"),
        "nodes": len(result.get("nodes") or []),
        "peak_busbw_gbps": peaks,
        "bad_nodes": result.get("bad_nodes") or [],
        # pairwise mode: the runs isolation took against ceil(log2(N)); None otherwise
        "isolation": (result.get("pairwise") or {}).get("isolation"),
    }


def finite(value):
    """The value with every non-finite float (nan, inf) replaced by None, for strict JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return dict((k, finite(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def to_json(report):
    return json.dumps(finite(report), indent=2, sort_keys=True, default=str, allow_nan=False) + "\n"


# --- JUnit ------------------------------------------------------------------

def _case(suite, classname, name, status, message, details, seconds=None):
    case = ET.SubElement(suite, "testcase", classname=classname, name=name)
    if seconds is not None:
        case.set("time", "%.3f" % seconds)
    if status == "fail":
        fail = ET.SubElement(case, "failure", message=message[:500], type="nccl_tests")
        fail.text = details
    elif status != "pass":
        skip = ET.SubElement(case, "skipped", message=message[:500])
        skip.text = details
    return case


def to_junit(report):
    root = ET.Element("testsuites", name="nccl_tests %s" % (report.get("run_id") or ""))
    suites = []
    if report.get("diagnosis") is not None:
        suites.append(findings_report.junit_suite(root, report.get("findings") or [], report.get("diagnosed_hosts")))
    if report.get("collectives"):
        suite = ET.SubElement(root, "testsuite", name="nccl_tests.%s" % (report.get("mode") or "cluster"))
        suites.append(suite)
        for v in report["collectives"]:
            msg = "; ".join(v.get("reasons") or []) or v.get("status", "")
            _case(suite, "nccl_tests.%s.%s" % (report.get("family"), report.get("mode")),
                  "%s busbw" % v.get("collective"), v.get("status"), msg,
                  json.dumps({k: v.get(k) for k in ("measured_busbw_gbps", "baseline_gbps", "required_gbps",
                                                    "rc", "exit_cause", "hosts")}, default=str),
                  v.get("seconds"))
    pairwise = report.get("pairwise") or {}
    if pairwise.get("rounds"):
        suite = ET.SubElement(root, "testsuite", name="nccl_tests.pairs")
        suites.append(suite)
        for i, rnd in enumerate(pairwise["rounds"], 1):
            for entry in rnd:
                pair = entry.get("pair") or []
                msg = "; ".join(entry.get("reasons") or []) or ("passed" if entry.get("ok") else "failed")
                _case(suite, "nccl_tests.pairs.round%d" % i, " + ".join(pair),
                      "pass" if entry.get("ok") else "fail", msg,
                      json.dumps(entry.get("busbw_gbps") or {}, default=str), entry.get("seconds"))
    singles = (pairwise or {}).get("single_node") or {}
    if singles:
        suite = ET.SubElement(root, "testsuite", name="nccl_tests.single_node")
        suites.append(suite)
        for node in sorted(singles):
            entry = singles[node]
            msg = "; ".join(entry.get("reasons") or []) or entry.get("status", "")
            _case(suite, "nccl_tests.single_node", node, entry.get("status"), msg,
                  json.dumps(entry.get("busbw_gbps") or {}, default=str), entry.get("seconds"))
    properties = dict((suite, []) for suite in suites)
    if report.get("diagnosis") is not None:
        # each place the failures cluster in, on the diagnosis suite
        properties[suites[0]] += [("place_blame", item["line"]) for item in report.get("place_blame") or []]
    isolation = pairwise.get("isolation") if isinstance(pairwise.get("isolation"), dict) else None
    if isolation and pairwise.get("rounds"):
        # the pairs suite: what isolation took against the log2 bound
        pairs_suite = [s for s in suites if s.get("name") == "nccl_tests.pairs"][0]
        properties[pairs_suite] += [("isolation.%s" % key, str(isolation.get(key)))
                                    for key in ISOLATION_FIGURES if isolation.get(key) is not None]
    for suite in suites:
        items = ([("from_standins", "true")] if report.get("from_standins") else []) + properties[suite]
        if items:
            props = ET.Element("properties")
            for name, value in items:
                ET.SubElement(props, "property", name=name, value=value)
            suite.insert(0, props)
        cases = suite.findall("testcase")
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
        suite.set("skipped", str(sum(1 for c in cases if c.find("skipped") is not None)))
        suite.set("errors", "0")
    _xml_safe(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _xml_safe(root):
    """Every text and attribute made valid XML 1.0 (ElementTree escapes markup, not control characters);
    attributes on one line, as JUnit readers show them."""
    for node in root.iter():
        if node.text is not None:
            node.text = safe_text.visible(node.text)
        if node.tail is not None:
            node.tail = safe_text.visible(node.tail)
        for key, value in list(node.attrib.items()):
            node.set(key, safe_text.one_line(value))


# --- HTML / SVG -------------------------------------------------------------

_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
            "#bcbd22", "#17becf"]


def _size_label(size):
    for unit, div in (("G", 2 ** 30), ("M", 2 ** 20), ("K", 2 ** 10)):
        if size >= div and size % div == 0:
            return "%d%s" % (size // div, unit)
    return "%dB" % size


_FLOAT_ROOM = 1e300


def _plottable(point):
    """A point a log2 size axis can place: a positive size and a finite bandwidth."""
    size, busbw = point
    return (isinstance(size, (int, float)) and size > 0 and isinstance(busbw, (int, float))
            and math.isfinite(busbw) and busbw >= 0)


def svg_chart(title, series, baseline=None, required=None, width=640, height=320):
    """Line chart of busbw against message size (log2 x axis).

    series: [(label, [(size, busbw), ...]), ...]
    """
    series = [(label, [p for p in points if _plottable(p)]) for label, points in series]
    pts = [p for _label, s in series for p in s]
    left, right, top, bottom = 60, 160, 30, 40
    w, h = width - left - right, height - top - bottom
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="%s">'
           % (width, height, esc(title))]
    out.append('<text x="%d" y="18" font-size="14" font-family="sans-serif">%s</text>' % (left, esc(title)))
    if not pts:
        out.append('<text x="%d" y="%d" font-family="sans-serif">no data</text></svg>' % (left, top + h // 2))
        return "".join(out)
    xs = [math.log(p[0], 2) for p in pts]
    xmin, xmax = min(xs), max(xs)
    if xmax == xmin:
        xmin, xmax = xmin - 1, xmax + 1
    top = max([p[1] for p in pts] + [baseline or 0, required or 0])
    # headroom above the highest point, unless that would pass the float limit
    ymax = (top * 1.1 if top < _FLOAT_ROOM else top) or 1.0

    def px(size):
        return left + (math.log(size, 2) - xmin) / (xmax - xmin) * w

    def py(val):
        return top + h - (val / ymax) * h

    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>' % (left, top, w, h))
    for i in range(6):
        val = ymax / 5 * i  # divided first: ymax * 5 may pass the float limit
        y = py(val)
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>' % (left, left + w, y, y))
        out.append('<text x="%d" y="%.1f" font-size="10" text-anchor="end" font-family="sans-serif">%s</text>'
                   % (left - 4, y + 3, "%.0f" % val if val < 1e6 else "%.1e" % val))
    sizes = sorted(set(p[0] for p in pts))
    step = max(1, len(sizes) // 8)
    for size in sizes[::step]:
        x = px(size)
        out.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle" font-family="sans-serif">%s</text>'
                   % (x, top + h + 14, _size_label(size)))
    out.append('<text x="%d" y="%d" font-size="11" font-family="sans-serif">message size (bytes)</text>'
               % (left + w // 2 - 50, height - 6))
    out.append('<text x="12" y="%d" font-size="11" font-family="sans-serif" transform="rotate(-90 12 %d)">'
               'busbw (GB/s)</text>' % (top + h // 2 + 30, top + h // 2 + 30))
    legend_y = top + 10
    for label, value, colour, dash in (("baseline", baseline, "#000", "6,3"), ("required", required, "#c00", "2,3")):
        if value:
            y = py(value)
            out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="%s"/>'
                       % (left, left + w, y, y, colour, dash))
            out.append('<text x="%d" y="%d" font-size="11" font-family="sans-serif" fill="%s">%s %.1f</text>'
                       % (left + w + 8, legend_y, colour, label, value))
            legend_y += 16
    for i, (label, points) in enumerate(series):
        colour = _COLOURS[i % len(_COLOURS)]
        points = sorted(points)
        if not points:
            continue
        path = " ".join("%.1f,%.1f" % (px(s), py(b)) for s, b in points)
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (colour, path))
        for s, b in points:
            out.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"><title>%s %s: %.2f GB/s</title></circle>'
                       % (px(s), py(b), colour, esc(label), _size_label(s), b))
        out.append('<text x="%d" y="%d" font-size="11" font-family="sans-serif" fill="%s">%s</text>'
                   % (left + w + 8, legend_y, colour, esc(label[:24])))
        legend_y += 16
    out.append("</svg>")
    return "".join(out)


def _series_for(run):
    rows = run.get("rows") or []
    out = []
    for r in rows:
        vals = [x for x in (r.get("busbw_oop"), r.get("busbw_ip")) if x is not None]
        out.append((r.get("size"), max(vals) if vals else None))
    return out


_STYLE = ("<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
          "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}"
          ".pass{color:#2a7}.fail{color:#c33}.bad{color:#c33;font-weight:bold}"
          ".warn,.not_judged,.unknown{color:#a80}</style>")


def _verdict_colour(verdict):
    return {"pass": "#2a7", "fail": "#c33"}.get(verdict, "#a80")


STANDIN_BANNER = ("<p style=\"background:#fe8;padding:6px\"><strong>STAND-IN:</strong> this report came from the "
                  "sandbox. Its figures and evidence are from stand-ins of GPUs, RxDM, the plugin and nccl-tests: "
                  "they prove the tooling, not a cluster.</p>")


def _gbps(value):
    return "" if value is None else "%.1f" % value


def matrix_section(report, collective):
    """The pair busbw matrix of one collective and, under it, the pairs that failed or fell below the bar."""
    parts = ["<h2>Pair busbw matrix: %s</h2>" % esc(collective),
             pair_matrix.svg_matrix(pair_matrix.matrix(report, collective),
                                    "%s pair busbw (%s)" % (collective, report.get("family")))]
    slow = pair_matrix.slow_cells(report, collective)
    if not slow:
        parts.append("<p class=\"pass\">No pair failed or fell below the bar.</p>")
        return "".join(parts)
    parts.append("<table><tr><th>pair</th><th>verdict</th><th>busbw (GB/s)</th><th>bar (GB/s)</th>"
                 "<th>locality</th><th>sub-blocks</th><th>round</th><th>why</th></tr>")
    for cell in slow:
        parts.append("<tr><td>%s</td><td class=\"%s\">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
                     "<td>%s</td><td>%s</td></tr>"
                     % (esc(" + ".join(cell["pair"])), "pass" if cell["ok"] else "fail",
                        "pass, below the bar" if cell["ok"] else "fail", esc(_gbps(cell["busbw_gbps"])),
                        esc(_gbps(cell["required_gbps"])), esc(cell["locality"]),
                        esc(", ".join(pair_matrix.short_path(ident) or "unknown" for ident in cell["subblocks"])),
                        esc(cell["round"]), esc("; ".join(cell["reasons"]))))
    parts.append("</table>")
    return "".join(parts)


def to_html(report):
    verdict = report.get("verdict") or "not_judged"
    banner = STANDIN_BANNER if report.get("from_standins") else ""
    nccl_line = ("<p>Run %s, family %s, mode %s, %d nodes x %s GPUs, pass at %s%% of the baseline.</p>"
                 % (esc(report.get("run_id")), esc(report.get("family")), esc(report.get("mode")),
                    len(report.get("nodes") or []), esc(report.get("gpus_per_node")),
                    esc(int(round((report.get("threshold") or 0) * 100)))))
    diagnosis = report.get("diagnosis")
    if diagnosis is not None:
        overall = diagnosis.get("verdict") or "not_judged"
        parts = ["<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>GPUDirect diagnosis %s</title>"
                 % esc(report.get("run_id")), _STYLE, "</head><body>", banner,
                 "<h1>Diagnosis: <span style=\"color:%s\">%s</span></h1>"
                 % (_verdict_colour(overall), esc(overall.upper())),
                 "<p>Run %s: %d node(s) diagnosed, the NCCL tests ran on %d.</p>"
                 % (esc(report.get("run_id")), len(report.get("diagnosed_hosts") or []),
                    len(report.get("nodes") or []))]
        table = diagnosis.get("version_table") or {}
        if table.get("newest_source"):
            parts.append("<p>Driver, CUDA and NCCL are judged against the family table's qualified pairs; its "
                         "newest source is from %s%s.</p>" % (
                             esc(table["newest_source"]), "" if table.get("age_days") is None
                             else " (%s days before this report)" % esc(table["age_days"])))
        # failures that cluster in one place: the place first, its nodes' findings below
        parts += ["<p class=\"bad\">%s</p>" % esc(item["line"][:1].upper() + item["line"][1:])
                  for item in report.get("place_blame") or []]
        parts.append(findings_report.html_section(report.get("findings") or [], report.get("diagnosed_hosts")))
        if report.get("runs"):
            parts.append("<h2>NCCL tests: <span style=\"color:%s\">%s</span></h2>" % (
                _verdict_colour(verdict), esc(verdict.upper())))
            parts.append(nccl_line)
        else:
            parts.append("<h2>NCCL tests: not run</h2>")
    else:
        parts = ["<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>NCCL validation %s</title>"
                 % esc(report.get("run_id")), _STYLE, "</head><body>", banner,
                 "<h1>NCCL validation: <span style=\"color:%s\">%s</span></h1>"
                 % (_verdict_colour(verdict), esc(verdict.upper())),
                 nccl_line]
    if report.get("bad_nodes"):
        parts.append("<p class=\"bad\">Bad nodes: %s</p>" % esc(", ".join(report["bad_nodes"])))
    # a section with nothing in it is left out (a diagnosis whose NCCL tests did not run has no collectives)
    if report.get("collectives"):
        parts.append("<h2>Collectives</h2><table><tr><th>collective</th><th>status</th><th>busbw (GB/s)</th>"
                     "<th>at size</th><th>baseline</th><th>required</th><th>peak</th><th>why</th></tr>")
        for v in report.get("collectives") or []:
            parts.append("<tr><td>%s</td><td class=\"%s\">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
                         "<td>%s</td><td>%s</td></tr>"
                         % (esc(v.get("collective")), esc(v.get("status")), esc(v.get("status")),
                            esc(v.get("measured_busbw_gbps")),
                            esc(_size_label(v["measured_at_bytes"]) if v.get("measured_at_bytes") else ""),
                            esc(v.get("baseline_gbps")), esc(v.get("required_gbps")), esc(v.get("peak_busbw_gbps")),
                            esc("; ".join(v.get("reasons") or []))))
        parts.append("</table>")
    # one chart per collective: the cluster run, or every pair of the first round
    by_coll = {}
    for run in report.get("runs") or []:
        if run.get("kind") == "single_node":
            continue
        label = "+".join(run.get("hosts") or []) if run.get("kind") == "pair" else "cluster"
        by_coll.setdefault(run.get("collective"), []).append((label, _series_for(run)))
    verdicts = dict((v.get("collective"), v) for v in report.get("collectives") or [])
    for coll in sorted(by_coll, key=str):
        v = verdicts.get(coll) or {}
        parts.append("<h2>%s</h2>" % esc(coll))
        parts.append(svg_chart("%s busbw vs message size (%s)" % (coll, report.get("family")), by_coll[coll][:10],
                               baseline=v.get("baseline_gbps"), required=v.get("required_gbps")))
    if (report.get("pairwise") or {}).get("rounds"):
        for coll in pair_matrix.collectives(report):
            parts.append(matrix_section(report, coll))
    parts.append(nccl_env_section(report))
    table = report.get("node_table") or {}
    if table:
        parts.append("<h2>Nodes</h2><table><tr><th>node</th><th>address</th><th>status</th><th>reason</th>"
                     "<th>single-node busbw (GB/s)</th><th>pairs</th></tr>")
        for node in sorted(table):
            info = table[node]
            parts.append("<tr><td>%s</td><td>%s</td><td class=\"%s\">%s</td><td>%s</td><td>%s</td><td>%s</td></tr>"
                         % (esc(node), esc(info.get("address")), esc(info.get("status")), esc(info.get("status")),
                            esc(info.get("reason")), esc(info.get("single_node_busbw_gbps")),
                            esc(", ".join(info.get("pairs") or []))))
        parts.append("</table>")
    pairwise = report.get("pairwise") or {}
    cost = isolation_line(pairwise.get("isolation"))
    if cost:
        parts.append("<h2>Pairwise search</h2><p>%s</p>" % esc(cost))
    for i, rnd in enumerate(pairwise.get("rounds") or [], 1):
        stages = []
        for entry in rnd:
            if entry.get("stage") and entry["stage"] not in stages:
                stages.append(entry["stage"])
        parts.append("<h3>Round %d%s</h3><ul>" % (i, esc(" (%s)" % ", ".join(stages) if stages else "")))
        for entry in rnd:
            parts.append("<li class=\"%s\">%s: %s %s</li>"
                         % ("pass" if entry.get("ok") else "fail", esc(" + ".join(entry.get("pair") or [])),
                            "pass" if entry.get("ok") else "FAIL",
                            esc(json.dumps(entry.get("busbw_gbps") or {}))))
        parts.append("</ul>")
    parts.append("</body></html>\n")
    return "".join(parts)
