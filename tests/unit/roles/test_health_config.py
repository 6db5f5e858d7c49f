# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node check's config, built by the shared role in a real play: a part the caller leaves out is
null (not an empty string, which ansible-core before 2.19 renders a lone null as, and which the
check would read as a part to run), and a part it asks for is there."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

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

    - name: Show it
      ansible.builtin.debug:
        msg: "config {{ gpudirect_health_config | to_json }}"
"""


def test_parts_left_out_are_null_and_the_asked_part_is_there(tmp_path):
    inv = {"all": {"hosts": {"n0": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                                    "gpu_family": "a3-mega"}}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inv))
    (tmp_path / "play.yml").write_text(PLAY)
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
            str(tmp_path / "play.yml")]
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_INVENTORY_ENABLED="ansible.builtin.yaml", ANSIBLE_STDOUT_CALLBACK="ansible.builtin.default")
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    (line,) = [ln for ln in out.splitlines() if '"msg": "config ' in ln]
    config = json.loads(json.loads("{%s}" % line.strip())["msg"][len("config "):])
    assert [k for k in ("gpu", "nics", "rxdm", "plugin", "maintenance") if config[k] is not None] == []
    assert config["profile"]["path"] == "/etc/nccl/nccl.env"
    assert config["family"] == "a3-mega"
