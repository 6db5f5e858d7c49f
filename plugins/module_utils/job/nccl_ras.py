# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL's RAS service, read from beside a running job: its status and its event stream.

Every NCCL process (2.24 and later, unless NCCL_RAS_ENABLE=0) runs a RAS thread; the RAS threads of
a job watch each other, and one of them on each node answers on 127.0.0.1:28028 (NCCL_RAS_ADDR) for
the whole job. The protocol is lines of text [NCCL src/ras/client_support.cc]:

  CLIENT PROTOCOL 2      ->  SERVER PROTOCOL 2
  TIMEOUT <s>            ->  OK        (how long RAS waits for the other processes)
  SET FORMAT json        ->  OK        (2.28.7 and later; older: ERROR: Unknown command)
  STATUS                 ->  one JSON document, then RAS closes the connection
  MONITOR [lifecycle]    ->  OK, then events (2.29 and later), each a JSON object ending in a line "}"

A status lists each communicator (hash, size), each rank's host, pid, device, state and its count of
each collective issued, and the ranks RAS could not reach (missing_ranks: unresponsive, or
considered_dead). A status alone can read fine while a job hangs [NCCL issue 1730]; what shows a hang
is the counts over time. Two shapes:
  - the ranks disagree and none moves for longer than a threshold [Ray's NCCL RAS hang detector]: the
    ranks behind are the ones the job waits for;
  - the ranks agree and none moves, the commonest NCCL hang (every rank inside one collective that
    never completes: a dead link, or a peer stuck inside it). Counts also stop in idle phases
    (checkpointing, data loading, evaluation), so agreeing counts alone are never a hang: the job's
    GPUs must spin all along, busy all the time (NCCL's kernels poll for data that never comes) yet
    far below their power limit (a computing GPU, as in evaluation, draws near it).

The job itself writes what RAS answers: an exchange has one deadline (however slowly the answer
comes), a line, an answer, its nesting and its number of items are bounded before anything is
built, and each number read is checked finite and in range. What breaks a bound is a RasError or a
ValueError naming it in one line, never a traceback; the judgments are linear in the ranks.

Plain Python (no ansible import): the node health agent ships it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import math
import re
import socket
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd

PORT = 28028
# the options of every module that asks RAS (doc fragment gpudirect.gcp.nccl_ras)
ARGUMENT_SPEC = dict(
    host=dict(type="str", default="127.0.0.1"),
    port=dict(type="int", default=PORT),
)
PROTOCOL = 2
# The job writes what RAS answers: every answer is bounded before it is believed.
# a status of a few thousand ranks is a few MB; more than this is not RAS
MAX_STATUS_BYTES = 64 * 1024 * 1024
MAX_EVENT_BYTES = 64 * 1024
MAX_LINE_BYTES = 4096
# a status nests 6 deep (document, communicators, communicator, ranks, rank, counts)
MAX_DEPTH = 32
# values and containers: about 25 a rank, so room for 160,000 ranks
MAX_ITEMS = 4000000
# NCCL's ranks, sizes, pids and errors are 32-bit ints; its counts are 64-bit
INT32 = 2 ** 31 - 1
INT64 = 2 ** 63 - 1
# ncclResult_t: success, and "in progress" (a non-blocking communicator still initializing)
RESULT_OK = (0, 7)
# an escape, then a string without them; an unterminated string runs to the end (the optional
# closing quote makes every try a match, so no try is repeated: linear on any text)
_ESCAPE = re.compile(r"\\.", re.S)
_STRING = re.compile(r'"[^"]*"?')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class RasError(Exception):
    """RAS cannot be asked, or did not answer as RAS does: one line for the user."""


class NoRas(RasError):
    """Nothing answers on RAS's port: no NCCL job runs here (no fault)."""


def loads(text, max_depth=MAX_DEPTH, max_items=MAX_ITEMS):
    """JSON text parsed, once its shape is known to be within max_depth and max_items; ValueError
    otherwise (json's own parser recurses per level and builds everything before anything is checked)."""
    # escapes are read left to right as JSON does, so what is left of a string holds no quote
    skeleton = _STRING.sub('""', _ESCAPE.sub("", text))
    items = skeleton.count(",") + skeleton.count("[") + skeleton.count("{")
    if items > max_items:
        raise ValueError("it holds over %d items" % max_items)
    depth = 0
    for char in _NOT_BRACKET.sub("", skeleton):
        if char in "[{":
            depth += 1
            if depth > max_depth:
                raise ValueError("it is nested deeper than %d" % max_depth)
        else:
            depth -= 1
    try:
        return json.loads(text)
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise ValueError("it is nested deeper than %d" % max_depth)


def _seconds(value):
    return "%g" % value


class Connection(object):
    """One connection to RAS, handshake done; raises RasError naming the address.

    Every exchange shares one deadline, timeout seconds from the connect: a server that trickles a
    byte at a time cannot hold the client past it."""

    def __init__(self, host="127.0.0.1", port=PORT, timeout=10.0):
        self.where, self.timeout = "%s:%s" % (host, port), timeout
        self.deadline = time.monotonic() + timeout
        try:
            self.sock = socket.create_connection((host, port), timeout=timeout)
        except socket.timeout:
            raise RasError("NCCL RAS at %s did not accept a connection within %s s" % (self.where, _seconds(timeout)))
        except OSError as exc:
            raise NoRas("no NCCL RAS service at %s (%s): no NCCL job runs here, or it set NCCL_RAS_ENABLE=0"
                        % (self.where, exc.strerror or exc))
        try:
            answer = self.ask("CLIENT PROTOCOL %d" % PROTOCOL)
        except BaseException:
            self.close()
            raise
        if not answer.upper().startswith("SERVER PROTOCOL "):
            self.close()
            raise RasError("%s is not NCCL RAS: it answered %r to the handshake" % (self.where, answer[:80]))

    def _until_deadline(self):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout()
        self.sock.settimeout(left)

    def recv(self, size):
        """Up to size bytes, within the deadline; b"" when RAS closed."""
        self._until_deadline()
        return self.sock.recv(size)

    def exchange(self, line, read):
        """Send line, then read(self) its answer; the errors of both as RasError."""
        try:
            self._until_deadline()
            self.sock.sendall(line.encode("ascii") + b"\n")
            return read(self)
        except socket.timeout:
            raise RasError("NCCL RAS at %s did not answer %r within %s s" % (self.where, line, _seconds(self.timeout)))
        except OSError as exc:
            raise RasError("NCCL RAS at %s: %s" % (self.where, exc.strerror or exc))

    def ask(self, line):
        return self.exchange(line, lambda conn: conn.readline())

    def readline(self, limit=MAX_LINE_BYTES):
        # a byte at a time: what follows the line (a status, events) stays in the socket
        data = bytearray()
        while not data.endswith(b"\n"):
            chunk = self.recv(1)
            if not chunk:
                break
            data += chunk
            if len(data) > limit:
                raise RasError("the answer is not a RAS line (over %d bytes without a newline)" % limit)
        return data.decode("utf-8", "replace").strip()

    def command(self, line, too_old):
        answer = self.ask(line)
        if answer.upper() != "OK":
            raise RasError("NCCL RAS at %s refused %r (%s): %s"
                           % (self.where, line, safe_text.one_line(answer, 80), too_old))

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def _read_all(conn):
    chunks, size = [], 0
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_STATUS_BYTES:
            raise RasError("NCCL RAS at %s sent over %d bytes of status" % (conn.where, MAX_STATUS_BYTES))
        chunks.append(chunk)


def status(host="127.0.0.1", port=PORT, timeout=10.0, wait_s=None):
    """The job's status as RAS reports it (the JSON document, parsed); raises RasError.

    timeout: seconds for the whole exchange, connect to the status's last byte.
    wait_s: how long RAS waits for the job's other processes (its TIMEOUT; NCCL's default is 5 s)."""
    conn = Connection(host, port, timeout)
    try:
        if wait_s is not None:
            conn.command("TIMEOUT %d" % int(wait_s), "an NCCL release without the TIMEOUT command")
        conn.command("SET FORMAT json", "NCCL before 2.28.7 has no JSON status")
        data = conn.exchange("STATUS", _read_all)
    finally:
        conn.close()
    text = data.decode("utf-8", "replace")
    try:
        return loads(text)
    except ValueError as exc:
        raise RasError("NCCL RAS at %s sent a status that is not JSON as RAS writes it (%s): %s"
                       % (conn.where, safe_text.one_line(exc, 120), safe_text.one_line(text, 120)))


class Monitor(object):
    """RAS's event stream (NCCL 2.29 and later): connect once, then read() what arrived."""

    def __init__(self, host="127.0.0.1", port=PORT, timeout=10.0, groups="lifecycle"):
        self.conn = Connection(host, port, timeout)
        try:
            self.conn.command("SET FORMAT json", "NCCL before 2.28.7 has no JSON events")
            self.conn.command("MONITOR %s" % groups, "NCCL before 2.29 has no event stream")
        except BaseException:
            self.conn.close()
            raise
        self.buffer = ""
        self.bad = 0

    def fileno(self):
        return self.conn.sock.fileno()

    def read(self, wait_s=0.0):
        """Events that arrived within wait_s (parsed); raises RasError when RAS closed the stream
        (the job ended). An event that is not JSON is counted in self.bad and skipped."""
        self.conn.sock.settimeout(wait_s if wait_s > 0 else 0.000001)
        try:
            chunk = self.conn.sock.recv(65536)
        except (socket.timeout, BlockingIOError):
            chunk = None
        except OSError as exc:
            raise RasError("NCCL RAS at %s: %s" % (self.conn.where, exc.strerror or exc))
        if chunk == b"":
            raise RasError("NCCL RAS at %s closed its event stream (the job ended)" % self.conn.where)
        if chunk:
            self.buffer += chunk.decode("utf-8", "replace")
        events, self.buffer, bad = split_events(self.buffer)
        self.bad += bad
        return events

    def close(self):
        self.conn.close()


def split_events(text):
    """(events, the rest still incomplete, how many were not JSON) from RAS's JSON event stream.

    An event is a JSON object whose closing brace starts a line; RAS does not escape its `details`
    text, so one that does not parse is skipped, never the stream."""
    events, bad = [], 0
    while True:
        end = text.find("\n}\n")
        if end < 0:
            if len(text) > MAX_EVENT_BYTES:  # no event is this long: drop it rather than grow
                return events, "", bad + 1
            return events, text, bad
        piece, text = text[:end + 2], text[end + 3:]
        try:
            event = loads(piece) if len(piece) <= MAX_EVENT_BYTES else None
        except ValueError:
            bad += 1
            continue
        if isinstance(event, dict):
            events.append(event)
        else:
            bad += 1


def _shown(value, limit=40):
    return safe_text.one_line(repr(value), limit)


def _number(value, where, low=0, high=INT32):
    """value as an int within [low, high]; ValueError naming the field otherwise (NaN, an infinity,
    a fraction, a count below zero or beyond what NCCL can hold are not RAS's)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("%s is %s, not a number" % (where, _shown(value)))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("%s is %s, not a finite number" % (where, value))
        if not value.is_integer():
            raise ValueError("%s is %s, not a whole number" % (where, _shown(value)))
        value = int(value)
    if not low <= value <= high:
        raise ValueError("%s is %s, out of range (%d to %d)" % (where, _shown(value), low, high))
    return value


def _object(value, where, default):
    if value is None:
        return default
    if not isinstance(value, dict):
        raise ValueError("%s is not an object" % where)
    return value


def _list(value, where):
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError("%s is not a list" % where)
    return value


def _flag(value):
    return value is True


def _rank(rank, at):
    """What a status says of every rank, answering or missing: its number, host and pid."""
    if not isinstance(rank, dict):
        raise ValueError("%s is not an object" % at)
    return {"rank": _number(rank.get("rank"), at + ".rank"),
            "host": safe_text.one_line(rank.get("host", "unknown"), 255),
            "pid": _number(rank.get("pid", -1), at + ".pid", low=-1)}


def snapshot(doc):
    """The parts of a RAS status the judgments read, checked; ValueError names the field at fault."""
    if not isinstance(doc, dict):
        raise ValueError("the RAS status is not a JSON object")
    comms = doc.get("communicators")
    if not isinstance(comms, list):
        raise ValueError("the RAS status has no communicators list")
    out = []
    for index, comm in enumerate(comms):
        where = "communicators[%d]" % index
        if not isinstance(comm, dict) or not isinstance(comm.get("hash"), str):
            raise ValueError("%s has no hash" % where)
        ranks = []
        for position, rank in enumerate(_list(comm.get("ranks"), where + ".ranks")):
            at = "%s.ranks[%d]" % (where, position)
            entry = _rank(rank, at)
            counts = _object(rank.get("collective_counts"), at + ".collective_counts", {})
            state = _object(rank.get("status"), at + ".status", {})
            ranks.append(dict(
                entry,
                cuda_dev=_number(rank.get("cuda_dev", -1), at + ".cuda_dev", low=-1),
                counts=dict((safe_text.one_line(name, 100),
                             _number(value, "%s.collective_counts.%s" % (at, safe_text.one_line(name, 100)),
                                     high=INT64))
                            for name, value in counts.items()),
                error=_number(state.get("async_error", 0), at + ".status.async_error"),
                init=_number(state.get("init_state", 0), at + ".status.init_state"),
                aborted=_flag(state.get("abort_flag")),
            ))
        missing = []
        for position, rank in enumerate(_list(comm.get("missing_ranks"), where + ".missing_ranks")):
            at = "%s.missing_ranks[%d]" % (where, position)
            entry = _rank(rank, at)
            state = _object(rank.get("status"), at + ".status", {})
            missing.append(dict(entry, dead=_flag(state.get("considered_dead")),
                                unresponsive=_flag(state.get("unresponsive"))))
        secondary = comm.get("secondary_hash")
        entry = {"hash": safe_text.one_line(comm["hash"], 100),
                 "size": _number(comm.get("size", len(ranks) + len(missing)), where + ".size"),
                 "ranks": sorted(ranks, key=lambda r: r["rank"]),
                 "missing": sorted(missing, key=lambda r: r["rank"])}
        if isinstance(secondary, str):
            entry["secondary"] = safe_text.one_line(secondary, 100)
        entry["key"] = comm_key(entry)
        out.append(entry)
    return out


def comm_key(comm):
    """What tells one communicator from another: its hash (of the unique id, which a job can reuse for
    several communicators), NCCL's secondary hash where RAS gives one, its size and its first member."""
    members = comm["ranks"] + comm["missing"]
    first = min(members, key=lambda r: r["rank"]) if members else {"rank": -1, "host": "", "pid": -1}
    return "%s/%s/%d/%d@%s:%d" % (comm["hash"], comm.get("secondary", "-"), comm["size"], first["rank"],
                                  first["host"], first["pid"])


def _name(rank, names):
    host = rank["host"]
    named = (names or {}).get(host)
    return "%s (%s)" % (named, host) if named else host


def odd_ranks(ranks):
    """The ranks whose counts differ from those most ranks share; [] where all agree. With no majority,
    the side ahead is taken as the common one: the ranks behind are those the job waits for."""
    keyed = [(tuple(sorted(rank["counts"].items())), rank) for rank in ranks]
    tally = {}
    for key, _rank in keyed:
        tally[key] = tally.get(key, 0) + 1
    if len(tally) < 2:
        return []
    common = max(tally.items(), key=lambda item: (item[1], sum(n for _c, n in item[0])))[0]
    return [rank for key, rank in keyed if key != common]


def others_of(ranks, odd):
    """The ranks not in odd (by identity: comparing rank with rank would grow with the square of them)."""
    odd_ids = set(id(rank) for rank in odd)
    return [rank for rank in ranks if id(rank) not in odd_ids]


def peaks(others):
    """{collective: the most any of others issued}, for behind(): read once, not once per odd rank."""
    peak = {}
    for other in others:
        for name, count in other["counts"].items():
            if count > peak.get(name, 0):
                peak[name] = count
            else:
                peak.setdefault(name, 0)
    return peak


def behind(rank, others, peak=None):
    """How the rank's counts differ from the others', as 'AllReduce 1041 where the others reached 1042'.

    peak: peaks(others), where the caller judges more than one rank against the same others."""
    if peak is None:
        peak = peaks(others)
    parts = []
    for name in sorted(set(rank["counts"]) | set(peak)):
        mine = rank["counts"].get(name, 0)
        theirs = peak.get(name, 0) if others else mine
        if mine != theirs:
            parts.append("%s %d where the others reached %d" % (name, mine, theirs))
    return ", ".join(parts) or "counts that differ"


class HangWatch(object):
    """Judges successive RAS statuses of the job on this node.

    A communicator hangs when its ranks' counts disagree and none of them changed for threshold_s
    (a job between steps agrees; a job at work moves). It is stuck when its ranks agree, none moved,
    and every sample of the job's GPUs over threshold_s said they spin (activity: see gpu_activity;
    a sample that could not be taken, None, neither starts nor stops that clock). A rank RAS considers
    dead, and a rank with an NCCL error, are named at once. A poll that failed is no observation: the
    caller does not call observe() for it, and the clocks run on."""

    def __init__(self, threshold_s=600.0, names=None):
        self.threshold_s = float(threshold_s)
        self.names = names or {}
        self.seen = {}

    def observe(self, now, comms, job=None, activity=None):
        """Verdicts for this status: dicts with kind (hang, stuck, dead_rank, unresponsive_rank,
        rank_error), comm, job, ranks, hosts, stalled_s and finding."""
        verdicts, alive = [], set()
        of_job = " of job %s" % job if job else ""
        for comm in comms:
            key = comm.get("key") or comm_key(comm)
            alive.add(key)
            counts = dict((rank["rank"], rank["counts"]) for rank in comm["ranks"])
            past = self.seen.get(key)
            if past is None or past["counts"] != counts:
                self.seen[key] = past = {"counts": counts, "since": now, "spin_since": None, "hash": comm["hash"]}
            stalled = now - past["since"]
            odd = odd_ranks(comm["ranks"])
            past["disagree"] = bool(odd)
            if activity is not None:
                spinning = activity.get("state") == "spin"
                past["spin_since"] = (past["spin_since"] if past["spin_since"] is not None else now) if spinning \
                    else None
            if odd and stalled >= self.threshold_s:
                others = others_of(comm["ranks"], odd)
                peak = peaks(others)
                lagging = "; ".join("rank %d on %s issued %s"
                                    % (rank["rank"], _name(rank, self.names), behind(rank, others, peak))
                                    for rank in odd[:4])
                if len(odd) > 4:
                    lagging += " (and %d more ranks)" % (len(odd) - 4)
                verdicts.append(self._verdict(
                    "hang", comm, job, odd, stalled,
                    "communicator %s (%d ranks)%s hangs: no rank issued a collective for %d s, and %s"
                    % (comm["hash"], comm["size"], of_job, stalled, lagging)))
            elif comm["ranks"] and not odd and past["spin_since"] is not None \
                    and now - past["spin_since"] >= self.threshold_s:
                verdicts.append(self._stuck(comm, job, now - past["spin_since"], activity or past.get("activity")))
            if activity is not None and activity.get("state") == "spin":
                past["activity"] = activity
            for rank in comm["missing"]:
                kind = "dead_rank" if rank["dead"] else "unresponsive_rank"
                verdicts.append(self._verdict(
                    kind, comm, job, [rank], stalled,
                    "rank %d of communicator %s%s on %s (pid %d) is %s to NCCL RAS"
                    % (rank["rank"], comm["hash"], of_job, _name(rank, self.names),
                       rank["pid"], "dead" if rank["dead"] else "not answering"),
                    severity="fail" if rank["dead"] else "warn"))
            for rank in comm["ranks"]:
                if rank["error"] not in RESULT_OK or rank["aborted"]:
                    verdicts.append(self._verdict(
                        "rank_error", comm, job, [rank], stalled,
                        "rank %d of communicator %s%s on %s (pid %d) %s"
                        % (rank["rank"], comm["hash"], of_job, _name(rank, self.names),
                           rank["pid"], "aborted" if rank["aborted"] else "holds NCCL error %d" % rank["error"])))
        for gone in set(self.seen) - alive:  # the job or the communicator ended
            del self.seen[gone]
        return verdicts

    def _stuck(self, comm, job, spun, activity):
        issued = " and ".join("%s %d" % (name, count)
                              for name, count in sorted(comm["ranks"][0]["counts"].items()) if count)
        waits = ""
        if comm["missing"]:
            waits = "; it waits on %s" % ", ".join(
                "rank %d on %s (%s)" % (rank["rank"], _name(rank, self.names),
                                        "dead" if rank["dead"] else "not answering RAS")
                for rank in comm["missing"][:4])
        gpus = (activity or {}).get("detail")
        cause = ("communicator %s (%d ranks)%s is stuck inside a collective: every rank issued %s and none "
                 "issued another for %d s while this node's GPUs spin (%s): NCCL's kernels wait for data that "
                 "does not come, where an idle phase leaves the GPUs idle or computing%s"
                 % (comm["hash"], comm["size"], " of job %s" % job if job else "", issued or "no collective",
                    spun, gpus or "busy, far below their power limit", waits))
        return self._verdict("stuck", comm, job, comm["missing"][:4], spun, cause)

    def stalled(self, now):
        """{communicator: seconds since any rank issued a collective} of those whose ranks disagree, or
        whose GPUs spin while they agree."""
        return dict((seen["hash"], now - seen["since"]) for seen in self.seen.values()
                    if seen.get("disagree") or seen.get("spin_since") is not None)

    def _verdict(self, kind, comm, job, ranks, stalled, cause, severity="fail"):
        hosts = sorted(set(rank["host"] for rank in ranks))
        subject = ", ".join(_name(rank, self.names) for rank in ranks[:4]) or "communicator %s" % comm["hash"]
        return {"kind": kind, "comm": comm["hash"], "comm_key": comm.get("key") or comm_key(comm), "job": job,
                "ranks": [rank["rank"] for rank in ranks], "hosts": hosts,
                "members": [[rank["rank"], rank["host"]] for rank in ranks], "stalled_s": stalled,
                "finding": fd.make("job", subject, severity, cause)}


def merge(kept, found):
    """The verdicts of the last read, and those of earlier reads that it does not repeat (a rank that
    was dead stays named after RAS dropped its communicator)."""
    seen = set((v["kind"], v.get("comm_key", v["comm"]), tuple(v["ranks"])) for v in found)
    return found + [v for v in kept if (v["kind"], v.get("comm_key", v["comm"]), tuple(v["ranks"])) not in seen]


def dead_peer(event, names=None, job=None):
    """A verdict for a PEER_DEAD event of RAS's stream; None for any other event."""
    if not isinstance(event, dict) or event.get("event") != "PEER_DEAD":
        return None
    peer = event.get("peer") if isinstance(event.get("peer"), dict) else {}
    host = safe_text.one_line(peer.get("host") or peer.get("addr") or "an unknown peer", 255)
    named = (names or {}).get(host)
    shown = "%s (%s)" % (named, host) if named else host
    pid = peer.get("pid")
    cause = "NCCL RAS reported the process%s on %s dead at %s%s" % (
        " %d" % pid if isinstance(pid, int) and not isinstance(pid, bool) else "", shown,
        safe_text.one_line(event.get("timestamp", "?"), 64), " (job %s)" % job if job else "")
    return {"kind": "dead_peer", "comm": None, "job": job, "ranks": [], "hosts": [host], "members": [[None, host]],
            "stalled_s": 0,
            "finding": fd.make("job", shown, "fail", cause)}


def slurm_job_of(pids, root="/"):
    """The Slurm job id of the first of pids that runs here (SLURM_JOB_ID in its environment), or None.

    Only that one variable is kept of an environment, which holds the job's secrets too."""
    for pid in pids:
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
            continue
        try:
            with open("%s/proc/%d/environ" % (root.rstrip("/"), pid), "rb") as handle:
                environ = handle.read(1024 * 1024)
        except (IOError, OSError):
            continue
        for item in environ.split(b"\0"):
            if item.startswith(b"SLURM_JOB_ID="):
                value = item.split(b"=", 1)[1].decode("ascii", "replace")
                if value.isdigit() or value.replace("_", "").isdigit():
                    return value
    return None


def summary(comms):
    """Per communicator what a report shows: hash, size, ranks answering, missing, and the least and
    most collectives any rank issued."""
    out = []
    for comm in comms:
        totals = [sum(rank["counts"].values()) for rank in comm["ranks"]]
        out.append({"hash": comm["hash"], "size": comm["size"], "ranks": len(comm["ranks"]),
                    "missing": len(comm["missing"]), "least_issued": min(totals) if totals else 0,
                    "most_issued": max(totals) if totals else 0})
    return out
