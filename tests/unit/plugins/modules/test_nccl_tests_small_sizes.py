# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl_tests as a module: the small-size stage of runs across four nodes or more."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.modules import nccl_tests
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.nccl_tests.test_nccl_runner import (
    STANDIN_BIN, nodes, replay)
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_nccl_tests import run


def test_four_nodes_run_the_small_sizes_by_default_and_name_a_wrong_size(capsys):
    out = run(nccl_tests, {"family": "a3-mega", "hosts": nodes(4), "binary_dir": STANDIN_BIN,
                           "mpirun": "/usr/bin/true"}, capsys, executor=replay([], small_wrong={16: 1}), euid=0)
    assert out["verdict"] == "fail" and out["small_sizes"]["status"] == "fail"
    assert "all_gather at 16 B" in out["collectives"][0]["reasons"][0]
    small = [c for c in out["commands"] if c[c.index("-b") + 1] == "8"]
    assert len(small) == 1 and small[0][small[0].index("-e") + 1] == "64K"


def test_a_negative_node_count_is_one_line(capsys):
    out = run(nccl_tests, {"family": "a3-mega", "hosts": nodes(2), "binary_dir": STANDIN_BIN,
                           "small_min_nodes": -1}, capsys, executor=replay([]))
    assert out["failed"] is True and "small_min_nodes must be a node count" in out["msg"]
