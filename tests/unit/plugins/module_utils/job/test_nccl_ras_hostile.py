# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The RAS client against answers the job itself writes: slow, endless, deep, huge or malformed.

Each server here is a real socket on 127.0.0.1 that speaks RAS's handshake and then misbehaves."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import socket
import threading
import time

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_ras


def greet(conn, stop):
    conn.sendall(b"SERVER PROTOCOL 2\n")


def trickle(data, every_s):
    """An answer sent one byte at a time, every_s apart (until the client goes or the test ends)."""
    def send(conn, stop):
        for byte in data:
            if stop.wait(every_s):
                return
            conn.sendall(bytes(bytearray([byte])))
    return send


def flood(head, body, tail=b""):
    """head, then body over and over for as long as the client reads (an endless answer)."""
    def send(conn, stop):
        conn.sendall(head)
        while not stop.is_set():
            conn.sendall(body)
        conn.sendall(tail)
    return send


def once(data):
    def send(conn, stop):
        conn.sendall(data)
    return send


class Hostile(object):
    """A RAS look-alike: greeting answers the handshake, status the STATUS command, events follow
    MONITOR's OK; every other command is answered OK."""

    def __init__(self, status=None, greeting=greet, events=None):
        self.status, self.greeting, self.events = status, greeting, events
        self.stop = threading.Event()
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while not self.stop.is_set():
            try:
                conn, _addr = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        try:
            reader = conn.makefile("rb")
            for raw in reader:
                line = raw.decode("ascii", "replace").strip()
                if line.startswith("CLIENT PROTOCOL"):
                    self.greeting(conn, self.stop)
                elif line == "STATUS":
                    self.status(conn, self.stop)
                    return
                elif line.startswith("MONITOR"):
                    conn.sendall(b"OK\n")
                    self.events(conn, self.stop)
                    self.stop.wait(30)  # an event stream stays open
                    return
                else:
                    conn.sendall(b"OK\n")
        except OSError:
            pass
        finally:
            conn.close()

    def close(self):
        self.stop.set()
        self.listener.close()


@pytest.fixture
def hostile():
    """hostile(**behaviour) starts a Hostile server and returns it; all stop after the test."""
    servers = []

    def start(**behaviour):
        servers.append(Hostile(**behaviour))
        return servers[-1]
    yield start
    for server in servers:
        server.close()


def status_doc(ranks, count=lambda n: 1000 + n, comm="0xbad"):
    return {"nccl_version": "2.29.7", "communicators": [{
        "hash": comm, "size": len(ranks),
        "ranks": [{"rank": n, "host": "10.0.%d.%d" % (n // 250, n % 250), "pid": 1000 + n, "cuda_dev": n % 8,
                   "collective_counts": {"AllReduce": count(n)}, "status": {"async_error": 0, "init_state": 0}}
                  for n in ranks],
        "missing_ranks": []}]}


# A. deadlines: per exchange, not per read


def test_a_status_trickled_a_byte_a_second_is_cut_at_the_exchange_deadline(hostile):
    server = hostile(status=trickle(b'{"communicators": []' + b" " * 200 + b"}", 0.05))
    started = time.monotonic()
    with pytest.raises(nccl_ras.RasError, match=r"did not answer 'STATUS' within 1 s"):
        nccl_ras.status(port=server.port, timeout=1.0)
    assert time.monotonic() - started < 4


def test_a_handshake_trickled_is_cut_at_the_same_deadline(hostile):
    server = hostile(greeting=trickle(b"SERVER PROTOCOL 2\n", 0.4), status=once(json.dumps(status_doc([0])).encode()))
    started = time.monotonic()
    with pytest.raises(nccl_ras.RasError, match=r"did not answer 'CLIENT PROTOCOL 2' within 1 s"):
        nccl_ras.status(port=server.port, timeout=1.0)
    assert time.monotonic() - started < 4


def test_a_monitor_handshake_trickled_is_cut_at_its_deadline(hostile):
    server = hostile(greeting=trickle(b"SERVER PROTOCOL 2\n", 0.4))
    with pytest.raises(nccl_ras.RasError, match="within 1 s"):
        nccl_ras.Monitor(port=server.port, timeout=1.0)


# A. limits on a line and on the whole answer


def test_an_endless_handshake_line_is_cut_at_the_line_limit(hostile):
    server = hostile(greeting=flood(b"SERVER PROTOCOL ", b"x" * 4096))
    with pytest.raises(nccl_ras.RasError, match="over 4096 bytes without a newline"):
        nccl_ras.status(port=server.port, timeout=5)


def test_an_endless_status_is_cut_at_the_size_limit(hostile, monkeypatch):
    monkeypatch.setattr(nccl_ras, "MAX_STATUS_BYTES", 1024 * 1024)
    server = hostile(status=flood(b'{"communicators": [', b"0," * 4096))
    with pytest.raises(nccl_ras.RasError, match="sent over 1048576 bytes of status"):
        nccl_ras.status(port=server.port, timeout=10)


# A. limits on what is parsed: nesting depth and item count


@pytest.mark.parametrize("text", [
    b"[" * 200000, b'{"a":' * 100000, b'{"communicators": ' + b"[" * 5000 + b"]" * 5000 + b"}"])
def test_deep_json_is_a_malformed_answer_in_one_line_not_a_crash(hostile, text):
    server = hostile(status=once(text))
    with pytest.raises(nccl_ras.RasError) as caught:
        nccl_ras.status(port=server.port, timeout=5)
    assert "nested deeper than %d" % nccl_ras.MAX_DEPTH in str(caught.value) and "\n" not in str(caught.value)


def test_a_status_of_millions_of_items_is_refused_before_it_is_built(hostile):
    server = hostile(status=once(b'{"communicators": [' + b"0," * 5000000 + b"0]}"))
    with pytest.raises(nccl_ras.RasError, match="over %d items" % nccl_ras.MAX_ITEMS):
        nccl_ras.status(port=server.port, timeout=20)


def test_quotes_brackets_and_escapes_inside_strings_are_text_not_structure(hostile):
    doc = status_doc([0, 1])
    doc["communicators"][0]["ranks"][0]["host"] = '[[[[{{{{"\\' * 1000
    server = hostile(status=once(json.dumps(doc).encode()))
    assert nccl_ras.status(port=server.port, timeout=5) == doc


def test_an_unterminated_string_of_escaped_quotes_is_malformed_and_read_once(hostile):
    # '"\"\"\"...': every quote is escaped; a scan that retried from each one would be quadratic
    server = hostile(status=once(b'{"x": "' + b'\\"' * 2000000))
    with pytest.raises(nccl_ras.RasError, match="not JSON"):
        nccl_ras.status(port=server.port, timeout=20)


def test_the_event_stream_skips_a_deep_event_and_keeps_the_next_one(hostile):
    dead = {"event": "PEER_DEAD", "peer": {"host": "10.0.0.9", "pid": 7}, "timestamp": "t"}
    deep = b"[" * 30000 + b"\n}\n"
    server = hostile(events=once(deep + json.dumps(dead, indent=1).encode() + b"\n"))
    monitor = nccl_ras.Monitor(port=server.port, timeout=5)
    events, started = [], time.monotonic()
    try:
        while not events and time.monotonic() - started < 5:
            events = monitor.read(wait_s=0.2)
    finally:
        monitor.close()
    assert events == [dead] and monitor.bad == 1


def test_split_events_counts_a_deep_event_as_bad_not_a_crash():
    events, rest, bad = nccl_ras.split_events("{" + '"a": [' * 20000 + "\n}\n")
    assert (events, rest, bad) == ([], "", 1)


# A. numbers: non-finite or out of range is a malformed answer naming the field


@pytest.mark.parametrize("value,shown", [
    ("NaN", "nan"), ("Infinity", "inf"), ("-Infinity", "-inf"), ("1e400", "inf"), ("-5", "-5"),
    ("1" + "0" * 30, "1" + "0" * 30), ("2.5", "2.5"),
])
def test_a_count_that_is_not_a_finite_count_names_its_field_in_one_line(hostile, value, shown):
    text = json.dumps(status_doc([0, 1])).replace('"AllReduce": 1001', '"AllReduce": %s' % value)
    server = hostile(status=once(text.encode()))
    doc = nccl_ras.status(port=server.port, timeout=5)
    with pytest.raises(ValueError) as caught:
        nccl_ras.snapshot(doc)
    message = str(caught.value)
    assert message.startswith("communicators[0].ranks[1].collective_counts.AllReduce is %s" % shown[:40])
    assert "\n" not in message and len(message) < 300


@pytest.mark.parametrize("field,value,message", [
    ("rank", -1, r"ranks\[0\]\.rank is -1, out of range"),
    ("rank", 2 ** 40, r"ranks\[0\]\.rank is 1099511627776, out of range"),
    ("pid", 2 ** 64, r"ranks\[0\]\.pid is 18446744073709551616, out of range"),
    ("cuda_dev", float("nan"), r"ranks\[0\]\.cuda_dev is nan, not a finite number"),
    ("status", "broken", r"ranks\[0\]\.status is not an object"),
    ("collective_counts", ["x"], r"ranks\[0\]\.collective_counts is not an object"),
])
def test_a_rank_field_out_of_range_or_of_the_wrong_shape_is_named(field, value, message):
    doc = status_doc([0])
    doc["communicators"][0]["ranks"][0][field] = value
    with pytest.raises(ValueError, match=message):
        nccl_ras.snapshot(doc)


@pytest.mark.parametrize("change,message", [
    (lambda comm: comm.update(ranks=5), r"communicators\[0\]\.ranks is not a list"),
    (lambda comm: comm.update(missing_ranks="x"), r"communicators\[0\]\.missing_ranks is not a list"),
    (lambda comm: comm.update(size=-3), r"communicators\[0\]\.size is -3, out of range"),
    (lambda comm: comm.update(missing_ranks=[{"rank": 1, "status": 3}]),
     r"missing_ranks\[0\]\.status is not an object"),
])
def test_a_communicator_of_the_wrong_shape_is_named(change, message):
    doc = status_doc([0])
    change(doc["communicators"][0])
    with pytest.raises(ValueError, match=message):
        nccl_ras.snapshot(doc)


def test_a_hostile_field_name_is_shown_short_and_on_one_line():
    doc = status_doc([0])
    doc["communicators"][0]["ranks"][0]["collective_counts"] = {"All\nReduce" + "x" * 100000: -1}
    with pytest.raises(ValueError) as caught:
        nccl_ras.snapshot(doc)
    assert str(caught.value).startswith("communicators[0].ranks[0].collective_counts.All\\nReducexxx")
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 300


# A. linear in the ranks, whatever their counts


def test_20000_ranks_that_all_disagree_are_judged_and_named(hostile):
    # every rank at its own huge count: no majority, so the one ahead is "the others" and 19999 are behind
    doc = status_doc(range(20000), count=lambda n: 10 ** 18 + n)
    server = hostile(status=once(json.dumps(doc).encode()))
    comms = nccl_ras.snapshot(nccl_ras.status(port=server.port, timeout=30))
    watch = nccl_ras.HangWatch(threshold_s=10)
    assert watch.observe(0, comms) == []
    verdicts = watch.observe(10, comms)
    assert [(v["kind"], len(v["ranks"]), v["ranks"][:3]) for v in verdicts] == [("hang", 19999, [0, 1, 2])]
    cause = verdicts[0]["finding"]["cause"]
    assert "rank 0 on 10.0.0.0 issued AllReduce 1000000000000000000 where the others reached " \
           "%d" % (10 ** 18 + 19999) in cause
    assert cause.endswith("(and 19995 more ranks)")
    assert nccl_ras.summary(comms) == [{"hash": "0xbad", "size": 20000, "ranks": 20000, "missing": 0,
                                        "least_issued": 10 ** 18, "most_issued": 10 ** 18 + 19999}]


def test_20000_ranks_split_in_half_name_the_smaller_half():
    doc = status_doc(range(20000), count=lambda n: 2 ** 62 + (n % 2))
    doc["communicators"][0]["ranks"].pop(1)  # 10000 at 2**62, 9999 one ahead
    comms = nccl_ras.snapshot(doc)
    odd = nccl_ras.odd_ranks(comms[0]["ranks"])
    assert len(odd) == 9999 and odd[0]["rank"] == 3
    others = [rank for rank in comms[0]["ranks"] if rank["counts"]["AllReduce"] == 2 ** 62]
    peak = nccl_ras.peaks(others)
    assert nccl_ras.behind(odd[0], others, peak) == "AllReduce %d where the others reached %d" % (2 ** 62 + 1, 2 ** 62)
    watch = nccl_ras.HangWatch(threshold_s=1)
    watch.observe(0, comms)
    verdicts = watch.observe(1, comms)
    assert len(verdicts) == 1 and len(verdicts[0]["ranks"]) == 9999


class Compared(dict):
    """A rank that counts how often it is compared whole with another: a judgment that compares each
    rank with each other one grows with the square of the ranks."""

    compared = [0]
    __hash__ = None

    def __eq__(self, other):
        Compared.compared[0] += 1
        return dict.__eq__(self, other)

    def __ne__(self, other):
        return not self.__eq__(other)


def test_the_hang_judgment_never_compares_rank_with_rank():
    comms = nccl_ras.snapshot(status_doc(range(4000), count=lambda n: 7 + n % 3))
    comms[0]["ranks"] = [Compared(rank) for rank in comms[0]["ranks"]]
    watch = nccl_ras.HangWatch(threshold_s=1)
    Compared.compared[0] = 0
    watch.observe(0, comms)
    verdicts = watch.observe(1, comms)
    assert [(v["kind"], len(v["ranks"])) for v in verdicts] == [("hang", 2666)]
    assert Compared.compared[0] <= 4000
