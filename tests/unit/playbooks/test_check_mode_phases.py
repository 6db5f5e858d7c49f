# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NCCL phase of site.yml in check mode, run by ansible-playbook on local hosts: it says the tests do not
run in check mode and touches nothing (no SSH trust, no launcher), instead of failing on what only a real run
sets. The whole site.yml in check mode on sandbox nodes is the site Molecule scenario's side effect."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

import yaml

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_hosts

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))

import compute_fleet as fx  # noqa: E402  pylint: disable=wrong-import-position


def test_nccl_phase_in_check_mode_reports_and_does_nothing(tmp_path):
    # the hosts as the gce_gpu plugin makes them (host_vars: minimal)
    hosts = dict(("n%d" % i, gce_hosts.inventory_host(fx.gpu_instance("vm-%d" % i, "a3-mega", index=i), "p", {})[0])
                 for i in range(2))
    inv = {"gpu_nodes": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
                         "hosts": hosts}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inv))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
            os.path.join(ROOT, "playbooks", "phases", "nccl_tests.yml"), "--check", "--diff",
            "-e", "nccl_tests_ssh_dir=%s" % (tmp_path / "ssh")]
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_INVENTORY_ENABLED="ansible.builtin.yaml")
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "check mode - NCCL tests are not run" in proc.stdout
    assert "failed=0" in proc.stdout and "changed=0" in proc.stdout
    assert not (tmp_path / "ssh").exists()
