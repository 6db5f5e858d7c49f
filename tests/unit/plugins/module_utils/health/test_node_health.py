# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node health checks against a fake sysfs tree, real plugin files and env file in a temporary
root, and a fake container engine."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.nic.test_nic_sysfs import FakeSys
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_diagnose_modules import install

MACS = ["42:01:0a:00:%02x:02" % n for n in range(2)]
READY = "Buffer manager initialization complete"


class Node(object):
    """Answers `ip -j -4 addr show`, the engine's --version, inspect and logs, and systemctl show."""

    def __init__(self, running=True, ready=True, unit_state="active", ip_hangs=False):
        self.running, self.ready, self.unit_state, self.ip_hangs = running, ready, unit_state, ip_hangs
        self.addrs = {"eth1": "10.1.0.2", "eth2": "10.2.0.2"}

    def which(self, name):
        return {"ip": "/sbin/ip", "docker": "/usr/bin/docker", "systemctl": "/bin/systemctl"}.get(name)

    def run(self, argv):
        assert isinstance(argv, list)
        if argv[0] == "/sbin/ip":
            if self.ip_hangs:
                raise OSError("ip: timed out")
            return 0, json.dumps([{"ifname": k, "addr_info": [{"family": "inet", "local": v}]}
                                  for k, v in self.addrs.items()]), ""
        if argv[0] == "/bin/systemctl":
            return 0, "ActiveState=%s\nNRestarts=0\n" % self.unit_state, ""
        if argv[1] == "--version":
            return 0, "Docker version 24.0.9\n", ""
        if argv[1] == "inspect" and "{{.Config.Image}}" in argv:
            return 0, "us-docker.pkg.dev/x/tcpgpudmarxd-dev:v1.0.23\n", ""
        if argv[1] == "inspect":
            if not self.running:
                return 1, "", "Error: no such container"
            return 0, "true abc123 2026-11-25T10:00:00Z\n", ""
        if argv[1] == "logs":
            return 0, (READY + "\n") if self.ready else "starting\n", ""
        raise AssertionError("unexpected command %r" % argv)


def node_root(tmp_path, family="a3-mega", mtu=8244):
    fake = FakeSys(tmp_path)
    fake.nic("eth0", "42:01:0a:80:00:02", mtu=1460, pci="0000:05:00.0")
    fake.nic("eth1", MACS[0], mtu=mtu, pci="0000:06:00.0")
    fake.nic("eth2", MACS[1], mtu=8244, pci="0000:07:00.0")
    plugin, _files_dir = install(tmp_path, family)
    env = tmp_path / "etc/nccl/nccl.env"
    env.parent.mkdir(parents=True)
    env.write_text("NCCL_SOCKET_IFNAME=eth0\nLD_LIBRARY_PATH=%s\n" % plugin["lib_dir"])
    return plugin


def config(plugin, family="a3-mega"):
    fam = families.get_family(family)
    return {
        "family": family,
        "nics": [{"nic": "gpu%d" % n, "iface": "eth%d" % (n + 1), "mac": MACS[n], "expected_mtu": 8244,
                  "ip": "10.%d.0.2" % (n + 1), "network": "gpu-net-%d" % n} for n in range(2)],
        "rxdm": {"engine": "auto", "container": "receive-datapath-manager",
                 "unit": "receive-datapath-manager.service", "ready_line": READY},
        "plugin": {"record_file": ".gpudirect-installed"},
        "profile": {"path": "/etc/nccl/nccl.env", "iface_vars": ["NCCL_SOCKET_IFNAME"], "binding_vars": [],
                    "plugin_lib_dir": plugin["lib_dir"], "plugin_library": "libnccl-net.so"},
    } if fam else None


def check(tmp_path, cfg, node):
    return node_health.check(cfg, node.run, node.which, root=str(tmp_path))


def test_a_healthy_node_has_no_finding(tmp_path):
    plugin = node_root(tmp_path)
    result = check(tmp_path, config(plugin), Node())
    assert result["findings"] == []
    assert [n["mtu"] for n in result["nics"]] == [8244, 8244]
    assert result["rxdm"]["ready"] and result["plugin"]["intact"] and result["profile"]["consistent"]
    assert node_health.verdict(result["findings"]) == "pass"
    assert node_health.one_line(result["findings"]) == "healthy"


def test_each_fault_is_a_failing_finding_naming_its_subject(tmp_path):
    plugin = node_root(tmp_path, mtu=1460)
    (tmp_path / plugin["lib_dir"].lstrip("/") / "libnccl-net.so").unlink()
    (tmp_path / "etc/nccl/nccl.env").write_text("NCCL_SOCKET_IFNAME=eth9\n")
    result = check(tmp_path, config(plugin), Node(ready=False))
    got = sorted((f["component"], f["subject"], f["severity"]) for f in result["findings"])
    assert ("nic", "eth1", "fail") in got
    assert ("rxdm", "receive-datapath-manager", "fail") in got
    assert ("nccl_plugin", plugin["lib_dir"] + "/libnccl-net.so", "fail") in got
    # the variable at fault, as diagnose names it (nccl_env_file.findings, the rule both share)
    assert ("nccl_profile", "NCCL_SOCKET_IFNAME", "fail") in got
    nic = [f for f in result["findings"] if f["component"] == "nic"]
    assert nic[0]["cause"] == "mtu 1460, expected 8244" and len(nic) == 1
    assert not result["rxdm"]["ready"] and not result["plugin"]["intact"] and not result["profile"]["consistent"]
    assert node_health.verdict(result["findings"]) == "fail"
    assert node_health.one_line(result["findings"]).startswith("fail ")


def test_a_stopped_rxdm_names_its_unit_state(tmp_path):
    plugin = node_root(tmp_path)
    result = check(tmp_path, config(plugin), Node(running=False, unit_state="failed"))
    (rxdm,) = result["findings"]
    assert rxdm["severity"] == "fail" and "not running" in rxdm["cause"]
    assert "unit receive-datapath-manager.service is failed" in rxdm["cause"]


def test_a_check_that_cannot_run_warns_and_costs_no_other(tmp_path):
    plugin = node_root(tmp_path)
    node = Node(ip_hangs=True)
    node.which = {"ip": "/sbin/ip", "systemctl": "/bin/systemctl"}.get  # no engine
    result = check(tmp_path, config(plugin), node)
    # a hung ip says nothing about the NICs: a warning; no container engine on a node that needs RxDM means
    # RxDM cannot run: a failure, as diagnose says (rxdm_readiness.problems, the rule both share)
    assert sorted((f["component"], f["severity"]) for f in result["findings"]) == [("nic", "warn"), ("rxdm", "fail")]
    assert "cannot check RxDM: no container engine: " in [f for f in result["findings"] if f["component"] == "rxdm"][0][
        "cause"]
    assert result["plugin"]["intact"] and result["profile"]["consistent"]
    assert node_health.verdict(result["findings"]) == "fail"


def test_parts_not_configured_are_not_checked(tmp_path):
    plugin = node_root(tmp_path, family="a3-mega")
    cfg = dict(config(plugin), rxdm=None, plugin=None, profile=None)
    result = check(tmp_path, cfg, Node(running=False))
    assert result["findings"] == [] and result["rxdm"] is None and result["plugin"] is None


@pytest.mark.parametrize("change, message", [
    ({"family": ""}, "family: missing"),
    ({"nics": "eth1"}, "nics: must be a list of objects"),
    ({"nics": [{"expected_mtu": 8244}]}, "nics[0]: has neither iface, mac nor nic"),
    ({"peers": {"gpu-net-0": "10.1.0.3"}}, "peers: must map each GPU NIC to a list of addresses"),
    ({"rdma": "sometimes"}, "rdma: must be auto, required or skip"),
    ({"rxdm": {"engine": "docker"}}, "rxdm.container: missing"),
    ({"profile": "x"}, "profile: must be an object or null"),
])
def test_a_bad_config_is_one_line_naming_the_key(tmp_path, change, message):
    plugin = node_root(tmp_path)
    with pytest.raises(node_health.ConfigError) as exc:
        check(tmp_path, dict(config(plugin), **change), Node())
    assert str(exc.value) == message


class PingingNode(Node):
    """Answers ping out of eth1 and eth2; 10.2.0.9 never answers."""

    def __init__(self, **kwargs):
        Node.__init__(self, **kwargs)
        self.pinged = []

    def which(self, name):
        return "/bin/ping" if name == "ping" else Node.which(self, name)

    def run(self, argv):
        if argv[0] == "/bin/ping":
            self.pinged.append((argv[argv.index("-I") + 1], argv[argv.index("-s") + 1], argv[-1]))
            return (1, "1 packets transmitted, 0 received\n", "") if argv[-1] == "10.2.0.9" else (0, "", "")
        return Node.run(self, argv)


def test_each_nic_pings_its_networks_peers_at_full_size_and_a_lost_path_is_no_nic_finding(tmp_path):
    plugin = node_root(tmp_path)
    cfg = dict(config(plugin), peers={"gpu-net-0": ["10.1.0.3"], "gpu-net-1": ["10.2.0.9"]})
    node = PingingNode()
    result = check(tmp_path, cfg, node)
    assert node.pinged == [("eth1", "8216", "10.1.0.3"), ("eth2", "8216", "10.2.0.9")]
    assert [[p["ok"] for p in n["peers"]] for n in result["nics"]] == [[True], [False]]
    # a failed ping is a path's fault, judged across nodes on the controller: nothing of the NIC's own
    assert result["nics"][1]["local_problems"] == [] and not result["nics"][1]["ready"]
    assert result["findings"] == []


def test_a_nic_the_node_lacks_is_looked_up_by_mac_and_not_pinged(tmp_path):
    plugin = node_root(tmp_path)
    cfg = dict(config(plugin), peers={"gpu-net-0": ["10.1.0.3"]})
    cfg["nics"][0] = dict(cfg["nics"][0], iface=None, mac="42:01:0a:00:99:02")
    node = PingingNode()
    result = check(tmp_path, cfg, node)
    assert node.pinged == []
    assert [(f["subject"], f["cause"]) for f in result["findings"]] == [
        ("gpu0", "no interface with MAC 42:01:0a:00:99:02")]


def test_a_config_written_before_the_nic_map_records_is_read_the_same(tmp_path):
    """name and mtu, as the role wrote them before: the timer or a prolog may run between the agent's
    update and the config's."""
    plugin = node_root(tmp_path, mtu=1460)
    old = config(plugin)
    old["nics"] = [{"nic": n["nic"], "name": n["iface"], "mac": n["mac"], "mtu": n["expected_mtu"], "ip": n["ip"]}
                   for n in old["nics"]]
    new, was = check(tmp_path, config(plugin), Node()), check(tmp_path, old, Node())
    assert [(f["subject"], f["cause"]) for f in was["findings"]] == [("eth1", "mtu 1460, expected 8244")]
    assert was["findings"] == new["findings"]


def test_one_line_puts_the_failure_first_and_counts_the_rest():
    found = [node_health.finding("rxdm", "x", "warn", "cannot check"),
             node_health.finding("nic", "eth1", "fail", "down (no carrier)")]
    assert node_health.one_line(found) == "fail nic eth1: down (no carrier) (+1 more)"


def test_the_gpu_check_runs_first_and_leads_the_one_line(tmp_path):
    plugin = node_root(tmp_path)
    cfg = dict(config(plugin), gpu={"sys_dir": str(tmp_path / "no-sysfs")})
    result = check(tmp_path, cfg, Node(running=False))
    assert [f["component"] for f in result["findings"]] == ["gpu", "rxdm"]
    assert result["gpu"] == {"driver": None, "count": 0, "expected": 8, "gpus": [], "xids": [], "rdma_ports": []}
    assert node_health.one_line(result["findings"]).startswith(
        "fail gpu driver: the NVIDIA driver is not loaded")


def test_an_unknown_family_is_refused_in_one_line(tmp_path):
    cfg = dict(config(node_root(tmp_path)), family="a9")
    with pytest.raises(node_health.ConfigError) as err:
        node_health.validate(cfg)
    assert str(err.value) == "family: unknown family 'a9'"


def test_while_rxdm_runs_the_host_tuning_its_entrypoint_sets_is_checked(tmp_path):
    plugin = node_root(tmp_path)
    rp_filter = tmp_path / "proc/sys/net/ipv4/conf/eth1/rp_filter"
    rp_filter.parent.mkdir(parents=True)
    rp_filter.write_text("1\n")
    result = check(tmp_path, config(plugin), Node())
    assert [(f["component"], f["subject"], f["severity"]) for f in result["findings"]] == [
        ("rxdm", "host tuning", "fail")]
    assert "net.ipv4.conf.eth1.rp_filter is 1 (RxDM sets 0)" in result["findings"][0]["cause"]
    # RxDM stopped: its entrypoint has restored the host's own values, nothing to hold
    stopped = check(tmp_path, config(plugin), Node(running=False))
    assert [f["subject"] for f in stopped["findings"]] == ["receive-datapath-manager"]
