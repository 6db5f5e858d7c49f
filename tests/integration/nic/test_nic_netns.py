# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_nic_facts and gpu_nic_ready against real network namespaces joined by veth pairs.

Two namespaces play two nodes on one GPU VPC: each holds eth1 (one end of a
veth pair) at MTU 8244 with an address on 10.<x>.<y>.0/24.  The modules run
inside a namespace through ``ip netns exec`` (which also mounts that
namespace's /sys), exactly as Ansible would run them on a node.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import random
import subprocess
import sys
import time
import uuid

import pytest

pytestmark = pytest.mark.netns

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
COLLECTIONS = os.path.join(ROOT, "build", "collections")
VPC_MTU = 8244


def sh(*argv):
    """Run a command (argument list); fail the test with its stderr when it fails."""
    proc = subprocess.run(list(argv), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.fail("%s: %s" % (" ".join(argv), proc.stderr.strip()))
    return proc.stdout


class Pair(object):
    """Namespaces <tag>-a and <tag>-b, eth1 in each, joined by a veth pair."""

    def __init__(self):
        tag = "gpunic-%s" % uuid.uuid4().hex[:8]
        self.ns = {"a": tag + "-a", "b": tag + "-b"}
        subnet = "10.%d.%d" % (random.randint(100, 250), random.randint(0, 250))
        self.ip = {"a": subnet + ".1", "b": subnet + ".2"}
        self.mac = {"a": "02:00:00:%02x:%02x:01" % (random.randint(0, 255), random.randint(0, 255))}
        self.mac["b"] = self.mac["a"][:-2] + "02"
        self.made = []

    def up(self):
        for side in ("a", "b"):
            sh("ip", "netns", "add", self.ns[side])
            self.made.append(self.ns[side])
        tmp_a, tmp_b = "v%sa" % self.ns["a"][7:14], "v%sb" % self.ns["a"][7:14]
        sh("ip", "link", "add", tmp_a, "netns", self.ns["a"], "type", "veth", "peer", "name", tmp_b,
           "netns", self.ns["b"])
        for side, tmp in (("a", tmp_a), ("b", tmp_b)):
            self.ip_in(side, "link", "set", tmp, "name", "eth1")
            self.ip_in(side, "link", "set", "eth1", "address", self.mac[side], "mtu", str(VPC_MTU))
            self.ip_in(side, "addr", "add", self.ip[side] + "/24", "dev", "eth1")
            self.ip_in(side, "link", "set", "eth1", "up")
            self.ip_in(side, "link", "set", "lo", "up")
        return self

    def down(self):
        for ns in self.made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)

    def ip_in(self, side, *args):
        return sh("ip", "-n", self.ns[side], *args)

    def module(self, side, name, args, background=False):
        """Run a module inside a namespace as Ansible would: JSON args in, JSON result out."""
        path = os.path.join("/tmp", "%s-%s-args.json" % (self.ns[side], uuid.uuid4().hex[:6]))
        with open(path, "w") as handle:
            json.dump({"ANSIBLE_MODULE_ARGS": args}, handle)
        env = dict(os.environ, PYTHONPATH=COLLECTIONS)
        argv = ["ip", "netns", "exec", self.ns[side], sys.executable, "-m",
                "ansible_collections.gpudirect.gcp.plugins.modules." + name, path]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        if background:
            return proc, path
        return self.result(proc, path)

    @staticmethod
    def result(proc, path):
        out, err = proc.communicate(timeout=120)
        os.unlink(path)
        try:
            return json.loads(out)
        except ValueError:
            pytest.fail("module printed no JSON (rc %s): %s %s" % (proc.returncode, out, err))


@pytest.fixture
def pair():
    if os.geteuid() != 0:
        pytest.fail("these tests need root for `ip netns add` (run them as root)")
    p = Pair()
    try:
        yield p.up()
    finally:
        p.down()
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
        leftover = [ns for ns in p.made if ns in listed]
        assert not leftover, "namespaces left behind: %s" % leftover


def nic(pair, side="a"):
    return {"name": "eth1", "mtu": VPC_MTU, "ip": pair.ip[side]}


def test_ready_with_full_size_ping(pair):
    out = pair.module("a", "gpu_nic_ready", {"nics": [nic(pair)], "peers": {"eth1": [pair.ip["b"]]}})
    assert out.get("failed") is not True, out.get("msg")
    assert out["ready"] is True
    assert out["nics"][0]["peers"][0]["ok"] is True
    assert out["nics"][0]["peers"][0]["argv"][1:6] == ["-M", "do", "-s", str(VPC_MTU - 28), "-c"]


def test_mtu_mismatch_names_nic(pair):
    pair.ip_in("a", "link", "set", "eth1", "mtu", "1460")
    out = pair.module("a", "gpu_nic_ready", {"nics": [nic(pair)]})
    assert out["failed"] is True
    assert "eth1: mtu 1460, expected %d" % VPC_MTU in out["msg"]


def test_peer_at_smaller_mtu_fails_the_dont_fragment_ping(pair):
    # this node is right; the other end of the path is not, so only the ping can tell
    pair.ip_in("b", "link", "set", "eth1", "mtu", "1500")
    out = pair.module("a", "gpu_nic_ready", {"nics": [nic(pair)], "peers": {"eth1": [pair.ip["b"]]}})
    assert out["failed"] is True
    assert "eth1: ping -M do -s %d to %s failed" % (VPC_MTU - 28, pair.ip["b"]) in out["msg"]
    # and a normal-size ping still works, so the difference is the MTU alone
    sh("ip", "netns", "exec", pair.ns["a"], "ping", "-c", "1", "-W", "1", pair.ip["b"])


def test_link_down_on_the_peer_side(pair):
    pair.ip_in("b", "link", "set", "eth1", "down")
    out = pair.module("a", "gpu_nic_ready", {"nics": [nic(pair)]})
    assert out["failed"] is True
    assert "eth1: down (no carrier)" in out["msg"]


def test_link_administratively_down(pair):
    pair.ip_in("a", "link", "set", "eth1", "down")
    out = pair.module("a", "gpu_nic_ready", {"nics": [nic(pair)]})
    assert "eth1: down (administratively)" in out["msg"]


def test_missing_address_and_nic(pair):
    pair.ip_in("a", "addr", "flush", "dev", "eth1")
    out = pair.module("a", "gpu_nic_ready", {"nics": [nic(pair), {"name": "eth2", "mtu": VPC_MTU}]})
    assert out["msg"].endswith("2 of 2 GPU NICs not ready on %s: eth1: no IPv4 %s (has none); eth2: no such interface"
                               % (out["msg"].split(" on ", 1)[1].split(":", 1)[0], pair.ip["a"]))


def test_timeout_waits_for_the_mtu(pair):
    pair.ip_in("a", "link", "set", "eth1", "mtu", "1460")
    proc, path = pair.module("a", "gpu_nic_ready", {"nics": [nic(pair)], "timeout": 20, "poll_interval": 0.5},
                             background=True)
    time.sleep(2)
    pair.ip_in("a", "link", "set", "eth1", "mtu", str(VPC_MTU))
    out = pair.result(proc, path)
    assert out.get("failed") is not True, out.get("msg")
    assert out["ready"] is True and 1.0 <= out["elapsed"] < 20


def test_facts_map_by_mac_then_ip(pair):
    gpu_nics = [{"name": "nic1", "mac": pair.mac["a"].upper(), "ip": None, "mtu": VPC_MTU},
                {"name": "nic2", "mac": None, "ip": pair.ip["a"], "mtu": VPC_MTU}]
    out = pair.module("a", "gpu_nic_facts", {"gpu_nics": gpu_nics[:1]})
    facts = out["ansible_facts"]["gpu_nic_facts"]
    assert facts["gpu_ifaces"] == ["eth1"] and facts["gpu_nics"][0]["matched_by"] == "mac"
    out = pair.module("a", "gpu_nic_facts", {"gpu_nics": gpu_nics[1:]})
    facts = out["ansible_facts"]["gpu_nic_facts"]
    assert facts["gpu_nics"][0]["iface"] == "eth1" and facts["gpu_nics"][0]["matched_by"] == "ip"
    # what was read is in the result, not in the fact
    eth1 = out["interfaces"]["eth1"]
    assert eth1["mtu"] == VPC_MTU and eth1["ipv4"] == [pair.ip["a"]] and eth1["pci_address"] is None
    # only this namespace's interfaces are seen
    assert sorted(out["interfaces"]) == ["eth1"] and "interfaces" not in facts
    assert out["rdma_present"] is False


def test_an_ipv6_only_nic_is_mapped_by_its_address(pair):
    # as A4X Max's RDMA NICs: no IPv4 and no MAC in the record, only the IPv6 address the API gives
    pair.ip_in("a", "-6", "addr", "add", "fd47:ff::2/64", "dev", "eth1", "nodad")
    out = pair.module("a", "gpu_nic_facts", {"gpu_nics": [{"name": "nic2", "ipv6": "fd47:ff:0::2", "mtu": VPC_MTU}]})
    facts = out["ansible_facts"]["gpu_nic_facts"]
    assert facts["gpu_nics"][0]["iface"] == "eth1" and facts["gpu_nics"][0]["matched_by"] == "ipv6"
    assert out["interfaces"]["eth1"]["ipv6"] == ["fd47:ff::2"]
