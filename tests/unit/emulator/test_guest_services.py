# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The metadata token endpoint, the authenticating registry front, and the node's credential helper against them."""

import base64
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.error import HTTPError
from urllib.request import Request, urlopen

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))

import guest_services  # noqa: E402

HELPER = os.path.join(ROOT, "roles", "gpu_host", "files", "gce_metadata_credentials.py")
MANIFEST = b'{"schemaVersion": 2}'


class _Upstream(BaseHTTPRequestHandler):
    """A registry that serves one manifest to anybody (the local registry behind the front)."""

    def log_message(self, fmt, *args):  # pylint: disable=arguments-differ
        pass

    def do_GET(self):  # pylint: disable=invalid-name
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.oci.image.manifest.v1+json")
        self.send_header("Content-Length", str(len(MANIFEST)))
        self.send_header("Docker-Content-Digest", "sha256:abc")
        self.end_headers()
        self.wfile.write(MANIFEST)


@pytest.fixture
def services():
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    metadata, registry, tokens = guest_services.serve("127.0.0.1", 0, 0, "127.0.0.1:%d" % upstream.server_port, 60)
    yield {"metadata": "127.0.0.1:%d" % metadata.server_port, "registry": "127.0.0.1:%d" % registry.server_port,
           "tokens": tokens}
    for server in (metadata, registry, upstream):
        server.shutdown()


def _get(url, headers=None):
    try:
        with urlopen(Request(url, headers=headers or {}), timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def _basic(user, secret):
    return {"Authorization": "Basic " + base64.b64encode(("%s:%s" % (user, secret)).encode()).decode()}


def test_token_endpoint_needs_the_metadata_flavor_header(services):
    url = "http://%s%s" % (services["metadata"], guest_services.TOKEN_PATH)
    assert _get(url)[0] == 403
    status, _headers, body = _get(url, {"Metadata-Flavor": "Google"})
    token = json.loads(body)
    assert status == 200 and token["token_type"] == "Bearer" and token["expires_in"] == 60
    assert services["tokens"].valid(token["access_token"])


def test_registry_refuses_anonymous_and_unknown_credentials(services):
    url = "http://%s/v2/gce-ai-infra/x/manifests/v1" % services["registry"]
    status, headers, body = _get(url)
    assert status == 401 and headers["WWW-Authenticate"].startswith("Basic realm=")
    assert json.loads(body)["errors"][0]["code"] == "UNAUTHORIZED"
    assert _get(url, _basic("oauth2accesstoken", "ya29.made-up"))[0] == 401
    token = services["tokens"].issue()
    assert _get(url, _basic("someone", token))[0] == 401
    status, headers, body = _get(url, _basic("oauth2accesstoken", token))
    assert status == 200 and body == MANIFEST and headers["Docker-Content-Digest"] == "sha256:abc"


def test_expired_tokens_and_writes_are_refused(services):
    url = "http://%s/v2/x/manifests/v1" % services["registry"]
    token = services["tokens"].issue()
    services["tokens"].live[token] = 0
    assert _get(url, _basic("oauth2accesstoken", token))[0] == 401
    req = Request(url, data=b"{}", method="PUT", headers=_basic("oauth2accesstoken", services["tokens"].issue()))
    with pytest.raises(HTTPError) as exc:
        urlopen(req, timeout=10)
    assert exc.value.code == 405


def _helper(config, action, stdin=""):
    env = dict(os.environ, GPUDIRECT_REGISTRY_AUTH_CONFIG=str(config))
    return subprocess.run([sys.executable, HELPER, action], input=stdin, capture_output=True, text=True,
                          env=env, timeout=30, check=False)


def test_credential_helper_gets_a_token_the_registry_accepts(services, tmp_path):
    config = tmp_path / "registry-auth.json"
    config.write_text(json.dumps({"registries": [services["registry"]], "metadata_host": services["metadata"]}))
    proc = _helper(config, "get", services["registry"])
    assert proc.returncode == 0, proc.stdout
    creds = json.loads(proc.stdout)
    assert creds["Username"] == "oauth2accesstoken" and creds["ServerURL"] == services["registry"]
    url = "http://%s/v2/x/manifests/v1" % services["registry"]
    assert _get(url, _basic(creds["Username"], creds["Secret"]))[0] == 200
    # nothing is kept: store and erase accept and forget, list is empty
    assert _helper(config, "store", json.dumps(creds)).returncode == 0
    assert _helper(config, "list").stdout.strip() == "{}"


def test_credential_helper_refusals_name_no_token(services, tmp_path):
    config = tmp_path / "registry-auth.json"
    config.write_text(json.dumps({"registries": ["us-docker.pkg.dev"], "metadata_host": "127.0.0.1:9"}))
    proc = _helper(config, "get", "https://docker.io")
    assert proc.returncode == 1 and "credentials not found" in proc.stdout
    proc = _helper(config, "get", "https://us-docker.pkg.dev")
    assert proc.returncode == 1 and "no token from the metadata server http://127.0.0.1:9" in proc.stdout
    assert "ya29" not in proc.stdout + proc.stderr
