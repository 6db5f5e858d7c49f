# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A playbook run by the real ansible-playbook on the local host n0, with the checkout's ansible.cfg."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def run(tmp_path, play, host_vars=None, extra_vars=None):
    """(rc, stdout + stderr) of `play` (YAML text) on n0 with host_vars."""
    host = dict({"ansible_connection": "local", "ansible_python_interpreter": sys.executable}, **(host_vars or {}))
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump({"all": {"hosts": {"n0": host}}}))
    (tmp_path / "play.yml").write_text(play)
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
            str(tmp_path / "play.yml"), "-e", json.dumps(extra_vars or {})]
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_INVENTORY_ENABLED="ansible.builtin.yaml")
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout + proc.stderr
