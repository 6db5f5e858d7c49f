# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A user's project directory as the quick start makes it (a copy of inventories/gcp with its
ansible.cfg), and the first errors a new user meets: each one line, rc not 0, soon.

Every address these tests reach is on this machine: the emulator and closed or
silent ports on loopback; the unresolvable name is under the reserved .invalid TLD."""

import configparser
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import pytest
import yaml

from ansible_collections.gpudirect.gcp.tests.unit.playbooks import _ansible_output as ansible_output

import compute_fleet as fx
import compute_harness as harness

pytestmark = pytest.mark.emulator

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
USER_CONFIG = os.path.join(ROOT, "inventories", "gcp")
BIN = os.path.dirname(sys.executable)
# what the quick start's `make install` gives: the collection where ansible looks for it
COLLECTIONS = os.path.join(ROOT, "build", "collections")


def closed_port():
    """A loopback port nobody listens on (connecting is refused at once)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


@pytest.fixture
def project_dir(tmp_path):
    """cp -r inventories/gcp my-cluster; the shipped inventory as mine.gce_gpu.yml."""
    dest = tmp_path / "my-cluster"
    shutil.copytree(USER_CONFIG, str(dest))
    os.rename(str(dest / "cluster.gce_gpu.yml"), str(dest / "mine.gce_gpu.yml"))
    (tmp_path / "home").mkdir()
    return dest


def inventory(project_dir, **options):
    """The shipped inventory file with these options changed (None removes one)."""
    path = project_dir / "mine.gce_gpu.yml"
    with open(str(path)) as handle:
        config = yaml.safe_load(handle)
    config.update({"projects": ["proj-a"], "filters": [], "cache": False, "zones": None})
    config.update(options)
    config = dict((k, v) for k, v in config.items() if v is not None)
    path.write_text(yaml.safe_dump(config))
    return config


def run(project_dir, args, env=None):
    """Run an Ansible CLI in the project directory with its ansible.cfg, as a user would:
    no ANSIBLE_* or Google variables from the test environment, an empty home directory.
    Returns (rc, the non-empty lines of stdout and stderr, stdout + stderr, seconds, stdout)."""
    home = str(project_dir.parent / "home")
    full_env = dict((k, v) for k, v in os.environ.items()
                    if not k.startswith(("ANSIBLE_", "GCP_", "GCE_", "GOOGLE_", "CLOUDSDK_")))
    closed = "127.0.0.1:%d" % closed_port()
    full_env.update({
        "HOME": home, "PATH": BIN + os.pathsep + os.environ.get("PATH", ""), "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_COLLECTIONS_PATH": COLLECTIONS,
        # google-auth's last resort is the GCE metadata server: point it at a closed loopback port
        "GCE_METADATA_HOST": closed, "GCE_METADATA_IP": closed, "NO_GCE_CHECK": "True",
        "CLOUDSDK_CONFIG": os.path.join(home, "gcloud")})
    full_env.update(env or {})
    started = time.monotonic()
    proc = subprocess.run([os.path.join(BIN, args[0])] + list(args[1:]), cwd=str(project_dir), env=full_env,
                          capture_output=True, text=True, timeout=120, check=False)
    took = time.monotonic() - started
    # one line per warning on every core (2.16 wraps them at 79 columns)
    text = ansible_output.text(proc.stdout + proc.stderr)
    return proc.returncode, [line for line in text.splitlines() if line.strip()], text, took, proc.stdout


# What the network may add before the error line: the connect timeout (2 s) and slack. Measured
# against the same command with an inventory that fails just before its first request (google-auth
# and requests imported), so that a busy CI machine's slower start does not count; on an idle
# 2-core machine the whole run takes 1.5 to 4 s.
WAIT_AT_MOST = 3.5


def startup(project_dir, args):
    """Seconds the CLI takes to fail on an inventory whose key file is missing (no request made)."""
    path = project_dir / "mine.gce_gpu.yml"
    kept = path.read_text()
    path.write_text("plugin: gpudirect.gcp.gce_gpu\nprojects: [proj-a]\nauth_kind: serviceaccount\n"
                    "service_account_file: /nonexistent/key.json\n")
    try:
        rc, lines, text, took, _out = run(project_dir, args)
    finally:
        path.write_text(kept)
    assert rc != 0 and "/nonexistent/key.json cannot be read" in text, text
    return took


GRAPH = ["ansible-inventory", "-i", "mine.gce_gpu.yml", "--graph"]
PLAYBOOK = ["ansible-playbook", "-i", "mine.gce_gpu.yml", "whoami.yml"]


@pytest.fixture
def whoami(project_dir):
    (project_dir / "whoami.yml").write_text("""---
- name: Show the SSH user of every node
  hosts: gpu_nodes
  gather_facts: false
  tasks:
    - name: The user the nodes are reached as
      ansible.builtin.debug:
        msg: "user={{ ansible_user }}"
""")


@pytest.fixture
def emulator(tmp_path):
    path = str(tmp_path / "fixture.yml")
    with open(path, "w") as handle:
        yaml.safe_dump(fx.mixed_fleet(), handle)
    with harness.ProcessEmulator(path, str(tmp_path)) as emu:
        yield emu


@pytest.fixture
def shared_vpc(tmp_path):
    path = str(tmp_path / "shared.yml")
    with open(path, "w") as handle:
        yaml.safe_dump(fx.shared_vpc_fleet(), handle)
    with harness.ProcessEmulator(path, str(tmp_path)) as emu:
        yield emu


def test_shipped_config_is_what_the_collection_needs():
    cfg = configparser.ConfigParser()
    assert cfg.read(os.path.join(USER_CONFIG, "ansible.cfg"))
    assert [p.strip() for p in cfg.get("inventory", "enable_plugins").split(",")] == ["gpudirect.gcp.gce_gpu"]
    assert cfg.getboolean("inventory", "any_unparsed_is_failed") is True
    assert cfg.getboolean("ssh_connection", "pipelining") is True
    assert cfg.get("defaults", "callbacks_enabled").strip() == "gpudirect.gcp.preload"
    assert cfg.getint("defaults", "forks") >= 16
    assert cfg.getboolean("defaults", "host_key_checking", fallback=True) is True


def test_the_quick_start_directory_lists_and_runs(emulator, project_dir, whoami):
    inventory(project_dir, api_endpoint=emulator.url, auth_kind="accesstoken", access_token="user-token")
    rc, lines, text, _took, _out = run(project_dir, GRAPH)
    assert rc == 0, text
    assert "@gpu_nodes:" in text and "mega-0" in text and "WARNING" not in text
    rc, lines, text, _took, _out = run(project_dir, PLAYBOOK + ["--limit", "mega-0"], env={"GPU_SSH_USER": "alice"})
    assert rc == 0, text
    assert '"msg": "user=alice"' in text  # group_vars/all.yml came along with the config


@pytest.mark.parametrize("args", [GRAPH, PLAYBOOK], ids=["graph", "playbook"])
def test_no_credentials_is_one_line_naming_the_ways(project_dir, whoami, args):
    inventory(project_dir, api_endpoint="http://127.0.0.1:%d" % closed_port())
    rc, lines, text, _took, _out = run(project_dir, args)
    assert rc != 0
    assert len(lines) == 1, text
    line = lines[0]
    assert "mine.gce_gpu.yml" in line
    for way in ("gcloud auth application-default login", "GOOGLE_APPLICATION_CREDENTIALS", "auth_kind"):
        assert way in line, line


@pytest.mark.parametrize("args", [GRAPH, PLAYBOOK], ids=["graph", "playbook"])
def test_unresolvable_api_host_is_named_at_once(project_dir, whoami, args):
    inventory(project_dir, api_endpoint="https://compute.gpudirect-test.invalid", auth_kind="accesstoken",
              access_token="user-token")
    rc, lines, text, took, _out = run(project_dir, args)
    assert rc != 0
    assert len(lines) == 1, text
    assert "compute.gpudirect-test.invalid" in lines[0] and "resolve" in lines[0], lines[0]
    assert took - startup(project_dir, args) < WAIT_AT_MOST, took


def test_refused_api_port_is_named_at_once(project_dir):
    endpoint = "http://127.0.0.1:%d" % closed_port()
    inventory(project_dir, api_endpoint=endpoint, auth_kind="accesstoken", access_token="user-token")
    rc, lines, text, took, _out = run(project_dir, GRAPH)
    assert rc != 0
    assert len(lines) == 1, text
    assert endpoint in lines[0] and "refused" in lines[0], lines[0]
    assert took - startup(project_dir, GRAPH) < WAIT_AT_MOST, took


@pytest.fixture
def silent_port():
    """A loopback port whose SYNs go unanswered: a listener with a full accept queue that
    never accepts, so the kernel drops every further connection attempt (a firewall that drops)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    fillers = []
    for _attempt in range(4):  # fill the accept queue; the ones past it stay half-open
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex(listener.getsockname())
        fillers.append(sock)
    time.sleep(0.2)
    probe = socket.socket()
    probe.settimeout(0.5)
    try:
        probe.connect(listener.getsockname())
        pytest.skip("this kernel accepted a connection past the full queue; no silent port to test with")
    except socket.timeout:
        pass
    finally:
        probe.close()
    yield listener.getsockname()[1]
    for sock in fillers + [listener]:
        sock.close()


@pytest.mark.parametrize("args", [GRAPH, PLAYBOOK], ids=["graph", "playbook"])
def test_silent_api_host_times_out_named_soon(project_dir, whoami, silent_port, args):
    endpoint = "http://127.0.0.1:%d" % silent_port
    inventory(project_dir, api_endpoint=endpoint, auth_kind="accesstoken", access_token="user-token")
    rc, lines, text, took, _out = run(project_dir, args)
    assert rc != 0
    assert len(lines) == 1, text
    assert "127.0.0.1:%d" % silent_port in lines[0] and "connect" in lines[0], lines[0]
    assert took - startup(project_dir, args) < WAIT_AT_MOST, took


@pytest.mark.parametrize("args", [GRAPH, PLAYBOOK], ids=["graph", "playbook"])
def test_shared_vpc_host_project_403_is_one_line(shared_vpc, project_dir, whoami, args):
    shared_vpc.set_faults({"forbidden_network_projects": ["net-host"]})
    inventory(project_dir, api_endpoint=shared_vpc.url, auth_kind="accesstoken", access_token="user-token",
              projects=["svc-proj"])
    rc, lines, text, _took, _out = run(project_dir, args)
    assert rc != 0
    assert len(lines) == 1, text
    line = lines[0]
    for part in ("project net-host", "mega-net-1", "compute.networks.get", "roles/compute.networkViewer",
                 "mega-0", "mega-1"):
        assert part in line, (part, line)
    assert "high-0" not in line and "null" not in line


def test_shared_vpc_mtu_comes_from_the_host_project(shared_vpc, project_dir):
    inventory(project_dir, api_endpoint=shared_vpc.url, auth_kind="accesstoken", access_token="user-token",
              projects=["svc-proj"])
    rc, lines, text, _took, out = run(project_dir, ["ansible-inventory", "-i", "mine.gce_gpu.yml", "--list"])
    assert rc == 0, text
    hostvars = harness.unwrap(json.loads(out))["_meta"]["hostvars"]
    assert [n["mtu"] for n in hostvars["mega-0"]["gpu_nics"]] == [8244] * 8
    assert hostvars["mega-0"]["gce_nics"][0]["mtu"] == 1460
    assert shared_vpc.stats()["by_project"].get("net-host", 0) >= 1


def test_shared_vpc_403_without_strict_permissions_leaves_those_hosts_out(shared_vpc, project_dir):
    shared_vpc.set_faults({"forbidden_network_projects": ["net-host"]})
    inventory(project_dir, api_endpoint=shared_vpc.url, auth_kind="accesstoken", access_token="user-token",
              projects=["svc-proj"], strict_permissions=False)
    rc, lines, text, _took, out = run(project_dir, GRAPH)
    assert rc == 0, text
    assert "high-0" in out and "mega-0" not in out
    warnings = [line for line in lines if line.startswith("[WARNING]")]
    assert len(warnings) == 1 and "net-host" in warnings[0] and "mega-0" in warnings[0], warnings
