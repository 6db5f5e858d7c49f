# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stand-in for the automation controller's (AWX's) REST API, the part ansible-rulebook's
run_job_template uses, for the tests of the EDA controller rulebook. It is not AWX: it launches
nothing and every job it makes ends "successful" at once.

  GET  /api/v2/config/                          the version (ansible-rulebook asks at start)
  GET  /api/v2/unified_job_templates/?name=N    the templates of the fixture named N
  POST /api/v2/job_templates/ID/launch/         records the launch; answers as AWX does, with
                                                ignored_fields for a prompt the template does not ask
  GET  /api/v2/jobs/?id__in=1,2                 the jobs, all successful
  GET  /_emulator/launches                      what was launched, for the tests

It refuses what AWX refuses: a request without the bearer token (401), a launch of a template that
does not exist (404). Templates come from a fixture list of {name, organization, ask_limit_on_launch,
ask_variables_on_launch}.

  python3 controller_api.py --port 0 --token T --templates templates.json   prints the port
"""

from __future__ import absolute_import, division, print_function

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

ASKS = ("ask_limit_on_launch", "ask_variables_on_launch", "ask_inventory_on_launch", "ask_labels_on_launch")
# a launch's fields and the prompt AWX needs before it takes them
PROMPTED = {"limit": "ask_limit_on_launch", "extra_vars": "ask_variables_on_launch",
            "inventory": "ask_inventory_on_launch", "labels": "ask_labels_on_launch"}


class State(object):
    def __init__(self, templates, token):
        self.lock = threading.Lock()
        self.token = token
        self.templates = [dict({k: False for k in ASKS}, id=i + 1, **t) for i, t in enumerate(templates)]
        self.launches = []


class Handler(BaseHTTPRequestHandler):
    state = None

    def log_message(self, fmt, *args):  # keep test output quiet
        pass

    def _send(self, code, body):
        data = json.dumps(body).encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorised(self):
        if self.headers.get("Authorization") == "Bearer " + self.state.token:
            return True
        self._send(401, {"detail": "Authentication credentials were not provided."})
        return False

    def do_GET(self):  # noqa: N802 (the http.server spelling)
        url = urlparse(self.path)
        query = dict((k, v[0]) for k, v in parse_qs(url.query).items())
        if url.path == "/_emulator/launches":
            with self.state.lock:
                return self._send(200, list(self.state.launches))
        if not self._authorised():
            return None
        if url.path == "/api/v2/config/":
            return self._send(200, {"version": "24.6.1 (stand-in)"})
        if url.path == "/api/v2/unified_job_templates/":
            found = [dict(t, type="job_template", summary_fields={"organization": {"name": t["organization"]}},
                          related={"launch": "/api/v2/job_templates/%d/launch/" % t["id"]})
                     for t in self.state.templates if t["name"] == query.get("name")]
            return self._send(200, {"count": len(found), "next": None, "results": found})
        if url.path == "/api/v2/jobs/":
            ids = [i for i in query.get("id__in", "").split(",") if i]
            return self._send(200, {"count": len(ids), "next": None,
                                    "results": [{"id": int(i), "status": "successful"} for i in ids]})
        return self._send(404, {"detail": "Not found."})

    def do_POST(self):  # noqa: N802
        if not self._authorised():
            return None
        parts = urlparse(self.path).path.strip("/").split("/")
        if len(parts) != 5 or parts[:3] != ["api", "v2", "job_templates"] or parts[4] != "launch":
            return self._send(404, {"detail": "Not found."})
        template = next((t for t in self.state.templates if str(t["id"]) == parts[3]), None)
        if template is None:
            return self._send(404, {"detail": "Not found."})
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        taken = dict((k, v) for k, v in body.items() if template.get(PROMPTED.get(k, ""), False))
        ignored = dict((k, v) for k, v in body.items() if k not in taken)
        with self.state.lock:
            job = len(self.state.launches) + 1
            self.state.launches.append({"template": template["name"], "job": job, "taken": taken,
                                        "ignored": ignored})
        return self._send(201, {"id": job, "job": job, "url": "/api/v2/jobs/%d/" % job,
                                "ignored_fields": ignored})


def serve(templates, token, port=0):
    """A running stand-in on 127.0.0.1: (server, its port). server.shutdown() stops it."""
    handler = type("BoundHandler", (Handler,), {"state": State(templates, token)})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--token", required=True)
    parser.add_argument("--templates", required=True, help="a JSON file: a list of templates")
    args = parser.parse_args(argv)
    with open(args.templates) as handle:
        server, port = serve(json.load(handle), args.token, args.port)
    print(port)
    sys.stdout.flush()
    threading.Event().wait()


if __name__ == "__main__":
    main()
