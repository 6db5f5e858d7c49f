# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node agent's watch of the NCCL job running on the node, and its Prometheus metrics.

Each poll asks NCCL RAS for the job's status (nccl_ras.HangWatch judges hangs over successive
polls), and, where an activity sampler is given, what the job's GPUs do (gpu_activity: spinning GPUs
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
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl import nccl_inspector, nccl_ras

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
        activity = None
        if self.activity is not None:
            try:
                activity = self.activity([rank["pid"] for comm in comms for rank in comm["ranks"]])
            except Exception:  # pylint: disable=broad-except
                activity = None  # a lost sample neither starts nor stops a clock
        self.verdicts = self.hangs.observe(now, comms, job=self.job, activity=activity)
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
