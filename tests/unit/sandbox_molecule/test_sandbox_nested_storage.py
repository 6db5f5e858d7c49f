# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Nested podman on a node: overlay storage on a volume of the node's own, never on its overlay root."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import configparser
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "sandbox"))
from sandboxlib import cluster, layout  # noqa: E402  pylint: disable=wrong-import-position
sys.path.pop(0)


def _storage():
    conf = configparser.ConfigParser()
    conf.read(os.path.join(ROOT, "tests", "sandbox", "node", "etc", "containers", "storage.conf"))
    return {key: value.strip('"') for key, value in conf["storage"].items()}


def test_every_node_has_its_container_storage_on_a_volume_overlay_can_use():
    storage = _storage()
    assert storage["driver"] == "overlay"
    assert storage["graphroot"].startswith(cluster.NESTED_STORAGE + "/")
    plan = layout.plan("unit", "a3-mega", 2, 150, layout.DEFAULT_VARIANT)
    for node in plan["nodes"]:
        argv = cluster._node_argv(plan, node, "image")
        assert argv[argv.index("--volume") + 1] == cluster.NESTED_STORAGE, node["name"]
