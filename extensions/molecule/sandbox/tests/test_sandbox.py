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


def _state():
    with open(os.path.join(STATE, "state.json")) as fh:
        return json.load(fh)


def _ifaces(name):
    """The node's interface names in NIC order, as its image names them (nic0 first)."""
    return [nic["iface"] for nic in next(n for n in _state()["nodes"] if n["name"] == name)["nics"]]


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


def _set_mtu(host, ifaces, mtu):
    for iface in ifaces[1:]:
        host.run_test("ip link set dev %s mtu %d" % (iface, mtu))


def test_systemd_is_pid1_and_running(host):
    assert host.check_output("ps -o comm= -p 1") == "systemd"
    assert host.run("systemctl is-system-running").stdout.strip() == "running"


def test_gpu_nics_start_at_guest_default_mtu(host):
    hvars = _inventory()[host.backend.get_hostname()]
    assert len(hvars["gpu_nics"]) == 8
    ifaces = _ifaces(host.backend.get_hostname())
    assert _mtu(host, ifaces[0]) == hvars["gce_nics"][0]["mtu"] == 8244
    for iface in ifaces[1:]:
        assert _mtu(host, iface) == 1460, iface


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
    name0, vars0, node0 = _node(0)
    name1, vars1, node1 = _node(1)
    ifaces0, ifaces1 = _ifaces(name0), _ifaces(name1)
    mtu = vars0["gce_nics"][1]["mtu"]
    payload = mtu - 28
    try:
        for index, iface in enumerate(ifaces0[1:], 1):
            target = vars1["gce_nics"][index]["ip"]
            too_big = node0.run("ping -c 1 -W 2 -M do -s %d -I %s %s" % (payload, iface, target))
            assert too_big.rc != 0, "%s sent %d bytes unfragmented at MTU 1460" % (iface, payload)
            assert "message too long" in (too_big.stderr + too_big.stdout).lower()
        _set_mtu(node0, ifaces0, mtu)
        _set_mtu(node1, ifaces1, mtu)
        for index, iface in enumerate(ifaces0[1:], 1):
            target = vars1["gce_nics"][index]["ip"]
            ok = node0.run("ping -c 1 -W 2 -M do -s %d -I %s %s" % (payload, iface, target))
            assert ok.rc == 0, "%s: %s" % (iface, ok.stdout + ok.stderr)
    finally:
        _set_mtu(node0, ifaces0, 1460)
        _set_mtu(node1, ifaces1, 1460)


def test_restart_keeps_addresses_and_only_persisted_mtu():
    """A restart is a reboot: same addresses and MACs, GPU NICs back at 1460 unless configured."""
    name, hvars, node = _node(1)
    ifaces = _ifaces(name)
    mtu = hvars["gce_nics"][1]["mtu"]
    # persisted as a drop-in for the .network file netplan renders for the NIC at boot
    dropin = "/etc/systemd/network/10-netplan-%s.network.d" % ifaces[1]
    before = node.check_output("ip -br address show %s" % ifaces[1])
    node.run_test("mkdir -p %s && printf '[Link]\\nMTUBytes=%d\\n' > %s/50-sandbox-test.conf" % (dropin, mtu, dropin))
    node.run_test("ip link set dev %s mtu %d" % (ifaces[2], mtu))  # not persisted: must not survive
    try:
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "sandbox", "sandbox.py"), "restart",
                        "--name", NAME, "--node", name], check=True, timeout=240)
        after = node.check_output("ip -br address show %s" % ifaces[1])
        assert before.split()[2:] == after.split()[2:]
        for nic, iface in zip(hvars["gce_nics"], ifaces):
            assert node.file("/sys/class/net/%s/address" % iface).content_string.strip() == nic["mac"]
        assert _mtu(node, ifaces[1]) == mtu
        assert _mtu(node, ifaces[2]) == 1460
        assert node.run("systemctl is-system-running").stdout.strip() == "running"
    finally:
        node.run("rm -f %s/50-sandbox-test.conf" % dropin)


def test_up_starts_a_node_over_a_stale_address_lease():
    """A lease CNI left behind for a stopped node's fixed address must not stop `up` from starting it.

    CNI's host-local IPAM keeps one file per leased address; a container that went
    away without its network teardown leaves the file, and podman then refuses the
    node's own address ("requested IP address ... is not available")."""
    name, hvars, node = _node(1)
    inv = _state()
    net = next(n for n in inv["networks"] if n["index"] == 1)
    lease_dir = os.path.join("/var/lib/cni/networks", net["name"])
    ip = hvars["gce_nics"][1]["ip"]
    subprocess.run(["podman", "stop", "-t", "10", name], check=True, timeout=120,
                   env=dict(os.environ, CONTAINERS_CONF=os.path.join(ROOT, "tests", "sandbox", "podman",
                                                                     "containers.conf")))
    os.makedirs(lease_dir, exist_ok=True)
    with open(os.path.join(lease_dir, ip), "w") as fh:
        fh.write("0123456789abcdef-left-by-a-removed-container\n%s" % _ifaces(name)[1])
    up = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "sandbox", "sandbox.py"), "up",
                         "--name", NAME, "--family", inv["family"], "--nodes", str(len(inv["nodes"])),
                         "--variant", inv["variant"]],
                        capture_output=True, text=True, timeout=300, check=False)
    assert up.returncode == 0, up.stderr
    assert node.run("systemctl is-system-running").stdout.strip() == "running"
    assert ip in node.check_output("ip -br address show %s" % _ifaces(name)[1])
