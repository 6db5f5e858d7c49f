# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RxDM's topology file from a node's PCI layout: the A3 High layout gives Google's file, whatever the names."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os
import shutil

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.rxdm import rxdm_topology

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "rxdm", "a3-high_ubuntu_gpu_rxq_configuration.textproto")
TOPOLOGY = families.FAMILIES["a3-high"]["rxdm"]["topology"]
UBUNTU = ["enp6s0", "enp12s0", "enp134s0", "enp140s0"]


def _sysfs_module():
    path = os.path.join(ROOT, "tests", "sandbox", "sandboxlib", "standin_sysfs.py")
    spec = importlib.util.spec_from_file_location("standin_sysfs", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


SYSFS = _sysfs_module()


def test_a3_high_layout_gives_the_published_file(tmp_path):
    root = SYSFS.write_tree(str(tmp_path / "sys"), UBUNTU)
    content, pairs = rxdm_topology.build(root, UBUNTU, TOPOLOGY)
    with open(FIXTURE) as fh:
        assert content == fh.read()
    assert pairs["enp134s0"] == ["0000:84:00.0", "0000:85:00.0"]


def test_the_node_names_its_own_interfaces(tmp_path):
    names = ["eth1", "eth2", "eth3", "eth4"]
    root = SYSFS.write_tree(str(tmp_path / "sys"), names)
    content, _pairs = rxdm_topology.build(root, names, TOPOLOGY)
    assert 'ifname: "eth3"' in content and "enp" not in content


def test_pairs_follow_the_switch_not_the_order_given(tmp_path):
    root = SYSFS.write_tree(str(tmp_path / "sys"), UBUNTU)
    _content, pairs = rxdm_topology.build(root, list(reversed(UBUNTU)), TOPOLOGY)
    assert pairs["enp6s0"] == ["0000:04:00.0", "0000:05:00.0"]


def test_flat_layout_pairs_by_nearest_bus(tmp_path):
    # no switches in the path (every device on the root bus): bus numbers decide
    root = str(tmp_path / "sys")
    for gpu0, gpu1, nic in SYSFS.A3_HIGH_SWITCHES:
        for bdf in (gpu0, gpu1):
            SYSFS._device(root, "", bdf, SYSFS.NVIDIA_3D)  # pylint: disable=protected-access
    for iface, (_g0, _g1, nic) in zip(UBUNTU, SYSFS.A3_HIGH_SWITCHES):
        path = SYSFS._device(root, "", nic, SYSFS.GVNIC)  # pylint: disable=protected-access
        os.makedirs(os.path.join(root, "class", "net", iface))
        os.symlink(path, os.path.join(root, "class", "net", iface, "device"))
    _content, pairs = rxdm_topology.build(root, UBUNTU, TOPOLOGY)
    assert pairs == {"enp6s0": ["0000:04:00.0", "0000:05:00.0"], "enp12s0": ["0000:0a:00.0", "0000:0b:00.0"],
                     "enp134s0": ["0000:84:00.0", "0000:85:00.0"], "enp140s0": ["0000:8a:00.0", "0000:8b:00.0"]}


def test_missing_nic_and_wrong_gpu_count_are_one_line(tmp_path):
    root = SYSFS.write_tree(str(tmp_path / "sys"), UBUNTU)
    with pytest.raises(rxdm_topology.TopologyError, match="GPU NIC enp7s0 has no PCI device"):
        rxdm_topology.build(root, ["enp7s0"], TOPOLOGY)
    shutil.rmtree(os.path.join(root, "devices", "pci0000:00", "0000:00:03.0", "0000:05:00.0"))
    os.unlink(os.path.join(root, "bus", "pci", "devices", "0000:05:00.0"))
    with pytest.raises(rxdm_topology.TopologyError, match="4 GPU NICs serve 2 GPUs each, but the node has 7"):
        rxdm_topology.build(root, UBUNTU, TOPOLOGY)
