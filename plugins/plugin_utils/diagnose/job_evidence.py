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
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl import nccl_inspector
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl import nccl_job_evidence

PARTS = ("ras", "processes", "nccl_env", "stacks", "flight_recorder", "gpus", "kernel", "logs", "job_output",
         "slurm", "inspector")


def _node_of(host, names, default):
    return (names or {}).get(host) or default or host


def _usable(result):
    return isinstance(result, dict) and not result.get("failed") and isinstance(result.get("parts"), dict)


def summarize(results, hosts, names=None, min_nodes=4):
    """{host: the module's result} of every node asked -> the summary (a dict)."""
    nodes, findings, odd, hangs, frames, where, bandwidth, jobs = [], [], {}, [], {}, {}, {}, {}
    for host in hosts:
        result = results.get(host)
        if not _usable(result):
            why = (result or {}).get("msg") if isinstance(result, dict) else None
            nodes.append({"host": host, "gathered": False, "reason": safe_text.one_line(
                why or "no result (the node did not answer)", 300), "ranks": [], "lacking": {}})
            continue
        lacking = dict((part, entry.get("reasons") or []) for part, entry in result["parts"].items()
                       if not entry.get("ok"))
        nodes.append({"host": host, "gathered": bool(result.get("archive")) or bool(result.get("ranks")),
                      "ranks": [r.get("rank") for r in result.get("ranks") or []], "ras": result["ras"].get("state"),
                      "processes": result.get("processes", 0), "lacking": lacking,
                      "xids": [x.get("xid") for x in result.get("xids") or []], "masked": result.get("masked", 0)})
        if result.get("job"):
            jobs[result["job"]] = jobs.get(result["job"], 0) + 1
        for item in result.get("findings") or []:
            findings.append(dict(item, host=host))
        for rank in result["ras"].get("odd_ranks") or []:
            key = (rank["comm"], rank["rank"])
            odd.setdefault(key, dict(rank, node=_node_of(rank["host"], names, rank.get("node"))))
        hangs.extend(v for v in result.get("verdicts") or [] if v.get("kind") == "hang")
        for rank in result.get("ranks") or []:
            if rank.get("rank") is not None:
                frames[rank["rank"]] = rank.get("frame")
                where[rank["rank"]] = host
        if result.get("inspector"):
            per_key = bandwidth.setdefault(host, {})
            for row in result["inspector"]:
                per_key[(row["job"], row["comm"], row["collective"], row["message_size"])] = row["gbs"]
    findings = _unique(findings)
    odd_stack = nccl_job_evidence.odd_frames(frames)
    common = _common_frame(frames, odd_stack)
    stragglers = []
    for host, (ratio, key) in sorted(nccl_inspector.slow_nodes(bandwidth, min_nodes=min_nodes).items()):
        stragglers.append({"node": host, "ratio": round(ratio, 3), "job": key[0], "comm": key[1],
                           "collective": key[2], "message_size": key[3]})
        findings.append(fd.make("job", host, "warn",
                                "straggler: %s %s of job %s (%s) at %.2f of the job's nodes' median bus bandwidth"
                                % (key[2], key[3], key[0], key[1], ratio), host=host))
    odd_list = [odd[key] for key in sorted(odd)]
    return {
        "job": max(jobs.items(), key=lambda item: item[1])[0] if jobs else None,
        "headline": _headline(odd_list, hangs, odd_stack, where, common, stragglers),
        "odd_ranks": odd_list,
        "hung": bool(hangs),
        "odd_stacks": [{"rank": rank, "node": where.get(rank), "frame": frame, "others_in": common}
                       for rank, frame in sorted(odd_stack.items())],
        "stragglers": stragglers,
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


def _headline(odd, hangs, odd_stack, where, common, stragglers):
    parts = []
    for rank in odd[:4]:
        parts.append("rank %d on %s is the odd one in communicator %s%s: it issued %s"
                     % (rank["rank"], rank["node"], rank["comm"], ", which hangs" if hangs else "",
                        rank.get("behind") or "counts that differ"))
    for rank, frame in sorted(odd_stack.items())[:4]:
        parts.append("rank %d on %s stands in %s while the others are in %s"
                     % (rank, where.get(rank, "?"), frame, common or "another function"))
    for item in stragglers[:4]:
        parts.append("%s is a straggler (%.2f of the median bandwidth)" % (item["node"], item["ratio"]))
    return "; ".join(parts) or "no rank stands out: RAS's counts agree, the stacks agree and no node is slow"


def text(summary):
    """The summary as a page for the engineer (Markdown)."""
    lines = ["# Evidence of job %s" % (summary["job"] or "(unknown)"), ""]
    if summary.get("standins"):
        lines += ["Gathered from the sandbox: the job, NCCL RAS and the GPU tools are STAND-INs.", ""]
    lines += [summary["headline"], ""]
    if summary["findings"]:
        lines += ["## Findings", ""]
        lines += ["- %s %s %s: %s" % (item["severity"], item.get("host") or fd.CLUSTER, item["component"],
                                      safe_text.one_line(item["cause"], 500)) for item in summary["findings"]]
        lines.append("")
    lines += ["## Nodes", "", "| node | ranks | RAS | gathered | lacking |", "|---|---|---|---|---|"]
    for node in summary["nodes"]:
        lacking = "; ".join("%s: %s" % (part, " ".join(reasons)[:200]) for part, reasons in sorted(node["lacking"].items()))
        lines.append("| %s | %s | %s | %s | %s |" % (
            node["host"], " ".join(str(r) for r in node["ranks"]) or "-", node.get("ras", "-"),
            "yes" if node["gathered"] else "no: %s" % node.get("reason", "nothing of the job runs there"),
            safe_text.one_line(lacking, 600) or "-"))
    return "\n".join(lines) + "\n"
