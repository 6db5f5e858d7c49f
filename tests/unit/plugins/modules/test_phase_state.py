# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""phase_state on a node: a record, then checks that find the node converged or say what differs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
from ansible.module_utils import basic

from ansible_collections.gpudirect.gcp.plugins.modules import phase_state
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run as run_module


@pytest.fixture
def node(tmp_path, monkeypatch):
    conf = tmp_path / "90-gpudirect.conf"
    conf.write_text("net.core.optmem_max = 131072\n")
    units = {"text": "LoadState=loaded\nActiveState=active\nUnitFileState=enabled\n"}
    calls = []

    def systemctl(self, argv, **kwargs):
        calls.append(argv)
        return 0, units["text"], ""

    monkeypatch.setattr(basic.AnsibleModule, "run_command", systemctl)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False, opt_dirs=None: "/bin/" + name)
    return {"conf": conf, "units": units, "calls": calls, "dir": str(tmp_path / "state")}


def args(node, **extra):
    return dict({"phase": "gpu_host", "digest": "d1", "directory": node["dir"]}, **extra)


def record(node, capsys, **extra):
    return run_module(phase_state, args(node, state="record", paths=[str(node["conf"])],
                                        units=["nvidia-persistenced.service"], result={"done": ["sysctl"]}, **extra),
                      capsys)


def test_no_record_is_not_converged(node, capsys):
    out = run_module(phase_state, args(node), capsys)
    assert out["converged"] is False and out["changed"] is False
    assert out["differences"] == ["no record of a finished gpu_host run on this node"]


def test_record_then_check_is_converged_with_the_recorded_result(node, capsys):
    out = record(node, capsys)
    assert out["changed"] is True
    path = os.path.join(node["dir"], "gpu_host.json")
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert "d1" == json.load(open(path))["digest"]
    out = run_module(phase_state, args(node), capsys)
    assert out["converged"] is True and out["differences"] == [] and out["result"] == {"done": ["sysctl"]}
    # the same record again writes nothing
    assert record(node, capsys)["changed"] is False


def test_a_changed_file_unit_or_digest_is_a_difference(node, capsys):
    record(node, capsys)
    node["conf"].write_text("net.core.optmem_max = 20480\n")
    node["units"]["text"] = "LoadState=loaded\nActiveState=failed\nUnitFileState=enabled\n"
    out = run_module(phase_state, args(node, digest="d2"), capsys)
    assert out["converged"] is False and out["result"] == {}
    assert out["differences"] == [
        "the phase's inputs or the collection's code changed since the recorded run",
        "%s: changed" % node["conf"],
        "unit nvidia-persistenced.service: LoadState=loaded ActiveState=failed UnitFileState=enabled, recorded "
        "LoadState=loaded ActiveState=active UnitFileState=enabled"]


def test_check_mode_and_diff_write_nothing(node, capsys):
    out = run_module(phase_state, args(node, state="record", paths=[str(node["conf"])], result={}), capsys,
                     check_mode=True, diff=True)
    assert out["changed"] is True and '"digest": "d1"' in out["diff"]["after"]
    assert not os.path.exists(os.path.join(node["dir"], "gpu_host.json"))


def test_absent_removes_the_record(node, capsys):
    record(node, capsys)
    out = run_module(phase_state, {"phase": "gpu_host", "state": "absent", "directory": node["dir"]}, capsys)
    assert out["changed"] is True and not os.path.exists(os.path.join(node["dir"], "gpu_host.json"))
    out = run_module(phase_state, {"phase": "gpu_host", "state": "absent", "directory": node["dir"]}, capsys)
    assert out["changed"] is False


def test_without_the_action_plugin_the_digest_is_missing_in_one_line(node, capsys):
    out = run_module(phase_state, {"phase": "gpu_host", "directory": node["dir"]}, capsys)
    assert out["failed"] and out["msg"].startswith("phase_state: digest: not set")


def test_a_stale_record_is_discarded_outside_check_mode(node, capsys):
    record(node, capsys)
    path = os.path.join(node["dir"], "gpu_host.json")
    node["conf"].write_text("net.core.optmem_max = 20480\n")
    out = run_module(phase_state, args(node), capsys, check_mode=True)
    assert out["converged"] is False and os.path.exists(path)
    out = run_module(phase_state, args(node), capsys)
    assert out["converged"] is False and out["changed"] is False and not os.path.exists(path)
    # a full run that fails now leaves no record: the next check takes the full path again
    node["conf"].write_text("net.core.optmem_max = 131072\n")
    out = run_module(phase_state, args(node), capsys)
    assert out["differences"] == ["no record of a finished gpu_host run on this node"]


def test_a_phase_name_that_could_leave_the_directory_is_one_line(node, capsys):
    out = run_module(phase_state, args(node, phase="../etc/passwd"), capsys)
    assert out["failed"] and out["msg"].startswith("phase_state: phase: '../etc/passwd' is not a phase name")
