# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""sandbox.py add-node: one node more for a running sandbox, the others left as they were."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


@pytest.fixture(name="lib")
def _lib():
    sys.path.insert(0, os.path.join(ROOT, "tests", "sandbox"))
    try:
        from sandboxlib import cluster, common, layout  # pylint: disable=import-outside-toplevel
        import sandbox  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.pop(0)
    return cluster, common, layout, sandbox


def test_a_grown_plan_keeps_the_nodes_and_adds_the_next(lib):
    cluster, _common, layout, _sandbox = lib
    old = layout.plan("grow", "a3-mega", 5, 150)
    plan = cluster.grown_plan(old, layout.plan("grow", "a3-mega", 6, 150))
    # 6 nodes would spread over 2 blocks; the running 5 stay where they are
    assert plan["nodes"][:5] == old["nodes"]
    assert layout.plan("grow", "a3-mega", 6, 150)["nodes"][4]["topology"] != old["nodes"][4]["topology"]
    new = plan["nodes"][5]
    assert new["name"] == "grow-node5" and new["nics"][0]["ip"] == layout.address(150, 0, 5)


def test_a_plan_that_is_not_one_node_more_is_refused(lib):
    cluster, common, layout, _sandbox = lib
    with pytest.raises(common.SandboxError, match="one node more than grow's 2, not 4"):
        cluster.grown_plan(layout.plan("grow", "a3-mega", 2, 150), layout.plan("grow", "a3-mega", 4, 150))


def test_add_node_to_no_sandbox_is_one_line(lib, tmp_path, monkeypatch, capsys):
    cluster, common, _layout, sandbox = lib
    monkeypatch.setattr(common, "STATE_ROOT", str(tmp_path))
    assert sandbox.main(["add-node", "--name", "nosuch"]) == 1
    assert capsys.readouterr().err.strip() == "sandbox: error: no sandbox named nosuch (run `up --name nosuch`)"
