# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node check's config, built by the shared role in a real play: a part the caller leaves out is
null (not an empty string, which ansible-core before 2.19 renders a lone null as, and which the
check would read as a part to run), and a part it asks for is there."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gpudirect.gcp.tests.unit.playbooks import _local_play as local_play

PLAY = """
- name: Health config
  hosts: n0
  gather_facts: false
  tasks:
    - name: Build the config for the profile part only
      ansible.builtin.include_role:
        name: gpudirect.gcp._common
        tasks_from: health_config
      vars:
        _common_health_parts: [profile]
        _common_internal: true

    - name: Show it
      ansible.builtin.debug:
        msg: "config {{ gpudirect_health_config | to_json }}"
"""


def test_parts_left_out_are_null_and_the_asked_part_is_there(tmp_path):
    rc, out = local_play.run(tmp_path, PLAY, {"gpu_family": "a3-mega"})
    assert rc == 0, out
    (line,) = [ln for ln in out.splitlines() if '"msg": "config ' in ln]
    config = json.loads(json.loads("{%s}" % line.strip())["msg"][len("config "):])
    assert [k for k in ("gpu", "nics", "rxdm", "plugin", "maintenance") if config[k] is not None] == []
    assert config["profile"]["path"] == "/etc/nccl/nccl.env"
    assert config["family"] == "a3-mega"


AGENT_CONFIG_PLAY = """
- name: The node_health role's config file
  hosts: n0
  gather_facts: false
  tasks:
    - name: Write the agent's config
      ansible.builtin.include_role:
        name: gpudirect.gcp.node_health
        tasks_from: config
"""


def test_the_agents_config_says_where_the_node_sits_and_nothing_where_the_inventory_does_not(tmp_path):
    topology = {"cluster": "c1", "block": "b1", "subblock": "s1", "host": "h-n0"}
    config = tmp_path / "health.json"
    settings = {"node_health_config_file": str(config), "node_health_run_now": False}
    for host_vars, place in (({"gpu_family": "a3-mega", "gce_topology": topology}, topology),
                             ({"gpu_family": "a3-mega"}, None)):
        if config.exists():
            config.unlink()
        rc, out = local_play.run(tmp_path, AGENT_CONFIG_PLAY, host_vars, settings)
        assert rc == 0, out
        assert json.loads(config.read_text()).get("place") == place
