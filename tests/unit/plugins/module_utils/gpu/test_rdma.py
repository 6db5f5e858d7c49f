# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The RDMA ports of the GPU NICs: present, ACTIVE on Ethernet, at the MTU the VPC allows, and not
flapping or dropping packets between two reads."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import rdma

DEVICES = ["mlx5_0", "mlx5_1"]
EXPECTED = {"rdma_devices": DEVICES, "vpc_mtu": 8896}


def tree(root, devices=None, state="4: ACTIVE", link_layer="Ethernet"):
    for index, dev in enumerate(devices or DEVICES):
        port = root / "class" / "infiniband" / dev / "ports" / "1"
        (port / "counters").mkdir(parents=True)
        (port / "hw_counters").mkdir()
        (port / "state").write_text(state + "\n")
        (port / "phys_state").write_text("5: LinkUp\n" if "ACTIVE" in state else "3: Disabled\n")
        (port / "link_layer").write_text(link_layer + "\n")
        for rel in ("counters/link_downed", "hw_counters/out_of_sequence", "hw_counters/local_ack_timeout_err"):
            (port / rel).write_text("7\n")
        (root / "class" / "infiniband" / dev / "device" / "net" / ("gpu%drdma0" % index)).mkdir(parents=True)


def devinfo(mtu=4096, rc=0):
    def run(argv):
        return rc, "hca_id:\t%s\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tactive_mtu:\t\t%d (5)\n" % (
            argv[2], mtu), "" if rc == 0 else "Failed to get IB_DEVICE"
    return run


def which(name):
    return "/usr/bin/" + name


def check(root, run=None, sleep=lambda s: None, expected=None, which_=which):
    expected = expected or EXPECTED
    ev = rdma.gather(expected["rdma_devices"], run or devinfo(), which_, sys_dir=str(root), interval_s=0.5,
                     sleep=sleep)
    return ev, rdma.judge(expected, ev)


def keyed(found):
    return sorted((f["subject"], f["severity"], f["rung"]) for f in found)


@pytest.mark.parametrize("netdev_mtu, roce", [(8896, 4096), (8244, 4096), (4154, 4096), (4153, 2048),
                                              (1460, 1024), (200, None)])
def test_roce_mtu_is_the_largest_ib_mtu_the_netdev_carries(netdev_mtu, roce):
    assert rdma.roce_mtu(netdev_mtu) == roce


def test_a_healthy_node_has_no_finding_and_every_port_in_its_summary(tmp_path):
    tree(tmp_path)
    ev, found = check(tmp_path)
    assert found == []
    assert rdma.ports_summary(ev) == [
        {"device": d, "port": "1", "state": "ACTIVE", "active_mtu": 4096, "errors": 0} for d in DEVICES]


def test_a_port_down_a_missing_device_and_the_wrong_link_layer_are_named(tmp_path):
    tree(tmp_path, devices=["mlx5_0"], state="1: DOWN")
    _ev, found = check(tmp_path)
    assert keyed(found) == [("mlx5_0 port 1", "fail", "reboot"), ("mlx5_1", "fail", "reboot")]
    assert "port is DOWN (physical state Disabled)" in found[0]["cause"]
    other = tmp_path / "ib"
    tree(other, link_layer="InfiniBand")
    _ev, found = check(other)
    assert keyed(found) == [("mlx5_0 port 1", "fail", "report_host"), ("mlx5_1 port 1", "fail", "report_host")]


def test_counters_that_rise_while_we_watch_name_a_flapping_and_an_erroring_port(tmp_path):
    tree(tmp_path)
    port = tmp_path / "class" / "infiniband" / "mlx5_1" / "ports" / "1"

    def sleep(_seconds):
        (port / "counters" / "link_downed").write_text("9\n")
        (port / "hw_counters" / "out_of_sequence").write_text("47\n")
    _ev, found = check(tmp_path, sleep=sleep)
    assert keyed(found) == [("mlx5_1 port 1", "fail", "report_host"), ("mlx5_1 port 1", "warn", "rerun")]
    assert found[0]["cause"].startswith("flapping: the link went down 2 time(s) in ")
    assert found[1]["cause"].startswith("erroring: 40 packet(s) out of sequence in ")


def test_an_active_mtu_below_what_the_vpc_allows_points_at_the_nic_phase(tmp_path):
    tree(tmp_path)
    _ev, found = check(tmp_path, run=devinfo(mtu=1024))
    assert keyed(found) == [("mlx5_0 port 1", "fail", "rerun"), ("mlx5_1 port 1", "fail", "rerun")]
    assert found[0]["phase"] == "nic" and "active MTU 1024, expected 4096 for the VPC MTU 8896" in found[0]["cause"]


def test_a_missing_tool_is_could_not_run_never_a_port_fault(tmp_path):
    tree(tmp_path)
    _ev, found = check(tmp_path, which_=lambda name: None)
    assert keyed(found) == [("RDMA active MTU", "warn", "rerun")]
    assert found[0]["cause"].startswith("could not run: ibv_devinfo is not on PATH")
    _ev, found = check(tmp_path, run=devinfo(rc=1))
    assert [f["cause"] for f in found] == ["could not run: ibv_devinfo -d mlx5_0 exited 1: Failed to get IB_DEVICE"]


def test_a_family_without_rdma_devices_reads_nothing(tmp_path):
    calls = []
    ports, found = rdma.check(families.FAMILIES["a3-mega"], calls.append, which,
                              sys_dir=str(tmp_path), sleep=calls.append)
    assert (ports, found, calls) == ([], [], [])


def test_every_rdma_family_checks_its_devices(tmp_path):
    for name, fam in families.FAMILIES.items():
        if fam.get("rdma_devices"):
            root = tmp_path / name
            tree(root, devices=fam["rdma_devices"])
            ports, found = rdma.check(fam, devinfo(), which, sys_dir=str(root), sleep=lambda s: None)
            assert found == [] and len(ports) == len(fam["rdma_devices"]), name
            assert os.path.isdir(str(root / "class" / "infiniband"))
