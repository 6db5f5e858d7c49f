# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one loop that watches a job through NCCL RAS: its parameters (interval, window, a read at the window's
end, what is done with each status, activity sampling) on a scripted clock, and every watcher going through it:
the node agent's job watch, nccl_job_status and nccl_job_evidence."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import job_watch, nccl_job_evidence, nccl_job_status
from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_ras
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.job.test_nccl_ras_hostile import (  # noqa: F401 pylint: disable=unused-import
    status_doc)

SPIN = {"state": "spin", "gpus": [0, 1], "detail": "GPUs 0, 1 at 100% utilization and 18% of the power limit"}


class Clock(object):
    """Time that passes only when the code under test waits (or a read says it took long)."""

    def __init__(self):
        self.now = 0.0
        self.waits = []

    def __call__(self):
        return self.now

    def wait(self, seconds):
        self.waits.append(seconds)
        self.now += seconds


def reader(clock, took=(), stop_at=None):
    """read() recording when each read started; took[n]: seconds the nth read lasts."""
    starts = []

    def read():
        starts.append(clock.now)
        clock.now += took[len(starts) - 1] if len(starts) <= len(took) else 0.0
        return stop_at is None or len(starts) < stop_at
    return read, starts


@pytest.mark.parametrize("kwargs,expected", [
    ({"window_s": 5, "read_at_end": True}, [0, 2, 4, 5]),         # a module: the window's end gets a read
    ({"window_s": 5}, [0, 2, 4]),                                # the agent with --watch-for: it ends there
    ({"window_s": 0, "read_at_end": True}, [0]),                  # watch_s 0: one read
    ({"window_s": 5, "read_at_end": True, "took": (3,)}, [0, 5]),
    # the window counts from the end of a first read that took 3 s
    ({"window_s": 5, "read_at_end": True, "window_after_first_read": True, "took": (3,)}, [0, 5, 7, 8]),
])
def test_the_window_and_its_end_are_parameters(kwargs, expected):
    clock = Clock()
    read, starts = reader(clock, kwargs.pop("took", ()))
    job_watch.loop(read, 2, clock=clock, wait=clock.wait, **kwargs)
    assert starts == expected


def test_without_a_window_the_watch_runs_until_a_read_ends_it():
    clock = Clock()
    read, starts = reader(clock, stop_at=4)
    job_watch.loop(read, 10, clock=clock, wait=clock.wait)
    assert starts == [0, 10, 20, 30]


def test_a_wait_that_returns_early_is_called_again_for_the_rest():
    clock = Clock()
    read, starts = reader(clock)

    def short_wait(seconds):  # the agent's wait returns at each event of RAS's stream
        clock.wait(min(seconds, 0.75))
    job_watch.loop(read, 2, clock=clock, wait=short_wait, window_s=4, read_at_end=True)
    assert starts == [0, 2, 4]
    assert clock.waits == [0.75, 0.75, 0.5] * 2


def _params(**kw):
    return dict({"host": "127.0.0.1", "port": 1, "timeout_s": 1.0, "ras_wait_s": None, "names": {},
                 "watch_s": 3.0, "interval_s": 1.0, "hang_threshold_s": 2.0}, **kw)


@pytest.mark.parametrize("activity,state,kinds", [(None, "ok", []), (lambda pids: SPIN, "faulty", ["stuck"])])
def test_activity_sampling_is_a_parameter_of_the_window_watch_too(activity, state, kinds):
    clock = Clock()
    agreeing = status_doc([0, 1], count=lambda n: 1000)
    watch = job_watch.WindowWatch(lambda **kw: agreeing, _params(), 2.0, clock=clock, activity=activity)
    watch.run(1.0, 3.0, sleep=clock.wait)
    assert watch.reads == 4 and watch.state() == state
    assert [v["kind"] for v in watch.verdicts] == kinds


def test_a_raising_sampler_is_a_lost_sample_not_a_failed_read():
    def broken(pids):
        raise OSError("nvidia-smi went away")
    clock = Clock()
    watch = job_watch.WindowWatch(lambda **kw: status_doc([0, 1]), _params(), 2.0, clock=clock, activity=broken)
    watch.run(1.0, 1.0, sleep=clock.wait)
    assert watch.reads == 2 and watch.error is None and watch.state() == "ok"


class _Bundle(object):
    def __init__(self):
        self.parts = {}

    def put(self, part, name, text):
        self.parts.setdefault(part, []).append(name)

    def lack(self, part, why):
        self.parts.setdefault(part, []).append("lacks: " + why)


def test_every_watcher_goes_through_the_one_loop(monkeypatch):
    calls = []
    real = job_watch.loop

    def spy(read, interval_s, **kwargs):
        calls.append((interval_s, kwargs.get("window_s"), kwargs.get("read_at_end", False),
                      kwargs.get("window_after_first_read", False)))
        return real(read, interval_s, **kwargs)
    monkeypatch.setattr(job_watch, "loop", spy)

    def ask(**_kw):
        return status_doc([0, 1], count=lambda n: 1000)

    clock = Clock()
    result = nccl_job_status.watch(_params(watch_s=2.0, interval_s=1.0), clock=clock, sleep=clock.wait, ask=ask)
    assert result["state"] == "ok" and result["reads"] == 3

    clock = Clock()
    bundle = _Bundle()
    summary, _comms, _verdicts = nccl_job_evidence.read_ras(_params(watch_s=2.0, interval_s=1.5), ask, clock,
                                                            clock.wait, bundle)
    assert summary["reads"] == 3 and bundle.parts["ras"] == ["ras/status-first.json", "ras/status-last.json"]

    def no_monitor(**_kw):
        raise nccl_ras.RasError("NCCL before 2.29 has no event stream")
    published = []
    agent = job_watch.JobWatch(status=ask, monitor=no_monitor)
    agent.run(0.01, 0.05, publish=lambda: published.append(agent.ras_up))
    assert published and all(published)

    assert calls == [(1.0, 2.0, True, False), (1.5, 2.0, True, True), (0.01, 0.05, False, False)]
