# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start and drive the Compute API emulator from tests and benchmarks."""

from __future__ import absolute_import, division, print_function

import json
import os
import re
import subprocess
import sys
import threading
import time

from urllib.request import Request, urlopen

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "compute_api.py")
if HERE not in sys.path:
    sys.path.insert(0, HERE)


class _Control(object):
    url = None

    def _call(self, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = Request(self.url + path, data=data, method="POST" if data is not None else "GET")
        with urlopen(req, timeout=10) as resp:
            return json.loads(resp.read().decode())

    def stats(self):
        return self._call("/_emulator/stats")

    def reset(self):
        return self._call("/_emulator/reset", {})

    def set_faults(self, faults):
        return self._call("/_emulator/faults", faults or {})

    def reports(self):
        """The reportHostAsFaulty calls the emulator accepted since the last reset."""
        return self._call("/_emulator/reports")

    def objects(self):
        """The Cloud Storage objects written since the last reset (bytes base64-encoded as data)."""
        return self._call("/_emulator/objects")

    def set_maintenance(self, instance, upcoming, project=None, zone=None):
        """Schedule (or reschedule) an instance's host maintenance as the API shows it (upcoming: the camel-case
        upcomingMaintenance object), or cancel it (upcoming None)."""
        body = {"instance": instance, "upcomingMaintenance": upcoming}
        body.update(dict((k, v) for k, v in (("project", project), ("zone", zone)) if v))
        return self._call("/_emulator/maintenance", body)


class ThreadEmulator(_Control):
    """The emulator's server in a thread of this process (fast, for unit tests)."""

    def __init__(self, fixture, page_size=None):
        import compute_api
        self.state = compute_api.State(fixture, page_size=page_size)
        self.server = compute_api.make_server(self.state)
        self.url = self.server.base_url
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


class ProcessEmulator(_Control):
    """The emulator as its own process, started through its command line."""

    def __init__(self, fixture_path, workdir, page_size=None, latency_ms=None, extra_args=None,
                 python=sys.executable):
        self.ready = os.path.join(workdir, "emulator.url")
        if os.path.exists(self.ready):
            os.unlink(self.ready)
        self.cmd = [python, SCRIPT, "--fixture", fixture_path, "--ready-file", self.ready]
        if page_size:
            self.cmd += ["--page-size", str(page_size)]
        if latency_ms is not None:
            self.cmd += ["--latency-ms", str(latency_ms)]
        self.cmd += list(extra_args or [])
        self.log = os.path.join(workdir, "emulator.log")
        self.proc = None

    def __enter__(self):
        self._log = open(self.log, "w")
        self.proc = subprocess.Popen(self.cmd, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while not os.path.exists(self.ready):
            if self.proc.poll() is not None or time.time() > deadline:
                self.__exit__()
                with open(self.log) as handle:
                    raise RuntimeError("emulator did not start: %s" % handle.read())
            time.sleep(0.02)
        with open(self.ready) as handle:
            self.url = handle.read().strip()
        return self

    def __exit__(self, *exc):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def make_service_account_key(path, token_uri, email="inventory@proj-a.iam.gserviceaccount.com",
                             project="proj-a"):
    """Write a freshly generated service account JSON key; return its public key (PEM)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()).decode()
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    info = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": "0123456789abcdef",
        "private_key": private_pem,
        "client_email": email,
        "client_id": "123456789",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": token_uri,
    }
    with open(path, "w") as handle:
        json.dump(info, handle)
    os.chmod(path, 0o600)
    return public_pem


def unwrap(value):
    """Strip ansible-inventory's {"__ansible_unsafe": ...} markers from --list output."""
    if isinstance(value, dict):
        if set(value) == {"__ansible_unsafe"}:
            return value["__ansible_unsafe"]
        return dict((k, unwrap(v)) for k, v in value.items())
    if isinstance(value, list):
        return [unwrap(v) for v in value]
    return value


def choice_error(option, value):
    """The line ansible-core gives for an option value outside its choices, as a pattern: 2.16 says
    'Invalid value "v" for configuration option "... setting: option "', 2.19 and newer
    "Invalid value 'v' for config 'option'"."""
    return re.compile(r"""Invalid value ['"]%s['"] for config(uration option "[^"]*setting: | ')%s\b"""
                      % (re.escape(value), re.escape(option)))
