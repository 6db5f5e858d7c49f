# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node agent's job watch against answers it cannot read: it records that it could not check the
job, says so once, and carries on; its service does not restart for ever."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import json
import os
import subprocess
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import job_watch
from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_ras
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.job.test_nccl_ras_hostile import (  # noqa: F401 pylint: disable=unused-import
    hostile, once, status_doc)
from ansible_collections.gpudirect.gcp.tests.unit.roles.test_node_health_agent import (
    AGENT, NODE_PYTHON, config, job_watch_unit, lib_dir)


class Clock(object):
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def scripted(answers):
    """A RAS status client that gives the answers in turn, raising those that are exceptions."""
    def status(**_kw):
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer
    return status


def no_monitor(**_kw):
    raise nccl_ras.RasError("NCCL before 2.29 has no event stream")


def test_an_answer_the_watch_did_not_foresee_is_recorded_told_once_and_the_watch_carries_on():
    answers = [OverflowError("cannot convert float infinity to integer")] * 2 + [status_doc([0, 1])]
    watch = job_watch.JobWatch(status=scripted(answers), monitor=no_monitor, clock=Clock())
    assert watch.poll() is False
    assert watch.news() == ["could not check the job: OverflowError: cannot convert float infinity to integer"]
    text = watch.metrics(0.0)
    assert "gpudirect_job_watch_check_failed 1" in text and "gpudirect_job_ras_up 0" in text
    assert watch.poll() is False and watch.news() == []  # told once, not at every poll
    assert watch.poll() is True and watch.news() == []
    assert "gpudirect_job_watch_check_failed 0" in watch.metrics(0.0)


def test_a_malformed_status_names_its_field_and_no_job_is_no_failure():
    doc = status_doc([0, 1])
    doc["communicators"][0]["ranks"][1]["collective_counts"]["AllReduce"] = float("nan")
    answers = [doc, nccl_ras.NoRas("no NCCL RAS service at 127.0.0.1:1")]
    watch = job_watch.JobWatch(status=scripted(answers), monitor=no_monitor, clock=Clock())
    assert watch.poll() is False
    assert watch.news() == ["could not check the job: NCCL RAS's status: "
                            "communicators[0].ranks[1].collective_counts.AllReduce is nan, not a finite number"]
    assert watch.poll() is False and watch.problem is None
    assert "gpudirect_job_watch_check_failed 0" in watch.metrics(0.0)


def test_a_deep_status_over_a_real_socket_is_could_not_check(hostile):
    server = hostile(status=once(b"[" * 100000))
    watch = job_watch.JobWatch(port=server.port)
    assert watch.poll() is False
    assert "nested deeper than 32" in watch.problem


class Stream(object):
    """An event stream that select() always finds readable (/dev/null); read() is the test's."""

    def __init__(self):
        self.fd, self.closed = os.open(os.devnull, os.O_RDONLY), False

    def fileno(self):
        return self.fd

    def close(self):
        if not self.closed:
            os.close(self.fd)
        self.closed = True


class BrokenStream(Stream):
    def __init__(self, error):
        Stream.__init__(self)
        self.error = error

    def read(self, wait_s=0.0):
        raise self.error


def test_an_event_stream_the_watch_cannot_read_is_closed_and_the_watch_carries_on():
    watch = job_watch.JobWatch(status=lambda **kw: status_doc([0]), monitor=lambda **kw: stream, clock=Clock())
    stream = BrokenStream(RecursionError("maximum recursion depth exceeded"))
    assert watch.poll() is True and watch.monitor is stream
    assert watch.wait(1.0) is False
    assert stream.closed and watch.monitor is None
    stream.close()


def test_a_flood_of_dead_peers_is_bounded():
    class Flood(Stream):
        sent = 0

        def read(self, wait_s=0.0):
            self.sent += 1
            return [{"event": "PEER_DEAD", "peer": {"host": "10.9.%d.%d" % (self.sent // 250, self.sent % 250)}}]
    flood = Flood()
    watch = job_watch.JobWatch(status=lambda **kw: status_doc([0]), monitor=lambda **kw: flood)
    watch.poll()
    for _n in range(2000):
        watch.wait(0.5)
    flood.close()
    assert flood.sent == 2000 and len(watch.dead_peers) == job_watch.MAX_DEAD_PEERS
    assert len(watch.news()) == job_watch.MAX_DEAD_PEERS


def load_agent():
    spec = importlib.util.spec_from_file_location("gpudirect_health_agent", AGENT)
    agent = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent)
    return agent


def test_the_agent_loop_records_a_failure_the_watch_let_through_and_carries_on(tmp_path, monkeypatch, capsys):
    from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
    from ansible_collections.gpudirect.gcp.plugins.module_utils.health import health_metrics
    agent = load_agent()
    polls = []

    def broken_poll(self):
        polls.append(1)
        raise KeyError("communicators")
    monkeypatch.setattr(job_watch.JobWatch, "poll", broken_poll)
    monkeypatch.setattr(agent.signal, "signal", lambda *args: None)  # pytest keeps its own SIGTERM
    args = agent.parse_args(["--watch-jobs", "--ras-port", "1", "--poll", "0.2", "--watch-for", "1",
                             "--textfile-dir", str(tmp_path)])
    from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import gpu_activity
    assert agent.watch_jobs(args, config(), health_metrics, safe_text, job_watch, gpu_activity) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(polls) >= 3
    assert lines == ["gpudirect-health: job: could not check the job: KeyError: 'communicators' "
                     "(SANDBOX: stand-ins, not Google Cloud)"]
    assert "gpudirect_job_watch_check_failed 1" in (tmp_path / job_watch_metrics()).read_text()


def job_watch_metrics():
    return "gpudirect_job_watch.prom"


def test_the_agent_as_its_service_runs_it_carries_on_past_a_deep_status(tmp_path, hostile):
    server = hostile(status=once(b'{"communicators": ' + b"[" * 100000))
    config_path = tmp_path / "health.json"
    config_path.write_text(json.dumps(config()))
    (tmp_path / "textfile").mkdir()
    env = dict(os.environ, PATH="/usr/bin:/bin")
    env.pop("PYTHONPATH", None)
    started = time.monotonic()
    proc = subprocess.run([NODE_PYTHON, AGENT, "--config", str(config_path), "--lib", lib_dir(tmp_path),
                           "--watch-jobs", "--ras-port", str(server.port), "--textfile-dir", str(tmp_path / "textfile"),
                           "--poll", "0.3", "--watch-for", "1.5"],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert time.monotonic() - started < 30
    assert proc.stdout.splitlines() == [
        "gpudirect-health: job: could not check the job: NCCL RAS at 127.0.0.1:%d sent a status that is not JSON as "
        "RAS writes it (it is nested deeper than 32): {\"communicators\": %s... (SANDBOX: stand-ins, not Google Cloud)"
        % (server.port, "[" * 99)]
    text = (tmp_path / "textfile" / job_watch_metrics()).read_text()
    assert "gpudirect_job_watch_check_failed 1" in text and "gpudirect_job_ras_up 0" in text


def test_the_job_watch_unit_does_not_restart_for_ever():
    unit = job_watch_unit()
    sections, current = {}, None
    for line in unit.splitlines():
        if line.startswith("["):
            current = sections.setdefault(line, [])
        elif current is not None and "=" in line and not line.startswith("#"):
            current.append(line)
    # an unusable config or code (exit 2) is not started again; any other exit is, a few times
    assert "RestartPreventExitStatus=2" in sections["[Service]"]
    assert "StartLimitIntervalSec=600" in sections["[Unit]"] and "StartLimitBurst=5" in sections["[Unit]"]
    assert "Restart=always" in sections["[Service]"] and "RestartSec=10" in sections["[Service]"]
