# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GpuModule, the one wrapper every module is built on."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import json
import os
import subprocess
import time

import pytest
from ansible.module_utils import basic

from ansible_collections.gpudirect.gcp.plugins.module_utils._module import KILL_GRACE_S, TIMED_OUT, GpuModule
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules._module_args import patch_module_args

MODULES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "plugins", "modules")


def _names(path):
    with open(path) as fh:
        tree = ast.parse(fh.read(), path)
    return set(n.id for n in ast.walk(tree) if isinstance(n, ast.Name))


ACTIONS = os.path.join(MODULES, "..", "action")
DOC_ONLY = {"DOCUMENTATION", "EXAMPLES", "RETURN", "__metaclass__", "type"}


@pytest.mark.parametrize("name", sorted(f for f in os.listdir(MODULES) if f.endswith(".py")))
def test_every_module_is_built_on_gpu_module(name):
    names = _names(os.path.join(MODULES, name))
    action = os.path.join(ACTIONS, name)
    runs_on_node = False
    if os.path.exists(action):
        with open(action) as fh:
            # an action plugin that prepares its arguments on the controller, then runs the module on the node
            runs_on_node = '_execute_module(module_name="gpudirect.gcp.%s"' % name[:-3] in fh.read()
    if os.path.exists(action) and not runs_on_node:
        # the documentation of a controller-side action plugin: no code of its own
        assert names <= DOC_ONLY, sorted(names - DOC_ONLY)
    else:
        assert "GpuModule" in names and "AnsibleModule" not in names


def _gm(args=None, **kwargs):
    with patch_module_args(args or {}):
        return GpuModule(dict(path=dict(type="path")), **kwargs)


def test_executable_keeps_an_absolute_path_and_looks_up_a_name(monkeypatch):
    looked_up = []
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path",
                        lambda self, name, required=False, **kw: looked_up.append((name, required)) or "/bin/" + name)
    gm = _gm()
    assert gm.executable("/opt/podman") == "/opt/podman" and looked_up == []
    assert gm.executable("podman") == "/bin/podman" and looked_up == [("podman", True)]


def test_executable_not_found_is_one_line(capsys):
    with patch_module_args({}):
        gm = GpuModule({})
        with pytest.raises(SystemExit):
            gm.executable("no-such-engine-anywhere")
    out = json.loads(capsys.readouterr().out)
    assert out["failed"] and "no-such-engine-anywhere" in out["msg"] and "\n" not in out["msg"]


def test_diff_names_the_file_on_both_sides():
    assert GpuModule.diff(None, "a\n", "/etc/x") == {"before": "", "after": "a\n", "before_header": "/etc/x",
                                                     "after_header": "/etc/x"}


def test_commands_are_argument_lists():
    with pytest.raises(TypeError):
        _gm().run("echo hi")


def test_check_and_diff_mode_come_from_ansible():
    gm = _gm({"_ansible_check_mode": True, "_ansible_diff": True})
    assert gm.check_mode and gm.diff_mode
    gm = _gm()
    assert not gm.check_mode and not gm.diff_mode


def test_a_command_past_its_timeout_is_killed_and_says_so():
    gm = _gm()
    started = time.monotonic()
    rc, _out, err = gm.run(["sleep", "30"], timeout=0.5)
    assert time.monotonic() - started < 3
    assert rc == TIMED_OUT and err == "sleep did not finish within 0.5s: killed"
    # within its time a command is as run_command gives it
    assert gm.run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=10) == (3, "out\n", "err\n")


def test_a_command_a_kill_cannot_end_is_left_behind(monkeypatch):
    """nvidia-smi on a sick GPU sleeps in the driver, where SIGKILL waits until it comes back: the kill is
    made a no-op here to stand for that."""
    kill = subprocess.Popen.kill
    stuck = []

    def no_kill(proc):
        stuck.append(proc)

    monkeypatch.setattr(subprocess.Popen, "kill", no_kill)
    started = time.monotonic()
    try:
        rc, _out, err = _gm().run(["sleep", "30"], timeout=0.5)
    finally:
        for proc in stuck:
            kill(proc)
    assert time.monotonic() - started < 0.5 + KILL_GRACE_S + 1.5
    assert len(stuck) == 1 and rc == TIMED_OUT
    assert err == "sleep did not finish within 0.5s and could not be killed: left behind"
