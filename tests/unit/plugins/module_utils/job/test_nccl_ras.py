# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL RAS read over a real socket from the RAS stand-in, and the hang judgment over time."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import socket
import threading
import time

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_ras
from ansible_collections.gpudirect.gcp.tests.unit.standins.ras_standin import (  # noqa: F401 pylint: disable=unused-import
    ras)


def test_a_status_is_read_through_the_handshake_and_checked(ras):
    port = ras()
    doc = nccl_ras.status(port=port, wait_s=5)
    assert "STAND-IN" in doc["nccl_version"]
    comms = nccl_ras.snapshot(doc)
    assert [(c["hash"], c["size"], len(c["ranks"]), c["missing"]) for c in comms] == [("0x7f3a", 32, 32, [])]
    assert comms[0]["ranks"][9]["host"] == "10.0.0.3" and comms[0]["ranks"][9]["counts"]["AllReduce"] > 0


def test_a_job_at_work_is_not_a_hang_however_long_it_runs(ras):
    port = ras()
    watch = nccl_ras.HangWatch(threshold_s=0.2)
    verdicts = []
    for step in range(6):
        verdicts += watch.observe(time.monotonic(), nccl_ras.snapshot(nccl_ras.status(port=port)))
        time.sleep(0.1)
    assert verdicts == []


def test_a_hang_names_the_rank_behind_and_its_node_once_the_threshold_passed(ras):
    port = ras(hang_at=0.0, odd_rank=13)
    watch = nccl_ras.HangWatch(threshold_s=0.5, names={"10.0.0.3": "a3m-node-1"})
    first = time.monotonic()
    assert watch.observe(first, nccl_ras.snapshot(nccl_ras.status(port=port)), job="4242") == []
    verdicts = watch.observe(first + 0.4, nccl_ras.snapshot(nccl_ras.status(port=port)), job="4242")
    assert verdicts == []  # stalled, but not yet for the threshold
    verdicts = watch.observe(first + 0.6, nccl_ras.snapshot(nccl_ras.status(port=port)), job="4242")
    assert [(v["kind"], v["ranks"], v["hosts"], v["job"]) for v in verdicts] == [("hang", [13], ["10.0.0.3"], "4242")]
    cause = verdicts[0]["finding"]["cause"]
    assert "rank 13 on a3m-node-1 (10.0.0.3) issued AllReduce 0 where the others reached 1" in cause
    assert "of job 4242" in cause and verdicts[0]["finding"]["component"] == "job"


def test_a_rank_ras_considers_dead_is_named_at_once(ras):
    port = ras(dead_at=0.0, dead_rank=30)
    verdicts = nccl_ras.HangWatch().observe(0.0, nccl_ras.snapshot(nccl_ras.status(port=port)))
    assert [(v["kind"], v["ranks"], v["hosts"], v["finding"]["severity"]) for v in verdicts] == [
        ("dead_rank", [30], ["10.0.0.5"], "fail")]


def test_the_event_stream_names_a_dead_peer_within_a_second_of_its_death(ras):
    port = ras(dead_at=0.5, dead_rank=20)
    monitor = nccl_ras.Monitor(port=port)
    started, verdicts = time.monotonic(), []
    try:
        while not verdicts and time.monotonic() - started < 5:
            verdicts = [v for v in (nccl_ras.dead_peer(e) for e in monitor.read(wait_s=0.1)) if v]
    finally:
        monitor.close()
    assert [(v["kind"], v["hosts"]) for v in verdicts] == [("dead_peer", ["10.0.0.4"])]
    assert time.monotonic() - started < 1.5
    assert "process 4020 on 10.0.0.4 dead" in verdicts[0]["finding"]["cause"]


def test_what_is_not_ras_is_one_line_naming_the_address():
    with pytest.raises(nccl_ras.RasError, match=r"no NCCL RAS service at 127\.0\.0\.1:1 "):
        nccl_ras.status(port=1, timeout=2)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def answer_http():
        conn, _addr = listener.accept()
        conn.recv(100)
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\n")
        conn.close()

    threading.Thread(target=answer_http, daemon=True).start()
    with pytest.raises(nccl_ras.RasError, match="is not NCCL RAS: it answered 'HTTP/1.1 400 Bad Request'"):
        nccl_ras.status(port=listener.getsockname()[1], timeout=2)
    listener.close()


def test_an_nccl_without_json_or_events_is_named_by_what_it_lacks(ras):
    port = ras()
    conn = nccl_ras.Connection(port=port)
    with pytest.raises(nccl_ras.RasError, match="refused 'SET FORMAT yaml'.*Invalid format yaml.*before 2.28.7"):
        conn.command("SET FORMAT yaml", "NCCL before 2.28.7 has no JSON status")
    with pytest.raises(nccl_ras.RasError, match="refused 'MONITOR nosuch'.*Invalid event group"):
        conn.command("MONITOR nosuch", "NCCL before 2.29 has no event stream")
    conn.close()


def test_the_event_stream_is_split_at_the_closing_brace_and_a_broken_event_costs_only_itself():
    good = '{\n  "event": "PEER_DEAD",\n  "peer": {\n    "host": "10.0.0.9"\n  },\n  "details": ""\n}\n'
    broken = '{\n  "event": "PEER_DEAD",\n  "details": "a "quoted" word"\n}\n'
    events, rest, bad = nccl_ras.split_events(good + broken + good + '{\n  "event": "PEER_')
    assert [e["peer"]["host"] for e in events] == ["10.0.0.9", "10.0.0.9"]
    assert bad == 1 and rest == '{\n  "event": "PEER_'
    events, rest, bad = nccl_ras.split_events("x" * (nccl_ras.MAX_EVENT_BYTES + 1))
    assert (events, rest, bad) == ([], "", 1)


@pytest.mark.parametrize("doc,message", [
    ([], "the RAS status is not a JSON object"),
    ({"communicators": {}}, "has no communicators list"),
    ({"communicators": [{"size": 2}]}, r"communicators\[0\] has no hash"),
    ({"communicators": [{"hash": "0x1", "ranks": [{"rank": "3"}]}]}, r"communicators\[0\]\.ranks\[0\]\.rank is '3'"),
    ({"communicators": [{"hash": "0x1", "ranks": [{"rank": 0, "collective_counts": {"AllReduce": None}}]}]},
     r"ranks\[0\]\.collective_counts\.AllReduce is None"),
    ({"communicators": [{"hash": "0x1", "missing_ranks": ["x"]}]}, r"missing_ranks\[0\] is not an object"),
])
def test_a_malformed_status_names_the_field_at_fault(doc, message):
    with pytest.raises(ValueError, match=message):
        nccl_ras.snapshot(doc)


def _comm(counts, errors=None):
    return [{"hash": "0xa", "size": len(counts), "missing": [],
             "ranks": [{"rank": n, "host": "10.0.0.%d" % n, "pid": n, "cuda_dev": 0, "counts": {"AllReduce": c},
                        "error": (errors or {}).get(n, 0), "init": 0, "aborted": False}
                       for n, c in enumerate(counts)]}]


def test_agreeing_ranks_that_wait_between_steps_are_no_hang_and_an_ended_job_is_forgotten():
    watch = nccl_ras.HangWatch(threshold_s=10)
    assert watch.observe(0, _comm([5, 5, 5])) == []
    assert watch.observe(100, _comm([5, 5, 5])) == []
    assert watch.observe(101, []) == [] and watch.seen == {}
    assert watch.observe(102, _comm([5, 4, 5])) == []  # a new communicator starts its own clock


def test_the_minority_is_the_odd_rank_whichever_way_it_differs():
    watch = nccl_ras.HangWatch(threshold_s=10)
    watch.observe(0, _comm([7, 7, 8, 7]))
    verdicts = watch.observe(10, _comm([7, 7, 8, 7]))
    assert verdicts[0]["ranks"] == [2]
    assert "issued AllReduce 8 where the others reached 7" in verdicts[0]["finding"]["cause"]


def test_a_rank_holding_an_nccl_error_is_named_and_in_progress_is_not_an_error():
    verdicts = nccl_ras.HangWatch().observe(0, _comm([1, 1, 1], errors={1: 7, 2: 6}))
    assert [(v["kind"], v["ranks"]) for v in verdicts] == [("rank_error", [2])]
    assert "holds NCCL error 6" in verdicts[0]["finding"]["cause"]


def test_a_dead_peer_event_of_any_shape_is_one_verdict_and_other_events_none():
    assert nccl_ras.dead_peer({"event": "PEER_NEW", "peer": {"host": "10.0.0.1"}}) is None
    assert nccl_ras.dead_peer("junk") is None
    verdict = nccl_ras.dead_peer({"event": "PEER_DEAD", "peer": {"addr": "10.0.0.7:4000"}, "timestamp": "t\nx"})
    assert verdict["hosts"] == ["10.0.0.7:4000"]
    assert "\n" not in verdict["finding"]["cause"]


def test_the_slurm_job_comes_from_a_rank_process_environment_and_nothing_else_is_kept(tmp_path):
    for pid, environ in ((41, b"PATH=/bin\0HF_TOKEN=hf_secret\0"),
                         (42, b"HF_TOKEN=hf_secret\0SLURM_JOB_ID=4242\0SLURM_PROCID=3\0")):
        (tmp_path / "proc" / str(pid)).mkdir(parents=True)
        (tmp_path / "proc" / str(pid) / "environ").write_bytes(environ)
    assert nccl_ras.slurm_job_of([True, -1, 40, 41, 42], root=str(tmp_path)) == "4242"
    assert nccl_ras.slurm_job_of([41], root=str(tmp_path)) is None
    (tmp_path / "proc" / "43").mkdir()
    (tmp_path / "proc" / "43" / "environ").write_bytes(b"SLURM_JOB_ID=$(reboot)\0")
    assert nccl_ras.slurm_job_of([43], root=str(tmp_path)) is None
