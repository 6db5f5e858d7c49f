# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl_env_check shows the environment it read with credentials masked, each problem on one line."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible_collections.gpudirect.gcp.plugins.modules import nccl_env_check
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules._module_args import patch_module_args


def test_the_env_read_from_a_file_and_the_problems_keep_no_credential(tmp_path, capsys):
    (tmp_path / "net").mkdir()
    (tmp_path / "net" / "eth0").mkdir()
    envf = tmp_path / "nccl.env"
    envf.write_text("NCCL_SOCKET_IFNAME=https://u:pw-iface@h\nHF_TOKEN=hf-file\nNCCL_STORE=https://u:pw-file@h/\n")
    args = {"path": str(envf), "iface_vars": ["NCCL_SOCKET_IFNAME"], "sysfs_net": str(tmp_path / "net")}
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            nccl_env_check.main()
    out = json.loads(capsys.readouterr().out)
    flat = json.dumps(out)
    assert out["failed"] and "names interface" in out["msg"]
    for secret in ("pw-iface", "hf-file", "pw-file"):
        assert secret not in flat, secret
    assert out["env"]["HF_TOKEN"] == "********" and out["env"]["NCCL_STORE"] == "https://u:********@h/"
