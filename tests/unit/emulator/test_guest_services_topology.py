# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The metadata server's placement attributes, served per calling node from a topology file, and
gce_topology_info's real HTTP client against them (guest_services.py started through its command line)."""

import json
import os
import socket
import subprocess
import sys
import time
from urllib.error import HTTPError
from urllib.request import Request, urlopen

import pytest

from ansible_collections.gpudirect.gcp.plugins.modules import gce_topology_info
# the module tests' autouse fixture: warnings come back in the result, each test with its own
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.conftest import (  # noqa: F401 pylint: disable=unused-import
    module_warnings)
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_gce_topology_info import warnings
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run as run_module

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SERVICES = os.path.join(ROOT, "tests", "emulator", "guest_services.py")
NODE = "127.0.0.1"  # every request of this test comes from here
TOPO = {"cluster": "c1", "block": "b1", "subBlock": "s1", "host": "h1"}

pytestmark = pytest.mark.emulator


class Metadata(object):
    """A running guest_services.py and its topology file."""

    def __init__(self, proc, url, path):
        self.proc, self.url, self.path = proc, url, path

    def place(self, nodes):
        """Give the nodes new answers: a new file renamed over the old one, as a harness would."""
        tmp = self.path + ".new"
        with open(tmp, "w") as fh:
            json.dump(nodes, fh)
        os.replace(tmp, self.path)

    def get(self, name, headers=None):
        req = Request("%s/instance/attributes/%s" % (self.url, name), headers=headers or {})
        try:
            with urlopen(req, timeout=5) as resp:
                return resp.status, resp.read().decode()
        except HTTPError as exc:
            return exc.code, exc.read().decode()


@pytest.fixture
def metadata(tmp_path):
    path, ready = str(tmp_path / "topology.json"), str(tmp_path / "ready.json")
    argv = [sys.executable, SERVICES, "--upstream", "127.0.0.1:9", "--host", NODE,
            "--topology-file", path, "--ready-file", ready]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 10
        while not os.path.exists(ready) or not os.path.getsize(ready):
            assert proc.poll() is None, proc.stderr.read()
            assert time.time() < deadline, "guest_services.py did not start"
            time.sleep(0.05)
        with open(ready) as fh:
            url = json.load(fh)["metadata"] + "/computeMetadata/v1"
        server = Metadata(proc, url, path)
        server.place({NODE: {"physical_host": "/pb/ps/ph", "physical_host_topology": TOPO}})
        yield server
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stderr.close()


def run(args, capsys):
    return run_module(gce_topology_info, dict(args, timeout=args.get("timeout", 5)), capsys)


def test_no_header_is_403_and_the_node_gets_its_own_answer(metadata):
    assert metadata.get("physical_host")[0] == 403
    flavor = {"Metadata-Flavor": "Google"}
    assert metadata.get("physical_host", flavor) == (200, "/pb/ps/ph")
    assert json.loads(metadata.get("physical_host_topology", flavor)[1]) == TOPO
    assert metadata.get("hostname", flavor)[0] == 404
    metadata.place({"10.0.0.9": {"physical_host": "/pb/ps/ph"}})
    assert metadata.get("physical_host", flavor)[0] == 404
    metadata.place(["not", "a", "mapping"])
    status, body = metadata.get("physical_host", flavor)
    assert status == 500 and body.startswith("topology file %s: " % metadata.path)


def test_module_prefers_the_json_and_reports_a_mismatch(metadata, capsys):
    out = run({"metadata_url": metadata.url, "expected": {"block": "b1", "subblock": "s2"}}, capsys)
    assert "failed" not in out and out["source"] == "physical_host_topology"
    assert out["topology"] == {"cluster": "c1", "block": "b1", "subblock": "s1",
                                                         "host": "h1"}
    assert out["mismatches"] == ["subblock: inventory says s2, node says s1"] and out["consistent"] is False
    assert warnings(out) == [out["msg"]]


def test_module_follows_the_file_as_it_changes(metadata, capsys):
    metadata.place({NODE: {"physical_host": "/pb/ps/ph"}})
    out = run({"metadata_url": metadata.url}, capsys)
    assert out["source"] == "physical_host" and out["topology"]["block"] == "pb"
    metadata.place({"10.0.0.9": {"physical_host": "/pb/ps/ph"}})
    out = run({"metadata_url": metadata.url}, capsys)
    assert "failed" not in out and out["source"] == "none" and out["topology"] == {}
    out = run({"metadata_url": metadata.url, "required": True}, capsys)
    assert out["failed"] is True and out["msg"].endswith("absent or empty); required is true")


def test_module_names_the_attribute_whose_json_is_bad(metadata, capsys):
    metadata.place({NODE: {"physical_host": "/pb/ps/ph", "physical_host_topology": "{cluster: c1"}})
    out = run({"metadata_url": metadata.url}, capsys)
    assert out["failed"] is True and out["msg"] == (
        "metadata server %s/instance/attributes/physical_host_topology: physical_host_topology is not JSON: "
        "'{cluster: c1'" % metadata.url)


def test_unreachable_server_is_one_line(capsys):
    with socket.socket() as sock:
        sock.bind((NODE, 0))
        port = sock.getsockname()[1]
    url = "http://%s:%d/computeMetadata/v1" % (NODE, port)
    out = run({"metadata_url": url, "timeout": 2}, capsys)
    assert out["failed"] is True and "\n" not in out["msg"] and "exception" not in out
    assert out["msg"].startswith("metadata server %s/instance/attributes/physical_host_topology cannot be reached: "
                                 % url)
