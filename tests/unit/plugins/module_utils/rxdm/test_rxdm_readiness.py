# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.rxdm import rxdm_readiness as rr

READY = "Buffer manager initialization complete"


class Clock(object):
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, s):
        self.now += s


class FakeRxdm(object):
    """A container that starts at `start_at`, is replaced at `restart_at`, and is ready `ready_after` s after starting."""

    def __init__(self, clock, start_at=0, ready_after=4, health=True, log=True, restart_at=None):
        self.clock, self.start_at, self.ready_after = clock, start_at, ready_after
        self.health, self.log, self.restart_at = health, log, restart_at

    def _cid(self):
        if self.restart_at is not None and self.clock.now >= self.restart_at:
            return "c2", self.restart_at
        return "c1", self.start_at

    def __call__(self, argv):
        verb = argv[1]
        if self.clock.now < self.start_at:
            return 125, "", "Error: no such container receive-datapath-manager"
        cid, since = self._cid()
        ready = self.clock.now - since >= self.ready_after
        if verb == "inspect":
            return 0, "true %s 2026-11-22T15:00:%02dZ\n" % (cid, since), ""
        if verb == "cp":
            if self.health and ready:
                with open(argv[3], "w") as fh:
                    fh.write("I1122 fastrak_gpumem_manager.cu.cc:284] %s.\n" % READY)
                return 0, "", ""
            return 125, "", "Error: \"/run/health-check\" could not be found on container"
        if verb == "logs":
            lines = ["STAND-IN banner", "I1122 starting"] + (["I1122 %s." % READY] if self.log and ready else [])
            return 0, "\n".join(lines) + "\n", ""
        raise AssertionError(argv)


def test_ready_from_health_check_file():
    clock = Clock()
    res = rr.wait_ready(FakeRxdm(clock), "docker", "receive-datapath-manager", "/run/health-check", READY,
                        timeout_s=60, clock=clock, sleep=clock.sleep)
    assert res["ready"] and res["source"] == "health_check_file" and res["container_id"] == "c1"
    assert 4 <= res["elapsed_s"] <= 6


def test_ready_from_log_line_when_no_file():
    clock = Clock()
    res = rr.wait_ready(FakeRxdm(clock, health=False), "docker", "rxdm", "/run/health-check", READY,
                        timeout_s=60, clock=clock, sleep=clock.sleep)
    assert res["ready"] and res["source"] == "log"


def test_waits_for_a_container_that_systemd_has_not_started_yet():
    clock = Clock()
    res = rr.wait_ready(FakeRxdm(clock, start_at=6), "docker", "rxdm", None, READY, timeout_s=60,
                        clock=clock, sleep=clock.sleep)
    assert res["ready"] and res["elapsed_s"] >= 10


def test_timeout_reports_why():
    clock = Clock()
    res = rr.wait_ready(FakeRxdm(clock, ready_after=999), "docker", "rxdm", "/run/health-check", READY,
                        timeout_s=10, clock=clock, sleep=clock.sleep)
    assert not res["ready"]
    assert "has not signalled readiness (health-check file /run/health-check or log line" in res["reason"]
    clock = Clock()
    res = rr.wait_ready(FakeRxdm(clock, start_at=999), "docker", "rxdm", None, READY, timeout_s=10,
                        clock=clock, sleep=clock.sleep)
    assert not res["ready"] and res["reason"] == "container rxdm is not running"


def test_tcpx_settle_time_restarts_when_the_container_is_replaced():
    clock = Clock()
    fake = FakeRxdm(clock, health=False, log=False, restart_at=6)
    res = rr.wait_ready(fake, "docker", "rxdm", None, None, settle_s=10, timeout_s=60, clock=clock, sleep=clock.sleep)
    assert res["ready"] and res["source"] == "running" and res["container_id"] == "c2"
    assert res["elapsed_s"] >= 16


def test_last_log_lines_fall_back_to_the_journal():
    def run(argv):
        if argv[0] == "journalctl":
            assert argv[-2:] == ["-u", "receive-datapath-manager.service"]
            return 0, "a\nb\nc\n", ""
        return 125, "", ""
    assert rr.last_log_lines(run, "docker", "rxdm", 2, "receive-datapath-manager.service") == ["b", "c"]
    assert rr.last_log_lines(FakeRxdm(Clock()), "docker", "rxdm", 1) == ["I1122 starting"]


def test_the_engines_error_for_a_gone_container_is_no_log_line():
    def run(argv):
        if argv[0] == "journalctl":
            return 1, "", "No journal files were found.\n"
        return 1, "", "Error: no such container receive-datapath-manager\n"
    assert rr.last_log_lines(run, "docker", "rxdm", 5, "receive-datapath-manager.service") == []
