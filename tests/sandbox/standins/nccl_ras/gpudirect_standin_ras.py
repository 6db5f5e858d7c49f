"""STAND-IN for NCCL's RAS service (sandbox nodes run no NCCL job): the client socket a job's RAS
thread answers on, with a scripted job behind it.

  gpudirect_standin_ras.py --script FILE [--host 127.0.0.1] [--port 28028]

It speaks the protocol of NCCL's RAS [NCCL src/ras/client_support.cc], and refuses what it refuses:
  CLIENT PROTOCOL n  -> SERVER PROTOCOL 2        TIMEOUT n       -> OK, or ERROR: Invalid timeout value
  SET FORMAT json|text -> OK, or ERROR: Invalid format           STATUS -> the status, then it closes
  MONITOR [lifecycle|trace|all] -> OK, then one JSON event (a closing brace on its own line) each time
                                   a peer dies                   anything else -> ERROR: Unknown command
A status in the text format is one line saying it is a stand-in (the product reads JSON only).

The script (JSON) is the job: {"comm": "0x7f3a", "hosts": ["10.0.0.2", ...], "ranks_per_host": 8,
"rate": collectives a second, "hang_at": s, "odd_rank": n, "dead_at": s, "dead_rank": n}. Counts grow
with the time since the stand-in started; from hang_at none grows, and odd_rank stays one
collective behind the others (the rank the job waits for); without odd_rank every rank stays at the
same count (the hang where every rank waits inside one collective: with a spinning GPU, gpu-spin of
the GPU stand-in, the job watch names it); "pids": {"rank": pid} gives ranks
their real processes (the job stand-in's workers), the others get 4000 + rank; from dead_at dead_rank is missing and
considered dead, and every monitoring client gets a PEER_DEAD event. nccl_version says STAND-IN.
"""

import argparse
import json
import socketserver
import sys
import threading
import time

PROTOCOL = 2


class Job(object):
    def __init__(self, script, clock=time.monotonic):
        self.script, self.clock, self.start = script, clock, clock()
        self.hosts = script.get("hosts") or ["127.0.0.1"]
        self.per_host = int(script.get("ranks_per_host", 8))

    def elapsed(self):
        return self.clock() - self.start

    def _dead(self, now):
        at = self.script.get("dead_at")
        return self.script.get("dead_rank") if at is not None and now >= at else None

    def status(self):
        now = self.elapsed()
        hang_at = self.script.get("hang_at")
        frozen = hang_at is not None and now >= hang_at
        issued = int(self.script.get("rate", 2.0) * (hang_at if frozen else now)) + 1
        dead = self._dead(now)
        pids = self.script.get("pids") or {}
        ranks, missing = [], []
        for rank in range(len(self.hosts) * self.per_host):
            host = self.hosts[rank // self.per_host]
            count = issued - 1 if frozen and rank == self.script.get("odd_rank") else issued
            entry = {"rank": rank, "host": host, "pid": int(pids.get(str(rank), 4000 + rank)), "cuda_dev": rank % self.per_host,
                     "nvml_dev": rank % self.per_host}
            if rank == dead:
                entry["status"] = {"unresponsive": True, "considered_dead": True}
                missing.append(entry)
                continue
            entry["status"] = {"init_state": 0, "async_error": 0, "finalize_called": False,
                               "destroy_flag": False, "abort_flag": False}
            entry["collective_counts"] = {"AllReduce": count, "AllGather": count // 4}
            ranks.append(entry)
        comm = {"hash": self.script.get("comm", "0x7f3a"), "secondary_hash": "0x1:0x2",
                "size": len(self.hosts) * self.per_host, "ranks_count": len(ranks),
                "missing_ranks_count": len(missing), "ranks": ranks, "missing_ranks": missing}
        return {"nccl_version": "2.29.7 STAND-IN", "cuda_runtime_version": 12080, "cuda_driver_version": 12080,
                "timestamp": time.strftime("%Y-%m-%d %H:%M:%S"), "communicators_count": 1,
                "communicators": [comm], "ras": {"collection_time_sec": 0.001, "timeouts_count": 0}}

    def dead_event(self):
        rank = self.script.get("dead_rank")
        host = self.hosts[rank // self.per_host]
        # as RAS prints it: indented, the closing brace alone on the last line
        return ("{\n  \"timestamp\": \"%s\",\n  \"group\": \"LIFECYCLE\",\n  \"event\": \"PEER_DEAD\",\n"
                "  \"peer\": {\n    \"host\": \"%s\",\n    \"pid\": %d,\n    \"cuda_devs\": [%d],\n"
                "    \"nvml_devs\": [%d]\n  },\n  \"details\": \"\"\n}\n"
                % (time.strftime("%Y-%m-%d %H:%M:%S"), host, 4000 + rank, rank % self.per_host,
                   rank % self.per_host))


class Handler(socketserver.StreamRequestHandler):
    def answer(self, text):
        self.wfile.write(text.encode("utf-8"))
        self.wfile.flush()

    def handle(self):
        job, form = self.server.job, "text"
        while True:
            line = self.rfile.readline(1024)
            if not line:
                return
            words = line.decode("utf-8", "replace").strip().split()
            command = " ".join(words[:2]).upper() if words else ""
            if command == "CLIENT PROTOCOL":
                self.answer("SERVER PROTOCOL %d\n" % PROTOCOL)
            elif words and words[0].upper() == "TIMEOUT":
                ok = len(words) == 2 and words[1].isdigit()
                self.answer("OK\n" if ok else "ERROR: Invalid timeout value %s\n" % " ".join(words[1:]))
            elif command == "SET FORMAT":
                if len(words) == 3 and words[2].lower() in ("json", "text"):
                    form = words[2].lower()
                    self.answer("OK\n")
                else:
                    self.answer("ERROR: Invalid format %s\n" % " ".join(words[2:]))
            elif words and words[0].upper() in ("STATUS", "VERBOSE") and words[-1].upper() == "STATUS":
                if form == "json":
                    self.answer(json.dumps(job.status(), indent=2) + "\n")
                else:
                    self.answer("NCCL RAS STAND-IN: the text status is not modelled; ask for json\n")
                return
            elif words and words[0].upper() == "MONITOR":
                groups = (words[1] if len(words) > 1 else "lifecycle").lower().split(",")
                bad = [group for group in groups if group not in ("lifecycle", "trace", "all")]
                if bad:
                    self.answer("ERROR: Invalid event group '%s'\n" % bad[0])
                    continue
                self.answer("OK\n")
                self.monitor(job, form)
                return
            else:
                self.answer("ERROR: Unknown command %s\n" % (words[0] if words else ""))

    def monitor(self, job, form):
        sent = False
        while not self.server.stopping.is_set():
            if not sent and job._dead(job.elapsed()) is not None:
                event = job.dead_event()
                self.answer(event if form == "json" else "[%s] PEER_DEAD: STAND-IN\n" % time.strftime("%F %T"))
                sent = True
            time.sleep(0.05)


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, address, job):
        socketserver.ThreadingTCPServer.__init__(self, address, Handler)
        self.job, self.stopping = job, threading.Event()


def main(argv=None):
    parser = argparse.ArgumentParser(description="STAND-IN for NCCL's RAS client socket")
    parser.add_argument("--script", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=28028)
    args = parser.parse_args(argv)
    with open(args.script) as handle:
        job = Job(json.load(handle))
    server = Server((args.host, args.port), job)
    sys.stdout.write("ready %d\n" % server.server_address[1])
    sys.stdout.flush()
    try:
        server.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        server.stopping.set()
        server.server_close()


if __name__ == "__main__":
    main()
