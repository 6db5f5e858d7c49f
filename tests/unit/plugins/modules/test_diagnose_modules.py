# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The modules the day-2 diagnosis reads nodes with, and its report: run as modules on files in a temporary
directory, the container engine and systemd answered by fakes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
from xml.etree import ElementTree as ET

from ansible.module_utils import basic

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl import plugin_installer as pi
from ansible_collections.gpudirect.gcp.plugins.modules import (nccl_env_check, nccl_plugin_info, nccl_tests_report,
                                                               rxdm_readiness)
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run


def install(root, family, files=None):
    """Lay out a family's plugin files under root and record them as the install module does."""
    plugin = families.get_family(family)["plugin"]
    files_dir = os.path.join(str(root), plugin["files_dir"].lstrip("/"))
    for name in files if files is not None else plugin["files"]:
        path = os.path.join(files_dir, name)
        if not os.path.isdir(os.path.dirname(path)):
            os.makedirs(os.path.dirname(path))
        with open(path, "w") as fh:
            fh.write("STAND-IN %s\n" % name)
    record = {"image": plugin["image"], "tag": plugin["version"], "digest": None,
              "manifest": pi.manifest(files_dir, plugin["files"])}
    pi.write_record(os.path.join(str(root), plugin["install_dir"].lstrip("/"), pi.RECORD_FILE), record)
    return plugin, files_dir


def test_plugin_info_reports_missing_and_modified_files_by_absolute_path(tmp_path, capsys):
    plugin, files_dir = install(tmp_path, "a3-mega")
    clean = run(nccl_plugin_info, {"family": "a3-mega", "root": str(tmp_path)}, capsys)
    assert clean["missing"] == [] and clean["modified"] == [] and not clean["changed"]
    assert clean["record"]["tag"] == plugin["version"] and clean["ld_so_conf"] is None
    os.unlink(os.path.join(files_dir, "libnccl-net.so"))
    with open(os.path.join(files_dir, "libnccl.so.2"), "a") as fh:
        fh.write("patched\n")
    bad = run(nccl_plugin_info, {"family": "a3-mega", "root": str(tmp_path)}, capsys, check_mode=True)
    assert bad["missing"] == [plugin["lib_dir"] + "/libnccl-net.so"]
    assert bad["modified"] == [plugin["lib_dir"] + "/libnccl.so.2"]


def test_plugin_info_without_record_and_gib_linker_registration(tmp_path, capsys):
    none = run(nccl_plugin_info, {"family": "a3-high", "root": str(tmp_path)}, capsys)
    assert none["record"] is None and len(none["missing"]) == len(families.get_family("a3-high")["plugin"]["files"])
    plugin, _dir = install(tmp_path, "a4")
    conf = tmp_path / plugin["ld_so_conf"].lstrip("/")
    gib = run(nccl_plugin_info, {"family": "a4", "root": str(tmp_path)}, capsys)
    assert gib["ld_so_conf"] == {"path": plugin["ld_so_conf"], "lib_dir": plugin["lib_dir"], "present": False,
                                 "registered": False}
    conf.parent.mkdir(parents=True)
    conf.write_text("# managed\n%s/\n" % plugin["lib_dir"])
    assert run(nccl_plugin_info, {"family": "a4", "root": str(tmp_path)}, capsys)["ld_so_conf"]["registered"]


def test_plugin_info_refuses_bad_input_in_one_line(tmp_path, capsys):
    out = run(nccl_plugin_info, {"family": "h100"}, capsys)
    assert out["failed"] and out["msg"].startswith("family: unknown GPU family 'h100'")
    out = run(nccl_plugin_info, {"family": "a3-mega", "record_file": "../x"}, capsys)
    assert out["failed"] and "not a plain file name" in out["msg"]


def test_env_check_reads_the_node_file(tmp_path, capsys):
    net = tmp_path / "net"
    for name in ("lo", "eth0", "eth1"):
        (net / name).mkdir(parents=True)
    env_file = tmp_path / "nccl.env"
    args = {"path": str(env_file), "iface_vars": ["NCCL_SOCKET_IFNAME"], "sysfs_net": str(net)}
    missing = run(nccl_env_check, args, capsys)
    assert missing["failed"] and missing["present"] is False and "cannot read the NCCL env file" in missing["msg"]
    env_file.write_text("# header\nNCCL_SOCKET_IFNAME=eth0,eth9\nNCCL_DEBUG=WARN\n")
    bad = run(nccl_env_check, args, capsys)
    assert bad["failed"] and bad["present"] and bad["env"] == {"NCCL_SOCKET_IFNAME": "eth0,eth9", "NCCL_DEBUG": "WARN"}
    assert bad["problems"] == ["NCCL_SOCKET_IFNAME names interface eth9, which this node does not have "
                               "(it has eth0, eth1, lo)"]
    assert bad["msg"].startswith(str(env_file) + ": ")
    env_file.write_text("NCCL_SOCKET_IFNAME=eth0\n")
    assert not run(nccl_env_check, args, capsys).get("failed")
    both = run(nccl_env_check, dict(args, env={"A": "1"}), capsys)
    assert both["failed"] and "mutually exclusive" in both["msg"]


def test_readiness_reports_image_unit_state_and_restarts(monkeypatch, capsys):
    def fake(self, argv, **kw):
        if argv[1] == "inspect" and "{{.Config.Image}}" in argv:
            return 0, "registry/tcpgpudmarxd-dev:v1.0.21\n", ""
        if argv[1] == "inspect":
            return 1, "", "no such container"
        if argv[1] == "show":
            assert argv[-1] == "rxdm.service"
            return 0, "ActiveState=activating\nNRestarts=7\n", ""
        if argv[1] == "logs":
            return 1, "", ""
        if argv[0] == "journalctl":
            return 0, "rxdm: exited\n", ""
        raise AssertionError(argv)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", fake)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/usr/bin/" + name)
    out = run(rxdm_readiness, {"engine": "/usr/bin/docker", "unit": "rxdm.service", "timeout_s": 0,
                               "interval_s": 0.01}, capsys)
    assert out["failed"] and out["reason"] == "container receive-datapath-manager is not running"
    assert out["image"] == "registry/tcpgpudmarxd-dev:v1.0.21"
    assert out["unit_state"] == "activating" and out["restarts"] == 7


FINDINGS = [
    {"host": "n1", "component": "nic", "subject": "eth3", "severity": "fail", "cause": "mtu 1460, expected 8244",
     "repair": "ansible-playbook gpudirect.gcp.site --limit n1 --tags gpu_network", "extra": "dropped"},
    {"host": None, "component": "fabric", "subject": "nccl-tests", "severity": "warn",
     "cause": "not run: 1 of 2 node(s) passed the node checks <b>", "repair": None},
]


def test_report_is_written_with_findings_when_no_nccl_test_ran(tmp_path, capsys):
    diagnosis = {"fail": 1, "warn": 1, "hosts": 2, "failed_hosts": ["n1"], "clean_hosts": ["n0"], "verdict": "fail"}
    out = run(nccl_tests_report, {"findings": FINDINGS, "hosts": ["n0", "n1"], "diagnosis": diagnosis,
                                  "dest": str(tmp_path), "run_id": "diagnose-1"}, capsys, check_mode=False)
    assert out["changed"] and out["summary"]["diagnosis"]["failed_hosts"] == ["n1"]
    report = json.load(open(out["files"]["json"]))
    # the findings as the run has them: no place where the inventory knew none
    assert report["findings"][0] == dict((k, v) for k, v in FINDINGS[0].items() if k != "extra")
    assert report["findings"][1]["host"] is None and report["diagnosed_hosts"] == ["n0", "n1"]
    suite = ET.parse(out["files"]["junit"]).getroot().find("testsuite[@name='diagnose']")
    cases = suite.findall("testcase")
    # 2 hosts x the 10 components every node check judges (a running job's only with a finding), and the
    # cluster's finding
    assert len(cases) == 21
    failed = [(c.get("classname"), c.get("name")) for c in cases if c.find("failure") is not None]
    assert failed == [("diagnose.n1", "nic")]
    html = open(out["files"]["html"]).read()
    assert html.index("Findings") < html.index("NCCL tests: not run")
    assert "Diagnosis: <span style=\"color:#c33\">FAIL</span>" in html
    assert "&lt;b&gt;" in html and "<b>" not in html.split("Findings")[1]
    assert "--limit n1 --tags gpu_network" in html
