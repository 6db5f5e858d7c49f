# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_network role on a node that runs a job, run by ansible-playbook inside a network namespace
(`ip netns exec`, which mounts the namespace's own /sys): the GPU NIC is one end of a veth pair, and
nvidia-smi prints a real capture (a job's process on the GPUs, or none). A drifted MTU on a busy node is
left as it is, the node is named in one line with what differs and the job, and marked; a first
configuration of an idle node sets the MTU; check mode and diff mode change nothing and still say what
they would do. (Records are off: each run takes the configuration steps, as a node that differs does.)"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import uuid

import pytest

from ansible_collections.gpudirect.gcp.tests.unit.roles import _job_stand_ins as stand_ins

pytestmark = pytest.mark.netns

VPC_MTU = 8244
MAC = "02:00:00:5e:10:01"
IP = "10.213.7.1"

PLAY = """
- name: GPU network
  hosts: n0
  become: false
  gather_facts: false
  tasks:
    - name: The role, its failure kept
      block:
        - name: Run the role
          ansible.builtin.include_role:
            name: gpudirect.gcp.gpu_network
      rescue:
        - name: Show the failure
          ansible.builtin.debug:
            msg: "failed: {{ ansible_failed_task.name }}: {{ ansible_failed_result.msg }}"
      always:
        - name: Show the mark
          ansible.builtin.debug:
            msg: "pending={{ gpu_network_change_pending }}"
"""


def ip(*args):
    proc = subprocess.run(["ip"] + list(args), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.fail("ip %s: %s" % (" ".join(args), proc.stderr.strip()))
    return proc.stdout


@pytest.fixture
def netns():
    """A namespace holding eth1 (a veth end with the GPU NIC's MAC and address) at MTU 1460, up."""
    if os.geteuid() != 0:
        pytest.fail("these tests need root for `ip netns add` (run them as root)")
    name = "gpunet-%s" % uuid.uuid4().hex[:8]
    ip("netns", "add", name)
    try:
        ip("-n", name, "link", "add", "eth1", "type", "veth", "peer", "name", "peer1")
        ip("-n", name, "link", "set", "eth1", "address", MAC, "mtu", "1460")
        ip("-n", name, "addr", "add", IP + "/24", "dev", "eth1")
        for link in ("lo", "peer1", "eth1"):
            ip("-n", name, "link", "set", link, "up")
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)


def mtu(netns):
    return int(ip("-n", netns, "-o", "link", "show", "eth1").split(" mtu ")[1].split()[0])


def run(tmp_path, netns, capture, *args):
    bins = stand_ins.bin_dir(tmp_path)
    stand_ins.gpus(tmp_path, capture)
    # the namespace runs no systemd: neither network manager runs
    stand_ins.script(bins / "systemctl", "#!/bin/sh\nfor u in 1 2; do printf 'LoadState=not-found\\nActiveState=inactive"
                     "\\nSubState=dead\\n\\n'; done\n")
    evars = {
        "gpu_family": "a3-mega",
        "gpu_nics": [{"name": "nic1", "mac": MAC, "ip": IP, "mtu": VPC_MTU, "network": "gpu-vpc-1"}],
        "gce_nics": [],
        # what persists the MTU needs a running network manager, which the namespace has none of
        "gpu_network_backend": "networkd", "gpu_network_persist": False, "gpu_network_wait_online": False,
        "gpu_network_phase_record": False, "gpu_network_ping_peers": False, "gpu_network_rdma": "skip",
        "gpu_network_ready_timeout_s": 5,
    }
    return stand_ins.run(tmp_path, PLAY, extra_vars=evars, args=args, prefix=["ip", "netns", "exec", netns])


def test_a_drifted_mtu_on_a_busy_node_is_left_as_it_is_and_named(tmp_path, netns):
    rc, out = run(tmp_path, netns, stand_ins.BUSY)
    assert mtu(netns) == 1460
    (line,) = [ln for ln in out.splitlines() if "gpu_network: link changes held back on n0" in ln]
    assert "n0 runs a job (busy: %s" % stand_ins.JOB in line
    assert "gpu_network_change_busy=skip" in line
    assert "pending=True" in out
    assert stand_ins.task_results(out, "Set the MTU at run time") == []
    assert stand_ins.task_results(out, "Give every GPU NIC its VPC's MTU and bring it up") == []
    # the proof still judges the node: its NIC is not at the VPC's MTU
    (failed,) = [ln for ln in out.splitlines() if '"msg": "failed: ' in ln]
    assert "Prove every GPU NIC is up, addressed and at its VPC MTU" in failed and "1460" in failed, failed


def test_a_node_that_cannot_be_read_keeps_its_links(tmp_path, netns):
    rc, out = run(tmp_path, netns, str(tmp_path / "no-such-capture.xml"))
    assert mtu(netns) == 1460
    assert "n0 is not known to be idle (unknown: could not read the GPU processes" in out, out


def test_an_idle_node_is_configured(tmp_path, netns):
    rc, out = run(tmp_path, netns, stand_ins.IDLE)
    assert rc == 0 and '"msg": "failed: ' not in out, out
    assert mtu(netns) == VPC_MTU
    assert "gpu_network: link changes held back" not in out and "pending=False" in out
    assert stand_ins.recap(out)["changed"] >= 1


def test_check_and_diff_mode_change_nothing_and_say_what_they_would_do(tmp_path, netns):
    rc, out = run(tmp_path, netns, stand_ins.IDLE, "--check", "--diff")
    assert rc == 0 and '"msg": "failed: ' not in out, out
    assert mtu(netns) == 1460
    assert stand_ins.task_results(out, "Give every GPU NIC its VPC's MTU and bring it up") == ["changed: [n0]"]
    assert "1460" in out and str(VPC_MTU) in out

    rc, out = run(tmp_path, netns, stand_ins.BUSY, "--check", "--diff")
    assert mtu(netns) == 1460
    assert "gpu_network: link changes held back on n0" in out
    assert stand_ins.task_results(out, "Give every GPU NIC its VPC's MTU and bring it up") == []
