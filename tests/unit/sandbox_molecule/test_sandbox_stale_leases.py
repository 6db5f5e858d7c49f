# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stale CNI address leases: only those of nodes about to start go, others stay."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "sandbox"))
from sandboxlib import cluster, layout  # noqa: E402  pylint: disable=wrong-import-position
sys.path.pop(0)


def _lease(root, net, ip, text="c0ffee\neth1"):
    os.makedirs(os.path.join(root, net), exist_ok=True)
    path = os.path.join(root, net, ip)
    with open(path, "w") as fh:
        fh.write(text)
    return path


def test_removes_the_leases_of_the_given_nodes_only(tmp_path):
    plan = layout.plan("unit", "a3-mega", 2, 150)
    node0, node1 = plan["nodes"]
    mine = [_lease(str(tmp_path), nic["network"], nic["ip"]) for nic in node1["nics"]]
    kept = _lease(str(tmp_path), node0["nics"][1]["network"], node0["nics"][1]["ip"])
    other = _lease(str(tmp_path), node1["nics"][1]["network"], "10.150.1.99")

    removed = cluster.drop_stale_leases([node1], root=str(tmp_path))

    assert sorted(removed) == sorted(mine)
    assert not any(os.path.exists(p) for p in mine)
    assert os.path.exists(kept) and os.path.exists(other)


def test_no_lease_directory_is_no_error(tmp_path):
    plan = layout.plan("unit", "a3-high", 1, 150)
    assert cluster.drop_stale_leases(plan["nodes"], root=str(tmp_path / "absent")) == []
