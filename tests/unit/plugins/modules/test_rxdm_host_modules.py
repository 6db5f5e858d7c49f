# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_driver_info and rxdm_topology run as modules against temporary trees."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.module_utils import basic

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.modules import gpu_driver_info, rxdm_topology
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.rxdm.test_rxdm_topology import FIXTURE, SYSFS, UBUNTU
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run


def test_driver_info_on_an_ubuntu_style_node(tmp_path, capsys, monkeypatch):
    lib = tmp_path / "usr-lib"
    lib.mkdir()
    (lib / "libcuda.so.1").write_text("")
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path",
                        lambda self, name, *a, **k: "/usr/bin/nvidia-ctk" if name == "nvidia-ctk" else None)
    out = run(gpu_driver_info, {"cos_lib_dir": str(tmp_path / "nvidia"), "lib_dirs": [str(lib)]}, capsys)
    assert out["changed"] is False and out["source"] == "container_toolkit" and out["mount"] is None
    assert out["host_lib_dir"] == str(lib) and out["gpus_flag"] is True


def _topology_args(tmp_path, dest):
    topo = families.FAMILIES["a3-high"]["rxdm"]["topology"]
    args = dict((k, topo[k]) for k in ("gpus_per_nic", "queue_ids", "rss_set_size", "tcpd_queue_size",
                                       "max_rx_rules"))
    args.update(dest=str(dest), gpu_interfaces=UBUNTU,
                sysfs_root=SYSFS.write_tree(str(tmp_path / "sys"), UBUNTU))
    return args


def test_topology_check_mode_diff_then_write_then_unchanged(tmp_path, capsys):
    dest = tmp_path / "opt" / "tcpdirect_benchmark" / "gpu_rxq_configuration.textproto"
    args = _topology_args(tmp_path, dest)
    out = run(rxdm_topology, args, capsys, check_mode=True, diff=True)
    assert out["changed"] is True and not dest.exists()
    assert out["diff"]["before"] == "" and 'ifname: "enp6s0"' in out["diff"]["after"]
    out = run(rxdm_topology, args, capsys)
    assert out["changed"] is True and dest.read_text() == open(FIXTURE).read()
    assert oct(os.stat(str(dest)).st_mode & 0o777) == "0o644"
    assert run(rxdm_topology, args, capsys)["changed"] is False


def test_topology_bad_layout_is_one_line(tmp_path, capsys):
    args = _topology_args(tmp_path, tmp_path / "t.textproto")
    args["gpu_interfaces"] = ["enp6s0", "enp12s0", "enp134s0", "ens9"]
    out = run(rxdm_topology, args, capsys)
    assert out["failed"] is True and out["msg"].startswith("rxdm_topology: GPU NIC ens9 has no PCI device")


def test_topology_over_a_symlink_diffs_from_nothing_and_leaves_its_target(tmp_path, capsys):
    """The write replaces the link with a file: the diff must not show the other file the link points at."""
    target = tmp_path / "elsewhere.textproto"
    target.write_text("someone else's file\n")
    dest = tmp_path / "opt" / "gpu_rxq_configuration.textproto"
    dest.parent.mkdir()
    dest.symlink_to(target)
    args = _topology_args(tmp_path, dest)
    out = run(rxdm_topology, args, capsys, check_mode=True, diff=True)
    assert out["changed"] is True and out["diff"]["before"] == ""
    out = run(rxdm_topology, args, capsys)
    assert out["changed"] is True and not dest.is_symlink() and dest.read_text() == open(FIXTURE).read()
    assert target.read_text() == "someone else's file\n"


def test_topology_onto_a_directory_is_one_line(tmp_path, capsys):
    dest = tmp_path / "gpu_rxq_configuration.textproto"
    dest.mkdir()
    out = run(rxdm_topology, _topology_args(tmp_path, dest), capsys)
    assert out["failed"] is True
    assert out["msg"] == "rxdm_topology: dest %s is a directory; it must name a file" % dest
