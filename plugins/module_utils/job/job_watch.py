# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The watch of the NCCL job running on a node through NCCL RAS: one loop for all who watch it.

loop() reads RAS, waits, and reads again; the node agent (JobWatch, for as long as its service runs) and
the modules that watch a job over a window (WindowWatch: nccl_job_status, nccl_job_evidence) differ only
in its parameters: the interval, the window and whether its end gets a read, what is done with each
status, and whether the job's GPU activity is sampled with it.

The node agent's watch, with its Prometheus metrics: each poll asks NCCL RAS for the job's status
(nccl_ras.HangWatch judges hangs over successive polls), and, where an activity sampler is given, what the job's GPUs do (gpu_activity: spinning GPUs
under agreeing counts that stopped are the hang where every rank waits in one collective). A poll
that fails is no observation: it holds no verdict, and the hang clocks run on through it. Between
polls RAS's event stream (NCCL 2.29 and later) is read, so that a peer's death is named within a
second of RAS knowing it, not at the next poll. A dead peer stays named until the
job ends (RAS stops answering) or for hold_s. Where the job runs NCCL Inspector, each poll also
reads its files and publishes the node's bandwidth, which Prometheus compares across the job's
nodes (the straggler alert). The job writes what RAS answers and what Inspector files hold: an answer
the watch cannot read is recorded (could not check the job), told once, and the watch carries on.
Plain Python (no ansible import): the agent runs it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import select
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import prom_text, safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_inspector, nccl_ras

FAMILIES = (
    ("gpudirect_job_watch_info", "gauge", "Always 1; the label says whether RAS is a stand-in"),
    ("gpudirect_job_watch_last_poll_timestamp_seconds", "gauge", "When NCCL RAS was last asked (Unix time)"),
    ("gpudirect_job_ras_up", "gauge", "1 when an NCCL job's RAS service answered the last poll (0: no NCCL job)"),
    ("gpudirect_job_watch_check_failed", "gauge",
     "1 when the last poll could not check the job: RAS answered too late, too much, or not as RAS does"),
    ("gpudirect_job_events_read", "gauge", "1 when RAS's event stream is read (NCCL 2.29 and later)"),
    ("gpudirect_job_stalled_seconds", "gauge",
     "Seconds since any rank of the communicator issued a collective, while its ranks disagree or its GPUs spin"),
    ("gpudirect_job_hang", "gauge", "1 for each rank of a hung communicator that the others wait for"),
    ("gpudirect_job_stuck", "gauge",
     "1 for each communicator whose ranks all wait in one collective while the job's GPUs spin"),
    ("gpudirect_job_dead_rank", "gauge", "1 for each rank NCCL RAS considers dead, or reported dead in its event stream"),
    ("gpudirect_job_unresponsive_rank", "gauge", "1 for each rank NCCL RAS cannot reach"),
    ("gpudirect_job_rank_error", "gauge", "1 for each rank that holds an NCCL error or aborted"),
    ("gpudirect_job_inspector_files", "gauge", "NCCL Inspector files rewritten within their staleness limit"),
    ("gpudirect_job_inspector_skipped_lines", "gauge", "Lines of those files that did not parse (one cut short)"),
    ("gpudirect_job_inspector_skipped_series", "gauge",
     "Bandwidth series left out past the most one node publishes (the job names its communicators)"),
    ("gpudirect_job_bus_bandwidth_gbs", "gauge",
     "The node's bus bandwidth (median of its GPUs, NCCL Inspector's last interval) per job, communicator, "
     "collective and message size"),
    ("gpudirect_job_slow_gpu", "gauge",
     "A GPU's bus bandwidth as a share of its node's other GPUs' median (NCCL Inspector), for the GPUs below "
     "it by the straggler test: a slow GPU the node's median hides"),
)
_BY_KIND = {"hang": "gpudirect_job_hang", "dead_rank": "gpudirect_job_dead_rank",
            "dead_peer": "gpudirect_job_dead_rank", "unresponsive_rank": "gpudirect_job_unresponsive_rank",
            "rank_error": "gpudirect_job_rank_error"}
# the event stream names each dead peer it reports: a stream that reports thousands is not believed
# beyond these (the oldest go first)
MAX_DEAD_PEERS = 256


def loop(read, interval_s, clock=time.monotonic, wait=time.sleep, window_s=None, window_after_first_read=False,
         read_at_end=False):
    """Read, wait interval_s, read again: the one loop of every watch of a job through NCCL RAS.

    read()       one read of RAS and what the caller does with the status; False ends the watch (a
                 hang judged, or an answer a module stops at).
    wait(s)      waits s seconds; it may return early (the agent reads RAS's event stream meanwhile and
                 tells a dead peer at once) and is then called again for the rest.
    window_s     None: until read() ends it; else the watch's length in seconds, from its start or, with
                 window_after_first_read, from the end of the first read (a module judging a hang over
                 the whole window needs all of it after a status).
    read_at_end  a read falls at the window's end, and the watch ends after it (a module judges the
                 status then); else the watch ends there without one (the agent)."""
    end = clock() + window_s if window_s is not None and not window_after_first_read else None
    while read_at_end or end is None or clock() < end:
        if not read():
            return
        now = clock()
        if end is None and window_s is not None:
            end = now + window_s
        if read_at_end and end is not None and now >= end:
            return
        next_read = now + interval_s if end is None else min(now + interval_s, end)
        while clock() < next_read:
            wait(next_read - clock())


def _judge(hangs, now, comms, job, activity):
    """hangs' verdicts on this status; with activity(pids), on the job's GPU activity too (a sample that
    raises is lost: it neither starts nor stops a clock)."""
    sample = None
    if activity is not None:
        try:
            sample = activity([rank["pid"] for comm in comms for rank in comm["ranks"]])
        except Exception:  # pylint: disable=broad-except
            sample = None
    return hangs.observe(now, comms, job=job, activity=sample)


class WindowWatch(object):
    """A module's watch of the job over a window: each status judged (nccl_ras.HangWatch), its verdicts
    kept with the earlier ones (a rank once dead stays named), until a hang is judged or a read fails.

    params: host, port, timeout_s, names and, where the module has it, ras_wait_s. find_job: read the
    Slurm job from a rank's environment. After run(), error is the exception that ended the watch (None:
    the window ended or a hang was judged) and error_in where it came from: "ask" or "status" (the
    answer read, not of RAS's shape)."""

    def __init__(self, ask, params, threshold_s, clock=time.monotonic, find_job=False, activity=None):
        self.ask, self.params, self.clock = ask, params, clock
        self.hangs = nccl_ras.HangWatch(threshold_s, params["names"])
        self.find_job, self.activity = find_job, activity
        self.reads, self.verdicts, self.comms, self.version, self.job = 0, [], [], None, None
        self.first_doc = self.last_doc = None
        self.error, self.error_in = None, None

    def read(self):
        """One status read and judged; False when it ends the watch."""
        try:
            doc = self.ask(host=self.params["host"], port=self.params["port"], timeout=self.params["timeout_s"],
                           wait_s=self.params.get("ras_wait_s"))
        except Exception as exc:  # pylint: disable=broad-except
            self.error, self.error_in = exc, "ask"
            return False
        try:
            comms = nccl_ras.snapshot(doc)
        except Exception as exc:  # pylint: disable=broad-except
            self.error, self.error_in = exc, "status"
            return False
        self.reads += 1
        self.comms, self.last_doc = comms, doc
        if self.first_doc is None:
            self.first_doc = doc
        self.version = safe_text.one_line(doc.get("nccl_version", ""), 100) or None
        if self.find_job and self.job is None:
            self.job = nccl_ras.slurm_job_of([rank["pid"] for comm in comms for rank in comm["ranks"]])
        found = _judge(self.hangs, self.clock(), comms, self.job, self.activity)
        self.verdicts = nccl_ras.merge(self.verdicts, found)
        return not any(verdict["kind"] == "hang" for verdict in found)

    def run(self, interval_s, window_s, sleep=time.sleep, window_after_first_read=False):
        """Reads over window_s, one at its end; self holds what they told."""
        loop(self.read, interval_s, clock=self.clock, wait=sleep, window_s=window_s,
             window_after_first_read=window_after_first_read, read_at_end=True)
        return self

    def state(self):
        """hang (a hang was judged), faulty (a dead, unreachable or failing rank) or ok."""
        kinds = set(verdict["kind"] for verdict in self.verdicts)
        return "hang" if "hang" in kinds else ("faulty" if kinds else "ok")


class JobWatch(object):
    """poll() then wait(seconds), over and over; metrics() and news() say what is known."""

    def __init__(self, port=nccl_ras.PORT, hang_after_s=600.0, names=None, hold_s=600.0,
                 clock=time.monotonic, status=nccl_ras.status, monitor=nccl_ras.Monitor,
                 inspector_dir=None, inspector_stale_s=120.0, activity=None):
        self.port, self.names, self.hold_s, self.clock = port, names or {}, hold_s, clock
        # activity(pids) -> gpu_activity.state() of the GPUs running pids, or None for a lost sample
        self.activity = activity
        self.inspector_dir, self.inspector_stale_s, self.inspector = inspector_dir, inspector_stale_s, None
        self.status, self.open_monitor = status, monitor
        self.hangs = nccl_ras.HangWatch(hang_after_s, self.names)
        self.monitor, self.monitor_refused = None, False
        self.ras_up, self.job = False, None
        self.verdicts, self.stalled, self.dead_peers = [], {}, {}
        self.reported = set()
        # why the last poll could not check the job (None: it could, or no job runs), and whether told
        self.problem, self.problem_told = None, False

    def poll(self):
        """Ask RAS once, and read the Inspector files; True when a job answered. Never raises for what
        the job wrote: the failure is recorded (self.problem) and the next poll tries again."""
        try:
            return self._poll()
        except Exception as exc:  # pylint: disable=broad-except
            self.failed(exc)
            return False

    def failed(self, exc):
        """Record that the job could not be checked; no verdict stands on an answer not read, and the hang
        clocks run on (a poll that timed out is no sign that the job moved)."""
        if isinstance(exc, nccl_ras.RasError):
            why = str(exc)
        elif isinstance(exc, ValueError):
            why = "NCCL RAS's status: %s" % exc
        else:
            why = "%s: %s" % (type(exc).__name__, exc)
        self.verdicts, self.stalled, self.ras_up = [], {}, False
        self.problem = safe_text.one_line(why, 500)

    def _poll(self):
        if self.inspector_dir:
            try:
                self.inspector = nccl_inspector.read_dir(self.inspector_dir, self.inspector_stale_s)
            except Exception:  # pylint: disable=broad-except
                self.inspector = None  # no bandwidth published: files it cannot read are no RAS failure
        try:
            comms = nccl_ras.snapshot(self.status(port=self.port, timeout=10.0))
        except nccl_ras.NoRas:
            self._job_ended()  # no job: nothing to check, nothing failed
            self.problem, self.problem_told = None, False
            return False
        now = self.clock()
        self.ras_up = True
        if self.job is None:
            self.job = nccl_ras.slurm_job_of([rank["pid"] for comm in comms for rank in comm["ranks"]])
        self.verdicts = _judge(self.hangs, now, comms, self.job, self.activity)
        self.stalled = self.hangs.stalled(now)
        for key, (verdict, since) in list(self.dead_peers.items()):
            if now - since > self.hold_s:
                del self.dead_peers[key]
        if self.monitor is None and not self.monitor_refused:
            try:
                self.monitor = self.open_monitor(port=self.port, timeout=10.0)
            except nccl_ras.RasError:
                self.monitor_refused = True  # an NCCL before 2.29: the status's missing ranks still tell
        self.problem, self.problem_told = None, False
        return True

    def _job_ended(self):
        if self.monitor is not None:
            self.monitor.close()
        self.monitor, self.monitor_refused = None, False
        self.ras_up, self.job = False, None
        self.verdicts, self.stalled, self.dead_peers = [], {}, {}
        self.hangs.seen.clear()

    def run(self, interval_s, window_s=None, publish=lambda: None):
        """poll() every interval_s, reading the event stream in between, for window_s (None: until stopped);
        publish() after each poll and each dead peer. What either raises is recorded (failed()) and the
        watch carries on: the service never exits for what a job wrote."""
        def read():
            try:
                self.poll()
            except Exception as exc:  # pylint: disable=broad-except
                self.failed(exc)
            publish()
            return True

        def wait(seconds):
            try:
                told = self.wait(seconds)
            except Exception as exc:  # pylint: disable=broad-except
                self.failed(exc)
                time.sleep(max(0.0, seconds))
                told = True
            if told:
                publish()
        loop(read, interval_s, clock=self.clock, wait=wait, window_s=window_s)

    def wait(self, seconds):
        """Read the event stream until seconds passed or a peer died; True when one did."""
        if self.monitor is None:
            time.sleep(max(0.0, seconds))
            return False
        end = self.clock() + max(0.0, seconds)
        while True:
            left = end - self.clock()
            if left <= 0:
                return False
            try:
                ready, _w, _x = select.select([self.monitor], [], [], left)
                if not ready:
                    return False
                events = self.monitor.read(wait_s=0.0)
            except Exception:  # pylint: disable=broad-except
                # RAS closed the stream (the job ended), or sent one the watch cannot read: the next
                # poll asks again
                self.monitor.close()
                self.monitor = None
                return False
            died = False
            for event in events:
                verdict = nccl_ras.dead_peer(event, self.names, self.job)
                if verdict:
                    self._dead_peer(verdict)
                    died = True
            if died:
                return True

    def _dead_peer(self, verdict):
        key = verdict["finding"]["cause"]
        self.dead_peers[key] = (verdict, self.clock())
        if len(self.dead_peers) > MAX_DEAD_PEERS:
            oldest = min(self.dead_peers, key=lambda k: self.dead_peers[k][1])
            del self.dead_peers[oldest]

    def current(self):
        return self.verdicts + [verdict for verdict, _since in self.dead_peers.values()]

    def news(self):
        """One line for each verdict not told before, and one when the job could not be checked (once,
        until a poll checks it again: a job that keeps answering badly does not fill the journal)."""
        lines = []
        if self.problem and not self.problem_told:
            self.problem_told = True
            lines.append("could not check the job: %s" % self.problem)
        current = set()
        for verdict in self.current():
            key = (verdict["kind"], verdict["comm"], tuple(verdict["ranks"]), tuple(verdict["hosts"]))
            current.add(key)
            if key not in self.reported:
                lines.append("%s: %s" % (verdict["kind"], verdict["finding"]["cause"]))
        self.reported = current  # what no longer stands is forgotten: the set stays as small as the verdicts
        return lines

    def metrics(self, now_wall, standins=False):
        out = dict((name, []) for name, _t, _h in FAMILIES)
        out["gpudirect_job_watch_info"].append(((("standins", "true" if standins else "false"),), 1))
        out["gpudirect_job_watch_last_poll_timestamp_seconds"].append(((), float(round(now_wall, 3))))
        out["gpudirect_job_ras_up"].append(((), self.ras_up))
        out["gpudirect_job_watch_check_failed"].append(((), self.problem is not None))
        out["gpudirect_job_events_read"].append(((), self.monitor is not None))
        job = self.job or ""
        for comm, stalled in sorted(self.stalled.items()):
            out["gpudirect_job_stalled_seconds"].append(((("slurm_job", job), ("comm", comm)), float(round(stalled, 1))))
        for verdict in self.current():
            if verdict["kind"] == "stuck":
                out["gpudirect_job_stuck"].append(((("slurm_job", job), ("comm", verdict["comm"])), 1))
                continue
            for rank, host in verdict["members"]:
                labels = (("slurm_job", job), ("comm", verdict["comm"] or ""),
                          ("rank", "" if rank is None else str(rank)), ("host", self.names.get(host, host)))
                out[_BY_KIND[verdict["kind"]]].append((labels, 1))
        if self.inspector is not None:
            out["gpudirect_job_inspector_files"].append(((), self.inspector["files"]))
            out["gpudirect_job_inspector_skipped_lines"].append(((), self.inspector["skipped_lines"]))
            out["gpudirect_job_inspector_skipped_series"].append(((), self.inspector.get("skipped_series", 0)))
            for row in self.inspector["bandwidth"]:
                labels = (("slurm_job", row["job"]), ("comm", row["comm"]), ("collective", row["collective"]),
                          ("message_size", row["message_size"]))
                out["gpudirect_job_bus_bandwidth_gbs"].append((labels, float(row["gbs"])))
            for row in self.inspector.get("slow_gpus") or []:
                labels = (("slurm_job", row["job"]), ("comm", row["comm"]), ("collective", row["collective"]),
                          ("message_size", row["message_size"]), ("gpu", row["gpu"]))
                out["gpudirect_job_slow_gpu"].append((labels, float(row["ratio"])))
        return prom_text.render(FAMILIES, out)
