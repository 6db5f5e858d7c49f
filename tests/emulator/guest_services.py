#!/usr/bin/env python
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a GCE guest reaches besides the Compute API, for tests: the metadata
server's service-account token endpoint and placement attributes, and an
Artifact Registry front that requires those tokens before it serves the local
registry's images.

    python tests/emulator/guest_services.py --upstream 127.0.0.1:5000
        [--host 127.0.0.1] [--metadata-port 0] [--registry-port 0]
        [--token-ttl 300] [--topology-file PATH] [--ready-file PATH]

Metadata: every request needs the header Metadata-Flavor: Google, else 403, as
on GCE.  GET /computeMetadata/v1/instance/service-accounts/default/token
answers {access_token, expires_in, token_type: Bearer} (a new short-lived
token each time).  GET /computeMetadata/v1/instance/attributes/physical_host
and .../physical_host_topology answer the calling node's placement: the node
is the request's source address, looked up in the --topology-file JSON

    {"10.0.0.5": {"physical_host": "/block/subblock/host",
                  "physical_host_topology": {"cluster": "c", "block": "block",
                                             "subBlock": "subblock", "host": "host"}}}

physical_host is served as given; physical_host_topology as JSON when it is an
object, or as given when it is a string (so a test can serve text that is not
JSON).  An address the file does not name, an attribute its entry lacks (or
null), no --topology-file and a file that does not exist yet all answer 404,
as a VM without placement data does.  The same entry may hold
"maintenance-event" (served at /computeMetadata/v1/instance/maintenance-event;
NONE when absent, as on a VM with no event) and "upcoming-maintenance" (an
object served as JSON at .../instance/upcoming-maintenance; 404 when absent,
as on a VM with nothing scheduled).  The file is read again whenever its
mtime, size or inode changes, so a test can change a node's answer while the
server runs; a file that is not a JSON object of objects answers 500 naming
it.  Other paths answer 404.

Registry: every request needs Authorization: Basic
base64(oauth2accesstoken:<live token>), the scheme Google documents for access
tokens; otherwise 401 with a WWW-Authenticate challenge and the registry
API's UNAUTHORIZED error.  Reads (GET, HEAD) are forwarded to the upstream
registry; writes answer 405.  Tokens never reach the log: it records method,
path, status, the caller's address for placement attributes and whether the
registry credentials were missing, unknown or valid.
With --ready-file it writes {"metadata": URL, "registry": host:port} once it listens.
"""

from __future__ import absolute_import, division, print_function

import argparse
import base64
import http.client
import json
import os
import secrets
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN_PATH = "/computeMetadata/v1/instance/service-accounts/default/token"
ATTRIBUTES_PATH = "/computeMetadata/v1/instance/attributes/"
PLACEMENT_ATTRIBUTES = ("physical_host", "physical_host_topology")
INSTANCE_PATH = "/computeMetadata/v1/instance/"
# instance values a test can set per node, with what a VM without one answers (None: 404)
MAINTENANCE_VALUES = {"maintenance-event": "NONE", "upcoming-maintenance": None}
USERNAME = "oauth2accesstoken"
FORWARDED = ("Content-Type", "Content-Length", "Docker-Content-Digest", "Docker-Distribution-Api-Version", "Etag")


class Tokens(object):
    """Issued tokens and when they expire; thread-safe."""

    def __init__(self, ttl):
        self.ttl, self.lock, self.live = ttl, threading.Lock(), {}

    def issue(self):
        token = "ya29.sandbox-" + secrets.token_urlsafe(24)
        with self.lock:
            self.live[token] = time.time() + self.ttl
        return token

    def valid(self, token):
        with self.lock:
            expiry = self.live.get(token)
            return bool(expiry and expiry > time.time())


class Placements(object):
    """Each node's placement attributes from the topology file, re-read when it changes; thread-safe."""

    def __init__(self, path):
        self.path, self.lock, self.stamp, self.nodes, self.error = path, threading.Lock(), None, {}, None

    def _load(self):
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self.stamp, self.nodes, self.error = None, {}, None
            return
        except OSError as exc:
            self.stamp, self.nodes, self.error = None, {}, "topology file %s: %s" % (self.path, exc)
            return
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if stamp == self.stamp:
            return
        self.stamp = stamp
        try:
            with open(self.path) as fh:
                nodes = json.load(fh)
            if not isinstance(nodes, dict) or not all(isinstance(v, dict) for v in nodes.values()):
                raise ValueError("not a JSON object of node address -> attributes objects")
        except (OSError, ValueError) as exc:
            self.nodes, self.error = {}, "topology file %s: %s" % (self.path, exc)
            return
        self.nodes, self.error = nodes, None

    def attribute(self, address, name):
        """(status, body) for one node's attribute: 200 with its text, 404 when it has none, 500 on a bad file."""
        with self.lock:
            if self.path:
                self._load()
            if self.error:
                return 500, self.error + "\n"
            value = self.nodes.get(address, {}).get(name)
        if value is None:
            value = MAINTENANCE_VALUES.get(name)
        if value is None:
            return 404, "no attribute %s for %s\n" % (name, address)
        if name in ("physical_host_topology", "upcoming-maintenance") and not isinstance(value, str):
            return 200, json.dumps(value)
        return 200, str(value)


def _log(kind, handler, status, note=""):
    sys.stderr.write("%s %s %s %d%s\n" % (kind, handler.command, handler.path.split("?", 1)[0], status,
                                          " " + note if note else ""))
    sys.stderr.flush()


def metadata_handler(tokens, placements):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # pylint: disable=arguments-differ
            pass

        def _send(self, status, body, ctype="application/json", note=""):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Metadata-Flavor", "Google")
            self.end_headers()
            self.wfile.write(data)
            _log("metadata", self, status, note)

        def do_GET(self):  # pylint: disable=invalid-name
            path = self.path.split("?", 1)[0]
            name = path[len(ATTRIBUTES_PATH):] if path.startswith(ATTRIBUTES_PATH) else None
            if self.headers.get("Metadata-Flavor") != "Google":
                self._send(403, "Missing required header: Metadata-Flavor: Google\n", "text/plain")
            elif path == TOKEN_PATH:
                self._send(200, json.dumps({"access_token": tokens.issue(), "expires_in": tokens.ttl,
                                            "token_type": "Bearer"}))
            elif name in PLACEMENT_ATTRIBUTES or path[len(INSTANCE_PATH):] in MAINTENANCE_VALUES:
                caller = self.client_address[0]
                status, body = placements.attribute(caller, name or path[len(INSTANCE_PATH):])
                self._send(status, body, "application/text", "caller %s" % caller)
            else:
                self._send(404, "not served by the sandbox metadata stand-in: %s\n" % self.path, "text/plain")
    return Handler


def registry_handler(tokens, upstream):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # pylint: disable=arguments-differ
            pass

        def _error(self, status, code, message, challenge=False):
            data = json.dumps({"errors": [{"code": code, "message": message}]}).encode()
            self.send_response(status)
            if challenge:
                self.send_header("WWW-Authenticate", 'Basic realm="gpudirect sandbox Artifact Registry stand-in"')
            self.send_header("Docker-Distribution-Api-Version", "registry/2.0")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _auth(self):
            header = self.headers.get("Authorization") or ""
            if not header.startswith("Basic "):
                return "missing"
            try:
                user, _sep, secret = base64.b64decode(header[6:]).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                return "unknown"
            return "valid" if user == USERNAME and tokens.valid(secret) else "unknown"

        def _forward(self):
            auth = self._auth()
            if auth != "valid":
                self._error(401, "UNAUTHORIZED", "authentication required", challenge=True)
                _log("registry", self, 401, "credentials %s" % auth)
                return
            conn = http.client.HTTPConnection(upstream, timeout=60)
            try:
                conn.request(self.command, self.path, headers={"Accept": self.headers.get("Accept", "*/*")})
                resp = conn.getresponse()
                self.send_response(resp.status)
                for key in FORWARDED:
                    if resp.getheader(key) is not None:
                        self.send_header(key, resp.getheader(key))
                self.end_headers()
                if self.command != "HEAD":
                    while True:
                        chunk = resp.read(1 << 16)
                        if not chunk:
                            break
                        self.wfile.write(chunk)
                _log("registry", self, resp.status, "credentials valid")
            finally:
                conn.close()

        def do_GET(self):  # pylint: disable=invalid-name
            self._forward()

        def do_HEAD(self):  # pylint: disable=invalid-name
            self._forward()

        def _refuse(self):
            self._error(405, "UNSUPPORTED", "the sandbox registry front serves pulls only")
            _log("registry", self, 405)

        do_POST = do_PUT = do_PATCH = do_DELETE = _refuse  # noqa: N815
    return Handler


def serve(host, metadata_port, registry_port, upstream, ttl, topology_file=None):
    """Start both servers in threads; return (metadata server, registry server, tokens)."""
    tokens = Tokens(ttl)
    metadata = ThreadingHTTPServer((host, metadata_port), metadata_handler(tokens, Placements(topology_file)))
    registry = ThreadingHTTPServer((host, registry_port), registry_handler(tokens, upstream))
    for server in (metadata, registry):
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
    return metadata, registry, tokens


def main(argv=None):
    parser = argparse.ArgumentParser(description="GCE metadata token endpoint and Artifact Registry front, for tests")
    parser.add_argument("--upstream", required=True, help="host:port of the registry that holds the images")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--metadata-port", type=int, default=0)
    parser.add_argument("--registry-port", type=int, default=0)
    parser.add_argument("--token-ttl", type=int, default=300)
    parser.add_argument("--topology-file", help="JSON: node address -> its physical_host and physical_host_topology")
    parser.add_argument("--ready-file")
    args = parser.parse_args(argv)
    try:
        metadata, registry, _tokens = serve(args.host, args.metadata_port, args.registry_port, args.upstream,
                                            args.token_ttl, args.topology_file)
    except OSError as exc:
        print("guest_services: cannot listen on %s: %s" % (args.host, exc), file=sys.stderr)
        return 1
    ready = {"metadata": "http://%s:%d" % metadata.server_address[:2],
             "registry": "%s:%d" % registry.server_address[:2]}
    if args.ready_file:
        with open(args.ready_file, "w") as fh:
            json.dump(ready, fh)
    print("guest_services: %s" % json.dumps(ready), file=sys.stderr, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
