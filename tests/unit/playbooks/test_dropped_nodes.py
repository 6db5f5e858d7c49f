# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""site.yml, run by ansible-playbook on local hosts one of which fails in preflight: the run names the node
that dropped out and the last phase it finished, even though the NCCL tests then refuse the partial cluster
and any_errors_fatal ends the playbook before its report phase."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# the configuration and readiness phases need a GPU VM; the always-tagged tasks of the others run
SKIPPED = "gpu_host,gpu_network,nccl_plugin,rxdm,nccl_profile,readiness"


def test_a_node_that_dropped_out_is_named_with_its_last_phase_when_the_nccl_tests_refuse(tmp_path):
    node = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    hosts = {"n0": node, "n1": node, "n2": dict(node, ansible_python_interpreter="/nonexistent/python")}
    inv = {"gpu_nodes": {"vars": {"gpu_family": "a3-mega", "gce_zone": "us-central1-a"}, "hosts": hosts}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inv))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
            os.path.join(ROOT, "playbooks", "site.yml"), "--tags", "nccl_tests", "--skip-tags", SKIPPED, "-e",
            json.dumps({"preflight_check_prerequisites": False, "preflight_check_firewalls": False})]
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_INVENTORY_ENABLED="ansible.builtin.yaml", GPUDIRECT_REPORT_DIR=str(tmp_path / "reports"))
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    out = proc.stdout
    assert proc.returncode == 2, out[-3000:]
    assert "A partial run does not validate the cluster" in out, out[-3000:]
    # n2 failed the first task of preflight: it finished no phase
    assert "1 of 3 node(s) dropped out (failed or unreachable; see the recap): n2 after phase none" in out, out[-3000:]
