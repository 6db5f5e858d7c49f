# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL Inspector's metrics files, and the node a running job's collectives are slow on.

NCCL Inspector (a profiler plugin in NCCL's tree, 2.29 and later) writes, for each GPU of a job, the
file nccl_inspector_metrics_<GPU uuid>.prom in NCCL_INSPECTOR_DUMP_DIR every interval (30 s at least):
for each communicator, collective, message-size bucket and algorithm/protocol, the geometric mean bus
bandwidth (nccl_bus_bandwidth_gbs, GB/s) and the mean execution time of the collectives completed in
that interval [NCCL plugins/profiler/inspector/inspector_prom.cc]. The files have no HELP or TYPE
lines and no timestamps, label values are written unescaped, and a file is rewritten in place, so a
reader may see half of one: a line that does not parse, or that no newline ends yet, is counted and
skipped, never the file. The job writes the directory: only regular files in it are read (no link
followed, no FIFO or device opened), each up to a size bound, and labels are parsed in one pass.

Across the job's nodes, for each (job, communicator, collective, size bucket), a node is slow in an
interval when its bandwidth is below `ratio` of the nodes' median and below the median by more than
`mad_k` scaled median absolute deviations (robust: the slow node cannot pull the median or the
spread towards itself, as it would a mean). A node slow on a series in `persist` intervals in a row
is a straggler on it; the Prometheus rule judges each series alike. Within a node, each GPU is judged
by the same test against the node's other GPUs (the node's median hides one slow GPU of eight).
Plain Python (no ansible import): the node health agent ships it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import math
import os
import re
import stat
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.common.files import read_at_most
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd

BANDWIDTH = "nccl_bus_bandwidth_gbs"
EXEC_TIME = "nccl_collective_exec_time_microseconds"
METRICS = (BANDWIDTH, EXEC_TIME, "nccl_p2p_bus_bandwidth_gbs", "nccl_p2p_exec_time_microseconds")
# the labels a collective's series carries, in the order Inspector writes them
LABELS = ("version", "slurm_job_id", "node", "gpu", "comm_name", "n_nodes", "nranks", "collective",
          "message_size", "algo_proto")
# a normal distribution's MAD times this is its standard deviation
MAD_SCALE = 1.4826
_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
_KEY = re.compile(r'[a-zA-Z_][a-zA-Z0-9_]*="')
# a label's value runs to the quote that precedes the next label or the end: Inspector does not escape.
# Each search starts where the last one ended and each try is bounded by a run of name characters
# that no other try reads: linear in the labels' length, however they are built.
_VALUE_END = re.compile(r'",(?=[a-zA-Z_][a-zA-Z0-9_]*=")')
FILES = "nccl_inspector_metrics_*.prom"


# Inspector raises a shorter dump interval to this in its Prometheus mode [inspector_prom.cc]
MIN_INTERVAL_S = 30
# the most bandwidth series one node publishes (job, communicator, collective, size bucket): a real job has
# tens of communicators, and the job, not the operator, names them
MAX_SERIES = 2048


def profiler_env(env, library, dump_dir, interval_s=MIN_INTERVAL_S, displace=False):
    """(the variables that turn NCCL Inspector on with its Prometheus dump, a problem or None).

    NCCL loads one profiler only. Where env already names another one (Google's gIB images set up
    their CoMMA profiler, which feeds Google's own straggler detection), Inspector would silently
    displace it: that is a problem unless displace says to."""
    current = (env or {}).get("NCCL_PROFILER_PLUGIN")
    if current and current != library and not displace:
        return {}, ("NCCL_PROFILER_PLUGIN is already %s (on gIB images Google's CoMMA profiler, which feeds "
                    "Google's straggler detection); NCCL loads one profiler, so Inspector would displace it: "
                    "set the displace option to replace it" % safe_text.one_line(current))
    return {"NCCL_PROFILER_PLUGIN": library,
            "NCCL_INSPECTOR_ENABLE": "1",
            "NCCL_INSPECTOR_PROM_DUMP": "1",
            "NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS": str(int(max(MIN_INTERVAL_S, interval_s) * 1000000)),
            "NCCL_INSPECTOR_DUMP_DIR": dump_dir}, None


def labels(text):
    """{key: value} of a label list as Inspector writes it (values unescaped); None where it is not one."""
    out, pos, end = {}, 0, len(text)
    while pos < end:
        key = _KEY.match(text, pos)
        if not key:
            return None
        start = key.end()
        stop = _VALUE_END.search(text, start)
        if stop:
            out[key.group()[:-2]] = text[start:stop.start()]
            pos = stop.end()
        elif text.endswith('"') and end - 1 >= start:
            out[key.group()[:-2]] = text[start:end - 1]
            pos = end
        else:
            return None
    return out


def _sample(line):
    """(metric, labels, value text) of a line name{labels} value; None where it is not one."""
    brace, close = line.find("{"), line.rfind("}")
    if brace < 0 or close < brace:
        return None
    name, rest = line[:brace], line[close + 1:]
    if not _NAME.match(name) or not rest[:1].isspace() or len(rest.split()) != 1:
        return None
    found = labels(line[brace + 1:close])
    if found is None:
        return None
    return name, found, rest.strip()


def parse(text):
    """(samples, lines skipped) from one Inspector file; a sample is {metric, labels, value}.

    Skipped: a line cut short (the last one, where no newline ends it: Inspector may be writing it,
    and "180.25" caught as "18" is no bandwidth), a metric Inspector does not write, a value that is
    not a finite number of zero or more."""
    samples, skipped = [], 0
    lines = text.split("\n")
    if lines[-1].strip():
        skipped += 1
    for line in lines[:-1]:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        found = _sample(line)
        if not found or found[0] not in METRICS:
            skipped += 1
            continue
        name, labels_, value_text = found
        try:
            value = float(value_text)
        except ValueError:
            skipped += 1
            continue
        if not math.isfinite(value) or value < 0 or "collective" not in labels_ and "p2p_operation" not in labels_:
            skipped += 1
            continue
        samples.append({"metric": name, "labels": labels_, "value": value})
    return samples, skipped


def series_key(labels):
    """What a bandwidth is compared within: the job, communicator, collective and size bucket."""
    return (labels.get("slurm_job_id", "unknown"), labels.get("comm_name", "unknown"),
            labels.get("collective") or labels.get("p2p_operation", "?"), labels.get("message_size", "?"))


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if not ordered:
        raise ValueError("the median of nothing")
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2.0


def node_bandwidths(samples):
    """{series key: the median bus bandwidth of the node's GPUs} from one node's samples."""
    per_key = {}
    for sample in samples:
        if sample["metric"] in (BANDWIDTH, "nccl_p2p_bus_bandwidth_gbs"):
            per_key.setdefault(series_key(sample["labels"]), []).append(sample["value"])
    return dict((key, median(values)) for key, values in per_key.items())


def _outliers(values, ratio, mad_k):
    """{name: value / median} of the values below ratio of their median and below it by more than mad_k
    scaled MADs: the one test of slowness, across nodes and across a node's GPUs."""
    middle = median(values.values())
    if middle <= 0:
        return {}
    spread = MAD_SCALE * median([abs(v - middle) for v in values.values()])
    return dict((name, value / middle) for name, value in values.items()
                if value < ratio * middle and middle - value > mad_k * spread)


def slow_series(interval, min_nodes=4, ratio=0.85, mad_k=3.0):
    """{(node, key): its ratio to the median} of every series a node is slow on in this interval.

    interval: {node: {series key: bandwidth}}. A key seen on fewer than min_nodes nodes is not judged
    (two or three nodes have no majority to compare with). This is, series by series, what the
    Prometheus rule GPUDirectJobStraggler computes (tests/unit/monitoring proves they agree): whoever
    judges the same bandwidths names the same node for the same collective and size."""
    out = {}
    keys = set(key for values in interval.values() for key in values)
    for key in keys:
        values = dict((node, bw[key]) for node, bw in interval.items() if key in bw)
        if len(values) < min_nodes:
            continue
        for node, share in _outliers(values, ratio, mad_k).items():
            out[(node, key)] = round(share, 3)
    return out


def slow_nodes(interval, min_nodes=4, ratio=0.85, mad_k=3.0):
    """{node: (worst ratio to the median, the key it was worst on)} of the nodes slow on any series."""
    out = {}
    for (node, key), share in slow_series(interval, min_nodes, ratio, mad_k).items():
        if node not in out or (share, key) < out[node]:
            out[node] = (share, key)
    return out


def slow_gpus(samples, min_gpus=4, ratio=0.85, mad_k=3.0):
    """The GPUs of one node slower than its other GPUs: [{job, comm, collective, message_size, gpu, gbs,
    ratio}]. The node's median, which the cross-node judgment compares, hides one slow GPU of eight.
    Each GPU's bandwidth in each communicator is judged, by the same test, against the node's other GPUs
    for the same job, collective and size, whatever communicator they are in: with one data-parallel
    group per GPU rail, a GPU whose NIC or PCIe path is slow is the one whose group is slow. Fewer than
    min_gpus values are not judged."""
    per_key = {}
    for sample in samples:
        if sample["metric"] in (BANDWIDTH, "nccl_p2p_bus_bandwidth_gbs"):
            job, comm, collective, size = series_key(sample["labels"])
            gpu = safe_text.one_line(sample["labels"].get("gpu", "?"), 100)
            per_key.setdefault((job, collective, size), {})[(gpu, comm)] = sample["value"]
    out = []
    for (job, collective, size), values in sorted(per_key.items()):
        if len(values) < min_gpus:
            continue
        for (gpu, comm), share in sorted(_outliers(values, ratio, mad_k).items()):
            out.append({"job": job, "comm": comm, "collective": collective, "message_size": size, "gpu": gpu,
                        "gbs": values[(gpu, comm)], "ratio": round(share, 3)})
    return out


_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _changed(before, after):
    return (before.st_ino, before.st_size, before.st_mtime_ns) != (after.st_ino, after.st_size, after.st_mtime_ns)


def read_file(name, dir_fd, max_bytes):
    """The text of a regular file directly in the directory dir_fd (its first max_bytes); None for
    anything else, a link included, and for a file that changed while read (the next read has it).

    O_NOFOLLOW: a link is not followed, in the directory or out of it; O_NONBLOCK: a FIFO does not
    block the open (and is then refused as not regular: the file may have been swapped since the
    caller's lstat)."""
    try:
        fd = os.open(name, _OPEN_FLAGS, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            return None
        data = read_at_most(fd, max_bytes)
        if _changed(before, os.fstat(fd)):
            return None
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace")


def read_dir(directory, stale_s, now=None, max_bytes=16 * 1024 * 1024, max_files=1024, max_series=MAX_SERIES,
             dir_fd=None):
    """The node's bandwidth from the Inspector files in directory: {files, stale_files, skipped_files,
    skipped_lines, bandwidth: [{job, comm, collective, message_size, gbs}]}; a file not rewritten for
    stale_s is left out, and so is what is not a regular file, a file changed while read, and the
    files past max_files (skipped_files); past max_series, series are left out too (skipped_series).

    dir_fd: the directory, opened by the caller as it sees fit (and closed by it), instead of directory."""
    now = time.time() if now is None else now
    samples, files, stale, skipped, skipped_files = [], 0, 0, 0, 0
    own = dir_fd is None
    if own:
        try:
            dir_fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            dir_fd = None
    try:
        names = sorted(fnmatch.filter(os.listdir(dir_fd), FILES)) if dir_fd is not None else []
    except OSError:
        names = []
    try:
        skipped_files += max(0, len(names) - max_files)
        for name in names[:max_files]:
            try:
                info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                info = None
            if info is None or not stat.S_ISREG(info.st_mode):
                skipped_files += 1  # a link, device, FIFO or socket is not even opened
                continue
            if now - info.st_mtime > stale_s:
                stale += 1
                continue
            text = read_file(name, dir_fd, max_bytes)
            if text is None:
                skipped_files += 1
                continue
            found, bad = parse(text)
            samples += found
            skipped += bad
            files += 1
    finally:
        if own and dir_fd is not None:
            os.close(dir_fd)
    bandwidth = [{"job": key[0], "comm": key[1], "collective": key[2], "message_size": key[3], "gbs": value}
                 for key, value in sorted(node_bandwidths(samples).items())]
    # the job names its communicators: a bound on the series keeps Prometheus's cardinality the operator's
    return {"files": files, "stale_files": stale, "skipped_files": skipped_files, "skipped_lines": skipped,
            "skipped_series": max(len(bandwidth) - max_series, 0), "bandwidth": bandwidth[:max_series],
            "slow_gpus": slow_gpus(samples)[:max_series]}


class StragglerWatch(object):
    """Judges successive intervals of a job's nodes; a node slow in `persist` intervals in a row is a
    straggler (one slow interval is noise: a checkpoint, a data-loader stall)."""

    def __init__(self, persist=2, min_nodes=4, ratio=0.85, mad_k=3.0):
        self.persist, self.min_nodes, self.ratio, self.mad_k = persist, min_nodes, ratio, mad_k
        self.streak = {}

    def observe(self, interval):
        """Verdicts for this interval: {node, job, comm, collective, message_size, ratio, intervals,
        finding}."""
        slow = slow_series(interval, self.min_nodes, self.ratio, self.mad_k)
        # series by series, as the Prometheus rule's `for` holds each of its alerts
        self.streak = dict((item, self.streak.get(item, 0) + 1) for item in slow)
        verdicts = []
        for node, key in sorted(slow):
            if self.streak[(node, key)] < self.persist:
                continue
            worst, (job, comm, collective, size) = slow[(node, key)], key
            cause = ("a straggler: %s's %s bus bandwidth (%s, communicator %s%s) is %.2f of its peers' median, "
                     "%d intervals in a row" % (safe_text.one_line(node), safe_text.one_line(collective),
                                                safe_text.one_line(size), safe_text.one_line(comm),
                                                ", job %s" % safe_text.one_line(job) if job != "unknown" else "",
                                                worst, self.streak[(node, key)]))
            verdicts.append({"node": node, "job": job, "comm": comm, "collective": collective,
                             "message_size": size, "ratio": round(worst, 3), "intervals": self.streak[(node, key)],
                             "finding": fd.make("job", safe_text.one_line(node), "warn", cause)})
        return verdicts
