# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The summary of a hung or slow job's evidence, from what gpudirect.gcp.nccl_job_evidence returned on
every node of the job (the _diagnose_job_summary filter; the playbook diagnose_job.yml writes it beside
the nodes' archives).

It names the odd rank and its node three ways, each from evidence of its own: NCCL RAS's counts (the
ranks whose collective counts differ from most ranks', judged hung when none moved over the watch),
the ranks' stacks (a rank whose main thread stands in a function most ranks are not in), and, where
NCCL Inspector ran, the node whose bandwidth is below its peers' (a straggler, judged as the node
agent's rules judge it: median and median absolute deviation across the job's nodes).

Controller-only, so here rather than with the node side of the running job (module_utils/job/): it is
the diagnose role's summary of the job (the _diagnose_job_summary and _diagnose_job_text filters), named
after them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_inspector
from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_job_evidence

PARTS = ("ras", "processes", "nccl_env", "stacks", "flight_recorder", "gpus", "kernel", "logs", "job_output",
         "slurm", "inspector")
# bounds on what one node's result puts in the summary: a hostile job or a broken node can make its
# strings and lists as long as it likes
MAX_TEXT = 300
MAX_CAUSE = 500
MAX_ITEMS = 256
MAX_LINE = 2000
# a bandwidth above this is no measurement (and sums of two near float's maximum would overflow)
MAX_GBS = 1e9
NO_ANSWER = "no result (the node did not answer)"
# Markdown that could render node text as markup: links, images, HTML, code spans, table cells, headings
_MARKDOWN = re.compile(r"([\\`*\[\]<>|#&~])")


class _Shape(Exception):
    """A node result (or a field of it) of the wrong shape: its message is the one line the summary gives."""


def _kind(value):
    return "null" if value is None else type(value).__name__


def _text(value, limit=MAX_TEXT):
    """Node-supplied text as the summary shows it: secrets masked, one line, at most limit characters."""
    if value is None:
        return None
    raw = safe_text.to_text(value) if isinstance(value, (str, bytes)) else safe_text.to_text(repr(value))
    # cut before masking (masking a megabyte to keep 300 characters wastes time), with room for a secret
    # that starts inside the kept part to still be recognised whole
    return safe_text.one_line(safe_text.mask_text(raw[:4 * limit + 512]), limit)


def _mapping(value, what):
    if not isinstance(value, dict):
        raise _Shape("%s is not a mapping (%s)" % (what, _kind(value)))
    return value


def _list(value, what):
    """A list field (None: empty), at most MAX_ITEMS of it."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Shape("%s is not a list (%s)" % (what, _kind(value)))
    return value[:MAX_ITEMS]


def _mappings(value, what):
    items = _list(value, what)
    for index, item in enumerate(items):
        _mapping(item, "%s[%d]" % (what, index))
    return items


def _int(value):
    """A whole number from a node (an int, or a string of digits), else None: never a bool, NaN or inf."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value) < 20:
        return int(value)
    return None


def _gbs(value):
    """A bandwidth: a finite, non-negative number below MAX_GBS, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) and 0 <= value < MAX_GBS else None


def _node_of(host, names, default):
    return (_text(names.get(host)) if isinstance(host, str) else None) or default


def _field(field):
    return "evidence field %s" % field


def _read(host, result, names):
    """What one node's result gives the summary, every text of it made safe; raises _Shape."""
    parts = _mapping(result["parts"], _field("parts"))
    lacking = {}
    for part, entry in list(parts.items())[:MAX_ITEMS]:
        entry = _mapping(entry, _field("parts.%s" % _text(part, 60)))
        if not entry.get("ok"):
            reasons = _list(entry.get("reasons"), _field("parts.%s.reasons" % _text(part, 60)))
            lacking[_text(part, 60)] = [_text(r) for r in reasons]
    ras = _mapping(result.get("ras") or {}, _field("ras"))
    ranks = []
    for item in _mappings(result.get("ranks"), _field("ranks")):
        ranks.append((_int(item.get("rank")), _text(item.get("frame"))))
    odd = []
    for index, rank in enumerate(_mappings(ras.get("odd_ranks"), _field("ras.odd_ranks"))):
        number = _int(rank.get("rank"))
        if number is None:
            raise _Shape("%s is not a number (%s)" % (_field("ras.odd_ranks[%d].rank" % index), _kind(rank.get("rank"))))
        counts = rank.get("counts") if isinstance(rank.get("counts"), dict) else {}
        address = _text(rank.get("host")) or "?"
        odd.append({"comm": _text(rank.get("comm")) or "?", "rank": number, "host": address,
                    "node": _node_of(rank.get("host"), names, _text(rank.get("node"))) or address,
                    "counts": dict((_text(k, 100), _int(v)) for k, v in list(counts.items())[:MAX_ITEMS]),
                    "behind": _text(rank.get("behind"))})
    hangs = sum(1 for v in _mappings(result.get("verdicts"), _field("verdicts")) if v.get("kind") == "hang")
    unmoved = _gbs(ras.get("unmoved_s")) or 0.0
    findings = []
    for index, item in enumerate(_mappings(result.get("findings"), _field("findings"))):
        if item.get("component") not in fd.COMPONENTS or item.get("severity") not in fd.SEVERITIES:
            raise _Shape("%s is not a finding (component %s, severity %s)" % (
                _field("findings[%d]" % index), _text(item.get("component"), 40), _text(item.get("severity"), 40)))
        findings.append(fd.make(item["component"], _text(item.get("subject")), item["severity"],
                                _text(item.get("cause"), MAX_CAUSE) or "", host=host))
    rows = []
    for row in _mappings(result.get("inspector"), _field("inspector")):
        gbs = _gbs(row.get("gbs"))
        if gbs is not None:
            key = tuple(_text(row.get(k), 100) for k in ("job", "comm", "collective", "message_size"))
            rows.append((key, gbs))
    slow_gpus = []
    for row in _mappings(result.get("slow_gpus"), _field("slow_gpus")):
        share = _gbs(row.get("ratio"))
        if share is not None and share < 1:
            item = dict((k, _text(row.get(k), 100)) for k in ("gpu", "job", "comm", "collective", "message_size"))
            slow_gpus.append(dict(item, node=host, ratio=round(share, 3)))
    xids = [_int(x.get("xid")) for x in _mappings(result.get("xids"), _field("xids"))]
    node = {"host": host, "gathered": bool(result.get("archive")) or bool(ranks),
            "ranks": [number for number, _frame in ranks], "ras": _text(ras.get("state"), 40) or "-",
            "processes": _int(result.get("processes")) or 0, "lacking": lacking, "xids": xids,
            "masked": _int(result.get("masked")) or 0}
    return {"node": node, "job": _text(result.get("job"), 100), "findings": findings, "odd": odd, "hangs": hangs,
            "ranks": ranks, "rows": rows, "unmoved_s": unmoved, "slow_gpus": slow_gpus}


def _not_gathered(host, reason):
    return {"host": host, "gathered": False, "reason": reason, "ranks": [], "lacking": {}}


def summarize(results, hosts, names=None, min_nodes=4):
    """{host: the module's result} of every node asked -> the summary (a dict).

    A node result of the wrong shape is that node not gathered, with one line naming it and the field: the
    other nodes are summarised as ever."""
    names = names if isinstance(names, dict) else {}
    nodes, findings, odd, hangs, frames, where, bandwidth, jobs = [], [], {}, 0, {}, {}, {}, {}
    unmoved, slow_gpus = 0.0, []
    for host in hosts:
        result = results.get(host)
        if isinstance(result, dict) and "parts" in result and not result.get("failed"):
            try:
                got = _read(host, result, names)
            except _Shape as exc:
                got = None
                reason = safe_text.one_line(exc, MAX_TEXT)
        elif result is None or isinstance(result, dict):
            # failed, unreachable, skipped: the module's own reason
            why = result.get("msg") if isinstance(result, dict) else None
            nodes.append(_not_gathered(host, _text(why) or NO_ANSWER))
            continue
        else:
            got, reason = None, "evidence result is not a mapping (%s)" % _kind(result)
        if got is None:
            nodes.append(_not_gathered(host, reason))
            findings.append(fd.make("host", "job evidence", "warn", "%s: %s" % (_text(host, 100), reason), host=host))
            continue
        nodes.append(got["node"])
        if got["job"]:
            jobs[got["job"]] = jobs.get(got["job"], 0) + 1
        findings.extend(got["findings"])
        for rank in got["odd"]:
            odd.setdefault((rank["comm"], rank["rank"]), rank)
        hangs += got["hangs"]
        unmoved = max(unmoved, got["unmoved_s"])
        for number, frame in got["ranks"]:
            if number is not None:
                frames[number] = frame
                where[number] = host
        for key, gbs in got["rows"]:
            bandwidth.setdefault(host, {})[key] = gbs
        slow_gpus.extend(got["slow_gpus"])
    findings = _unique(findings)
    odd_stack = nccl_job_evidence.odd_frames(frames)
    common = _common_frame(frames, odd_stack)
    stragglers = []
    # series by series, as the node agent's data is judged by the Prometheus rule
    for (host, key), ratio in sorted(nccl_inspector.slow_series(bandwidth, min_nodes=min_nodes).items()):
        stragglers.append({"node": host, "ratio": round(ratio, 3), "job": key[0], "comm": key[1],
                           "collective": key[2], "message_size": key[3]})
        findings.append(fd.make("job", host, "warn",
                                "straggler: %s %s of job %s (%s) at %.2f of the job's nodes' median bus bandwidth"
                                % (key[2], key[3], key[0], key[1], ratio), host=host))
    for item in slow_gpus:
        findings.append(fd.make("job", "%s %s" % (item["node"], item["gpu"]), "warn",
                                "slow GPU: %s %s of job %s (%s) at %.2f of its node's other GPUs' bus bandwidth"
                                % (item["collective"], item["message_size"], item["job"], item["comm"], item["ratio"]),
                                host=item["node"]))
    odd_list = [odd[key] for key in sorted(odd)]
    job = max(sorted(jobs.items()), key=lambda item: item[1])[0] if jobs else None
    stuck = None
    # a healthy job caught mid-collective has every rank there too: only counts that did not move over the
    # watch make it a hang
    frame = None if odd_list or odd_stack or not unmoved else nccl_job_evidence.stuck_frame(frames)
    if frame:
        stuck = {"frame": frame, "ranks": sum(1 for value in frames.values() if value), "unmoved_s": unmoved}
        findings.append(fd.make("job", "job %s" % (job or "?"), "fail", _stuck_line(stuck)))
    return {
        "job": job,
        "headline": safe_text.one_line(_headline(odd_list, hangs, odd_stack, where, common, stragglers, stuck,
                                                 slow_gpus),
                                       MAX_LINE),
        "odd_ranks": odd_list,
        "hung": bool(hangs) or stuck is not None,
        "stuck": stuck,
        "odd_stacks": [{"rank": rank, "node": where.get(rank), "frame": frame, "others_in": common}
                       for rank, frame in sorted(odd_stack.items())],
        "stragglers": stragglers,
        "slow_gpus": slow_gpus,
        "nodes": nodes,
        "findings": findings,
    }


def _unique(findings):
    """RAS answers for the whole job on every node, so each node returns the same verdicts: keep one of
    each, about the job (its subject names the node of the rank), not about the node that asked. A job
    output on a shared file system is read on every node: its NCCL DIAG lines are kept once too."""
    seen, out = set(), []
    for item in findings:
        if item["component"] == "job":
            item = dict(item, host=None)
        shared = item["component"] == "job" or item["cause"].startswith("NCCL DIAG")
        key = (None if shared else item.get("host"), item["component"], item["subject"], item["cause"])
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _common_frame(frames, odd):
    rest = [frame for rank, frame in frames.items() if frame and rank not in odd]
    return max(set(rest), key=rest.count) if rest else None


def _stuck_line(stuck):
    return ("every rank whose stack was read (%d) stands in %s, and no rank issued a collective for the %g s RAS "
            "was watched: one collective that does not complete (a dead link, or a peer stuck inside it)"
            % (stuck["ranks"], stuck["frame"], stuck["unmoved_s"]))


def _headline(odd, hangs, odd_stack, where, common, stragglers, stuck=None, slow_gpus=None):
    parts = [_stuck_line(stuck)] if stuck else []
    for rank in odd[:4]:
        parts.append("rank %d on %s is the odd one in communicator %s%s: it issued %s"
                     % (rank["rank"], rank["node"], rank["comm"], ", which hangs" if hangs else "",
                        rank.get("behind") or "counts that differ"))
    for rank, frame in sorted(odd_stack.items())[:4]:
        parts.append("rank %d on %s stands in %s while the others are in %s"
                     % (rank, where.get(rank, "?"), frame, common or "another function"))
    for item in stragglers[:4]:
        parts.append("%s is a straggler (%.2f of the median bandwidth)" % (item["node"], item["ratio"]))
    for item in (slow_gpus or [])[:4]:
        parts.append("%s %s is slow (%.2f of its node's other GPUs)" % (item["node"], item["gpu"], item["ratio"]))
    return "; ".join(parts) or "no rank stands out: RAS's counts agree, the stacks agree and no node is slow"


def _md(value, limit=MAX_TEXT):
    """Text as one Markdown line or table cell: one bounded line, secrets masked, with Markdown's and HTML's
    markup characters escaped so that node text is shown, never rendered."""
    return _MARKDOWN.sub(r"\\\1", _text("-" if value is None else value, limit))


def _line(text):
    """Every line of the page goes out through here: one line, at most MAX_LINE characters."""
    return safe_text.one_line(text, MAX_LINE)


def text(summary):
    """The summary as a page for the engineer (Markdown)."""
    lines = ["# Evidence of job %s" % _md(summary.get("job") or "(unknown)", 100), ""]
    if summary.get("standins"):
        lines += ["Gathered from the sandbox: the job, NCCL RAS and the GPU tools are STAND-INs.", ""]
    lines += [_md(summary["headline"], MAX_LINE), ""]
    if summary.get("findings"):
        lines += ["## Findings", ""]
        lines += ["- %s %s %s: %s" % (_md(item.get("severity"), 10), _md(item.get("host") or fd.CLUSTER, 100),
                                      _md(item.get("component"), 20), _md(item.get("cause"), MAX_CAUSE))
                  for item in summary["findings"]]
        lines.append("")
    lines += ["## Nodes", "", "| node | ranks | RAS | gathered | lacking |", "|---|---|---|---|---|"]
    for node in summary.get("nodes") or []:
        lacking = "; ".join("%s: %s" % (part, " ".join(safe_text.to_text(r) for r in reasons or [])[:200])
                            for part, reasons in sorted((node.get("lacking") or {}).items()))
        lines.append("| %s | %s | %s | %s | %s |" % (
            _md(node.get("host"), 100), _md(" ".join(str(r) for r in node.get("ranks") or []) or "-", 200),
            _md(node.get("ras", "-"), 40),
            "yes" if node.get("gathered") else "no: %s" % _md(node.get("reason", "nothing of the job runs there")),
            _md(lacking or "-", 600)))
    return "\n".join(_line(line) for line in lines) + "\n"
