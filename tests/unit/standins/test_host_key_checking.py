# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""SSH host keys are checked everywhere the project connects: on real clusters (ansible.cfg leaves checking on)
and in the sandbox, whose known_hosts holds the host keys it gave its nodes."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import configparser
import os
import sys

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def sandboxlib():
    sys.path.insert(0, os.path.join(ROOT, "tests", "sandbox"))
    try:
        from sandboxlib import cluster, inventory  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.pop(0)
    return cluster, inventory


def test_shipped_configuration_checks_host_keys():
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(ROOT, "ansible.cfg"))
    assert cfg.getboolean("defaults", "host_key_checking", fallback=True)
    with open(os.path.join(ROOT, "extensions", "molecule", "config.yml")) as fh:
        molecule = yaml.safe_load(fh)
    assert molecule["ansible"]["cfg"]["defaults"].get("host_key_checking", True) is not False


def test_sandbox_connections_check_against_its_own_known_hosts():
    cluster, inventory = sandboxlib()
    args = inventory.ssh_common_args("probe")
    assert "StrictHostKeyChecking=yes" in args and "StrictHostKeyChecking=no" not in args
    assert "UserKnownHostsFile=%s" % inventory.known_hosts_file("probe") in args
    assert "/dev/null" not in args
    with open(os.path.join(ROOT, "inventories", "sandbox", "group_vars", "gpu_nodes", "connection.yml")) as fh:
        demo = yaml.safe_load(fh)["ansible_ssh_common_args"]
    assert "StrictHostKeyChecking=yes" in demo and "known_hosts" in demo and "/dev/null" not in demo


def test_known_hosts_lists_each_node_key_at_its_address(tmp_path, monkeypatch):
    cluster, inventory = sandboxlib()
    monkeypatch.setattr(cluster.common, "STATE_ROOT", str(tmp_path))
    monkeypatch.setattr(inventory.common, "STATE_ROOT", str(tmp_path))
    plan = {"name": "probe", "nodes": [{"name": "probe-node%d" % i, "nics": [{"ip": "10.9.0.%d" % (10 + i)}]}
                                       for i in range(2)]}
    for node in plan["nodes"]:
        cluster._make_host_key("probe", node["name"])
    cluster._write_known_hosts(plan)
    lines = open(inventory.known_hosts_file("probe")).read().splitlines()
    assert [entry.split()[0] for entry in lines] == ["10.9.0.10", "10.9.0.11"]
    for node, line in zip(plan["nodes"], lines):
        pub = open(cluster.host_key_file("probe", node["name"]) + ".pub").read().split()
        assert line.split()[1:] == pub[:2]
