# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_networkd_info: each interface's .network file from networkctl JSON, or its text per interface."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible.module_utils import basic

from ansible_collections.gpudirect.gcp.plugins.modules import host_networkd_info
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run as run_module

JSON = json.dumps({"Interfaces": [
    {"Name": "lo"},
    {"Name": "eth1", "NetworkFile": "/run/systemd/network/10-netplan-eth1.network"},
    {"Name": "eth2", "NetworkFile": None}]})
TEXT = """\u25cf 3: eth1
                     Link File: /usr/lib/systemd/network/99-default.link
                  Network File: /etc/systemd/network/10-eth1.network
                         State: routable (configured)
"""


def fake(monkeypatch, answers, tools=("networkctl",)):
    calls = []

    def run_command(self, argv, **kw):
        calls.append(argv)
        return answers[tuple(argv[1:])]
    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path",
                        lambda self, name, *a, **kw: "/usr/bin/" + name if name in tools else None)
    return calls


def test_reads_the_json_status(monkeypatch, capsys):
    calls = fake(monkeypatch, {("--json=short", "status"): (0, JSON, "")})
    out = run_module(host_networkd_info, {"interfaces": ["eth1", "eth2", "eth3"]}, capsys)
    assert out["changed"] is False and len(calls) == 1
    assert out["network_files"] == {"eth1": "/run/systemd/network/10-netplan-eth1.network", "eth2": "", "eth3": ""}


def test_falls_back_to_text_per_interface(monkeypatch, capsys):
    fake(monkeypatch, {("--json=short", "status"): (1, "", "networkctl: unrecognized option '--json=short'"),
                       ("status", "--no-pager", "eth1"): (0, TEXT, ""),
                       ("status", "--no-pager", "eth2"): (1, "", "Interface \"eth2\" not found.")})
    out = run_module(host_networkd_info, {"interfaces": ["eth1", "eth2"]}, capsys)
    assert out["network_files"] == {"eth1": "/etc/systemd/network/10-eth1.network", "eth2": ""}


def test_bad_input_and_missing_tool_are_one_line(monkeypatch, capsys):
    fake(monkeypatch, {}, tools=())
    out = run_module(host_networkd_info, {"interfaces": ["eth1"]}, capsys)
    assert out["failed"] and out["msg"] == "host_networkd_info: networkctl (systemd-networkd) is not installed"
    out = run_module(host_networkd_info, {"interfaces": ["../x"]}, capsys)
    assert out["failed"] and out["msg"] == "host_networkd_info: interfaces must be interface names, got '../x'"
