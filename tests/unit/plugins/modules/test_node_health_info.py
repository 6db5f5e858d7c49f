# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_health_info as a module on this machine's own interfaces: the agent's checks and findings, the
parts it is given and no others, one line for options it cannot use."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import subprocess
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health
from ansible_collections.gpudirect.gcp.plugins.modules import node_health_info
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run


def args(tmp_path):
    env = tmp_path / "nccl.env"
    env.write_text("NCCL_SOCKET_IFNAME=gpdx9\n")
    return {"family": "a3-mega",
            "gpu": {"sys_dir": str(tmp_path), "dcgm_level": 0},
            "nics": [{"nic": "gpu0", "iface": "gpdx9", "expected_mtu": 8244, "network": "gpu-net-0"}],
            "peers": {"gpu-net-0": ["127.0.0.1"]},
            "profile": {"path": str(env), "iface_vars": ["NCCL_SOCKET_IFNAME"]}}


def local_run(argv):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          check=False, timeout=30)
    return proc.returncode, proc.stdout, proc.stderr


def which(name):
    for folder in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/sbin", "/sbin"]:
        path = os.path.join(folder, name)
        if os.access(path, os.X_OK):
            return path
    return None


def keys(findings):
    return sorted((f["component"], f["subject"], f["severity"]) for f in findings)


def test_the_module_gives_the_agents_findings_for_the_same_node(tmp_path, capsys):
    out = run(node_health_info, args(tmp_path), capsys)
    assert out["changed"] is False and out["verdict"] == "fail"
    # no driver under the empty sysfs, a NIC the machine lacks, the profile naming it
    assert keys(out["findings"]) == [("gpu", "driver", "fail"), ("nccl_profile", "NCCL_SOCKET_IFNAME", "fail"),
                                     ("nic", "gpdx9", "fail")]
    assert [n["problems"] for n in out["nics"]] == [["no such interface"]]
    assert out["summary"].startswith("fail gpu driver: ")
    # a missing NIC is not pinged out of
    assert out["nics"][0]["peers"] == []
    config = dict(args(tmp_path), rdma="auto")
    config["gpu"] = dict(config["gpu"], imex_wait_s=0, dcgm_timeout_s=300, rdma_interval_s=1.0)
    agent = node_health.check(config, local_run, which)
    assert keys(agent["findings"]) == keys(out["findings"])
    assert steady(agent["findings"]) == steady(out["findings"])
    assert steady(run(node_health_info, args(tmp_path), capsys, check_mode=True)["findings"]) == steady(out["findings"])


def steady(findings):
    """The findings with the list of this machine's interfaces left out of each cause: containers that start
    or stop beside the test add and remove interfaces between two reads."""
    return [dict(f, cause=re.sub(r"\(it has [^)]*\)", "(it has ...)", f["cause"])) for f in findings]


def test_parts_left_unset_are_not_checked(tmp_path, capsys):
    given = args(tmp_path)
    out = run(node_health_info, {"family": "a3-mega", "profile": given["profile"]}, capsys)
    assert out["gpu"] is None and out["nics"] is None and out["rxdm"] is None and out["maintenance"] is None
    assert keys(out["findings"]) == [("nccl_profile", "NCCL_SOCKET_IFNAME", "fail")]
    assert out["profile"]["env"] == {"NCCL_SOCKET_IFNAME": "gpdx9"} and out["profile"]["present"] is True


def test_an_unreadable_profile_is_one_finding_naming_the_file(tmp_path, capsys):
    missing = str(tmp_path / "absent.env")
    out = run(node_health_info, {"family": "a3-mega", "profile": {"path": missing}}, capsys)
    assert keys(out["findings"]) == [("nccl_profile", missing, "fail")]
    assert out["profile"]["present"] is False and out["profile"]["error"]


def test_a_nic_with_neither_iface_mac_nor_name_is_one_line(tmp_path, capsys):
    out = run(node_health_info, {"family": "a3-mega", "nics": [{"expected_mtu": 8244}]}, capsys)
    assert out["failed"] and out["msg"] == "nics[0]: has neither iface, mac nor nic"


def test_a_nic_found_by_mac_alone_is_named_by_its_mac_when_missing(tmp_path, capsys):
    nic = {"nic": "gpu1", "iface": None, "mac": "42:01:0a:00:77:02", "expected_mtu": 8244}
    out = run(node_health_info, {"family": "a3-mega", "nics": [nic]}, capsys)
    assert [(n["name"], n["problems"]) for n in out["nics"]] == [
        ("gpu1", ["no interface with MAC 42:01:0a:00:77:02"])]


def test_an_unknown_family_is_one_line(capsys):
    out = run(node_health_info, {"family": "a9"}, capsys)
    assert out["failed"] and out["msg"] == "family: unknown family 'a9'"


def test_a_hung_nvidia_smi_is_a_finding_within_the_command_deadline(tmp_path, capsys, monkeypatch):
    """nvidia-smi on a sick GPU never answers: each call is given command_timeout_s, then the check goes on."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "nvidia-smi").write_text("#!/bin/sh\nexec sleep 60\n")
    (bindir / "nvidia-smi").chmod(0o755)
    monkeypatch.setenv("PATH", "%s:%s" % (bindir, os.environ["PATH"]))
    (tmp_path / "module" / "nvidia").mkdir(parents=True)
    (tmp_path / "module" / "nvidia" / "version").write_text(u"570.172.08\n")
    started = time.monotonic()
    out = run(node_health_info, {"family": "a3-mega", "gpu": {"sys_dir": str(tmp_path), "dcgm_level": 0},
                                 "command_timeout_s": 1}, capsys)
    assert time.monotonic() - started < 10, out
    assert not out.get("failed"), out
    causes = " | ".join(f["cause"] for f in out["findings"] if f["component"] == "gpu")
    assert "nvidia-smi did not finish within 1s: killed" in causes, out["findings"]
