# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_health_info and imex_config as modules: check mode, diff, idempotence, one line for bad input."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.modules import gpu_health_info, imex_config
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run


def test_gpu_health_info_without_a_driver_is_one_finding_in_any_mode(tmp_path, capsys):
    args = {"family": "a3-mega", "sys_dir": str(tmp_path)}
    out = run(gpu_health_info, args, capsys)
    assert out["changed"] is False and out["verdict"] == "fail"
    assert [f["subject"] for f in out["findings"]] == ["driver"]
    assert run(gpu_health_info, args, capsys, check_mode=True)["findings"] == out["findings"]


def test_gpu_health_info_unknown_family_is_one_line(capsys):
    out = run(gpu_health_info, {"family": "a9"}, capsys)
    assert out["failed"] and out["msg"].startswith("family: unknown family 'a9'")


def imex_args(tmp_path, monkeypatch, nodes=("10.0.0.3", "10.0.0.2")):
    conf = dict(families.FAMILIES["a4x"]["imex"], nodes_config=str(tmp_path / "nodes_config.cfg"),
                channel_dir=str(tmp_path / "channels"))
    monkeypatch.setitem(families.FAMILIES["a4x"], "imex", conf)
    (tmp_path / "devices").write_text("Character devices:\n237 nvidia-caps-imex-channels\n")
    return {"family": "a4x", "nodes": list(nodes), "proc_devices": str(tmp_path / "devices"),
            "modprobe_file": str(tmp_path / "gpudirect-imex.conf")}


def test_imex_config_check_mode_writes_nothing_and_shows_the_diff(tmp_path, monkeypatch, capsys):
    args = imex_args(tmp_path, monkeypatch)
    out = run(imex_config, args, capsys, check_mode=True, diff=True)
    assert out["changed"] and out["nodes_changed"] and out["channels"] == [str(tmp_path / "channels" / "channel0")]
    assert out["diff"][0]["after"] == "10.0.0.2\n10.0.0.3\n"
    assert not os.path.exists(str(tmp_path / "nodes_config.cfg"))


def test_imex_config_writes_once_then_changes_nothing(tmp_path, monkeypatch, capsys):
    args = imex_args(tmp_path, monkeypatch)
    first = run(imex_config, args, capsys)
    assert first["changed"] and (tmp_path / "nodes_config.cfg").read_text() == "10.0.0.2\n10.0.0.3\n"
    assert "NVreg_CreateImexChannel0=1" in (tmp_path / "gpudirect-imex.conf").read_text()
    assert os.major(os.stat(str(tmp_path / "channels" / "channel0")).st_rdev) == 237
    second = run(imex_config, args, capsys)
    assert second["changed"] is False and second["nodes_changed"] is False


def test_imex_config_bad_input_is_one_line(tmp_path, monkeypatch, capsys):
    out = run(imex_config, imex_args(tmp_path, monkeypatch, nodes=["node-a"]), capsys)
    assert out["failed"] and out["msg"] == "nodes: not an IPv4 address: 'node-a'"
    out = run(imex_config, {"family": "a3-mega", "nodes": ["10.0.0.2"]}, capsys)
    assert out["failed"] and "a3-mega has no multi-node NVLink domain" in out["msg"]
    args = imex_args(tmp_path, monkeypatch)
    (tmp_path / "devices").write_text("Character devices:\n195 nvidia\n")
    out = run(imex_config, args, capsys)
    assert out["failed"] and "registers no nvidia-caps-imex-channels device" in out["msg"]
