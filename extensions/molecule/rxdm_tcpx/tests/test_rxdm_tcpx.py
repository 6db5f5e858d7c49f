# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""TCPX RxDM on an Ubuntu accelerator image node: topology file from the node, driver from the container toolkit."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

testinfra_hosts = ["ansible://gpu_nodes"]
UNIT = "/etc/systemd/system/receive-datapath-manager.service"
TOPOLOGY = "/opt/tcpdirect_benchmark/gpu_rxq_configuration.textproto"
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "tests", "fixtures",
                       "rxdm", "a3-high_ubuntu_gpu_rxq_configuration.textproto")


def test_node_looks_like_ubuntus_accelerator_image(host):
    assert not host.file("/var/lib/nvidia").exists
    assert host.file("/usr/lib/x86_64-linux-gnu/libcuda.so.1").exists
    assert host.interface("enp6s0").exists and not host.interface("eth1").exists


def test_topology_file_names_the_nodes_own_interfaces(host):
    with open(FIXTURE) as fh:
        assert host.file(TOPOLOGY).content_string == fh.read()


def test_unit_mounts_the_topology_and_no_cos_driver_directory(host):
    exec_start = [line for line in host.file(UNIT).content_string.splitlines() if line.startswith("ExecStart=")]
    assert len(exec_start) == 1
    line = exec_start[0]
    assert "--volume /opt/tcpdirect_benchmark:/opt/tcpdirect_benchmark" in line
    assert "--gpu_nic_preset manual --gpu_nic_topology " + TOPOLOGY in line
    assert "/var/lib/nvidia" not in line and "--gpus all" in line


def test_rxdm_runs_with_the_toolkits_driver(host):
    assert host.service("receive-datapath-manager").is_running
    info = json.loads(host.check_output("docker inspect receive-datapath-manager"))[0]
    assert info["State"]["Running"] is True
    mounts = dict((m["Destination"], m["Source"]) for m in info["Mounts"])
    # the toolkit (stand-in) injected libcuda.so.1; nothing is mounted at /usr/local/nvidia/lib64
    assert mounts["/usr/lib/x86_64-linux-gnu/libcuda.so.1"] == "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
    assert "/usr/local/nvidia/lib64" not in mounts
    logs = host.run("docker logs receive-datapath-manager")
    assert "STAND-IN: TCPX RxDM running" in logs.stdout + logs.stderr
