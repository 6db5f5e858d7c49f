"""The sandbox behaves like A3 Mega nodes wherever a container can."""

import json
import os
import subprocess
import sys

import testinfra
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
NAME = os.environ.get("GPUDIRECT_SANDBOX_NAME") or os.environ.get("MOLECULE_SCENARIO_NAME", "sandbox").replace("_", "-")
STATE = os.path.join(ROOT, "build", "sandbox", NAME)
INVENTORY = os.path.join(STATE, "inventory.yml")
REAL_IMAGE = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.23"

testinfra_hosts = ["ansible://gpu_nodes"]


def _inventory():
    with open(INVENTORY) as fh:
        return yaml.safe_load(fh)["all"]["children"]["gpu_nodes"]["hosts"]


def _node(index):
    name = "%s-node%d" % (NAME, index)
    # the inventory logs in as an ordinary user, as on GCE: root's view through sudo
    return name, _inventory()[name], testinfra.get_host("ansible://%s" % name, ansible_inventory=INVENTORY,
                                                        sudo=True)


def _mtu(host, iface):
    return int(host.file("/sys/class/net/%s/mtu" % iface).content_string.strip())


def _set_mtu(host, count, mtu):
    for index in range(1, count):
        host.run_test("ip link set dev eth%d mtu %d" % (index, mtu))


def test_systemd_is_pid1_and_running(host):
    assert host.check_output("ps -o comm= -p 1") == "systemd"
    assert host.run("systemctl is-system-running").stdout.strip() == "running"


def test_gpu_nics_start_at_guest_default_mtu(host):
    hvars = _inventory()[host.backend.get_hostname()]
    assert len(hvars["gpu_nics"]) == 8
    assert _mtu(host, "eth0") == hvars["gce_nics"][0]["mtu"] == 8244
    for index in range(1, len(hvars["gce_nics"])):
        assert _mtu(host, "eth%d" % index) == 1460, "eth%d" % index


def test_registry_refuses_anonymous_pulls_like_artifact_registry(host):
    manifest = ("http://gpudirect-registry.sandbox:5000/v2/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev/"
                "manifests/v1.0.23")
    probe = host.run("python3 -c 'import sys, urllib.request, urllib.error\n"
                     "try:\n urllib.request.urlopen(sys.argv[1], timeout=10)\n"
                     "except urllib.error.HTTPError as e:\n print(e.code, e.headers.get(\"WWW-Authenticate\"))' %s"
                     % manifest)
    assert probe.stdout.startswith("401 Basic realm="), probe.stdout + probe.stderr
    # podman without the helper's credentials (no ~/.docker/config.json, an empty auth file) is refused too
    host.run_test("mkdir -p /tmp/no-home && echo '{}' > /tmp/no-credentials.json")
    pull = host.run("HOME=/tmp/no-home REGISTRY_AUTH_FILE=/tmp/no-credentials.json podman pull %s" % REAL_IMAGE)
    assert pull.rc != 0
    assert "unauthorized" in (pull.stdout + pull.stderr).lower() or "401" in pull.stdout + pull.stderr


def test_nested_docker_pulls_standin_under_real_name(host):
    # with the service-account credential helper gpu_host sets up (prepare); no token is ever stored
    pull = host.run("docker pull %s" % REAL_IMAGE)
    assert pull.rc == 0, pull.stderr
    config = host.file("/root/.docker/config.json").content_string
    assert '"gpudirect-registry.sandbox:5000": "gce-metadata"' in config and "ya29" not in config
    auth = host.file("/run/containers/0/auth.json")
    assert not auth.exists or "ya29" not in auth.content_string
    out = host.run("docker run --rm --entrypoint /bin/cat %s /etc/gpudirect-standin" % REAL_IMAGE)
    assert out.rc == 0, out.stderr
    assert "STAND-IN" in out.stdout


def test_unknown_image_is_not_found(host):
    assert host.run("docker pull us-docker.pkg.dev/gce-ai-infra/no-such-image:v0").rc != 0


def test_gpu_networks_carry_the_vpc_mtu():
    """Full-size unfragmented pings cross every GPU network only once both ends are raised."""
    vars0, node0 = _node(0)[1:]
    vars1, node1 = _node(1)[1:]
    count = len(vars0["gce_nics"])
    mtu = vars0["gce_nics"][1]["mtu"]
    payload = mtu - 28
    try:
        for index in range(1, count):
            target = vars1["gce_nics"][index]["ip"]
            too_big = node0.run("ping -c 1 -W 2 -M do -s %d -I eth%d %s" % (payload, index, target))
            assert too_big.rc != 0, "eth%d sent %d bytes unfragmented at MTU 1460" % (index, payload)
            assert "message too long" in (too_big.stderr + too_big.stdout).lower()
        _set_mtu(node0, count, mtu)
        _set_mtu(node1, count, mtu)
        for index in range(1, count):
            target = vars1["gce_nics"][index]["ip"]
            ok = node0.run("ping -c 1 -W 2 -M do -s %d -I eth%d %s" % (payload, index, target))
            assert ok.rc == 0, "eth%d: %s" % (index, ok.stdout + ok.stderr)
    finally:
        _set_mtu(node0, count, 1460)
        _set_mtu(node1, count, 1460)


def test_restart_keeps_addresses_and_only_persisted_mtu():
    """A restart is a reboot: same addresses and MACs, GPU NICs back at 1460 unless configured."""
    name, hvars, node = _node(1)
    mtu = hvars["gce_nics"][1]["mtu"]
    before = node.check_output("ip -br address show eth1")
    node.run_test("printf '[Match]\\nName=eth1\\n\\n[Link]\\nMTUBytes=%d\\n\\n[Network]\\nKeepConfiguration=yes\\n' "
                  "> /etc/systemd/network/50-sandbox-test.network" % mtu)
    node.run_test("ip link set dev eth2 mtu %d" % mtu)  # not persisted: must not survive
    try:
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "sandbox", "sandbox.py"), "restart",
                        "--name", NAME, "--node", name], check=True, timeout=240)
        after = node.check_output("ip -br address show eth1")
        assert before.split()[2:] == after.split()[2:]
        for nic in hvars["gce_nics"]:
            iface = "eth" + nic["name"][3:]
            assert node.file("/sys/class/net/%s/address" % iface).content_string.strip() == nic["mac"]
        assert _mtu(node, "eth1") == mtu
        assert _mtu(node, "eth2") == 1460
        assert node.run("systemctl is-system-running").stdout.strip() == "running"
    finally:
        node.run("rm -f /etc/systemd/network/50-sandbox-test.network")


def test_up_starts_a_node_over_a_stale_address_lease():
    """A lease CNI left behind for a stopped node's fixed address must not stop `up` from starting it.

    CNI's host-local IPAM keeps one file per leased address; a container that went
    away without its network teardown leaves the file, and podman then refuses the
    node's own address ("requested IP address ... is not available")."""
    name, hvars, node = _node(1)
    with open(os.path.join(STATE, "state.json")) as fh:
        inv = json.load(fh)
    net = next(n for n in inv["networks"] if n["index"] == 1)
    lease_dir = os.path.join("/var/lib/cni/networks", net["name"])
    ip = hvars["gce_nics"][1]["ip"]
    subprocess.run(["podman", "stop", "-t", "10", name], check=True, timeout=120,
                   env=dict(os.environ, CONTAINERS_CONF=os.path.join(ROOT, "tests", "sandbox", "podman",
                                                                     "containers.conf")))
    os.makedirs(lease_dir, exist_ok=True)
    with open(os.path.join(lease_dir, ip), "w") as fh:
        fh.write("0123456789abcdef-left-by-a-removed-container\neth1")
    up = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "sandbox", "sandbox.py"), "up",
                         "--name", NAME, "--family", inv["family"], "--nodes", str(len(inv["nodes"])),
                         "--variant", inv.get("variant", "cos")],
                        capture_output=True, text=True, timeout=300, check=False)
    assert up.returncode == 0, up.stderr
    assert node.run("systemctl is-system-running").stdout.strip() == "running"
    assert ip in node.check_output("ip -br address show eth1")
