# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one plugin/RxDM version pair choice and check, run by ansible-playbook on a local host.

A qualified pair passes quietly, an unlisted newer pair passes with one
warning that names it, a known-bad pair and (with gpudirect_strict_versions)
an unlisted pair stop the host in one line. A node's installed pair stays
unless the run sets gpudirect_change_pair, and the run says so.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import yaml

from ansible_collections.gpudirect.gcp.tests.unit.playbooks import _ansible_output as ansible_output

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

PLAYBOOK = """
- name: Version pair
  hosts: gpu_nodes
  gather_facts: false
  tasks:
    - name: Judge the pair
      ansible.builtin.include_role:
        name: gpudirect.gcp._common
        tasks_from: version_pair
      vars:
        _common_caller: test
        _common_internal: true

    - name: Show the chosen pair
      ansible.builtin.debug:
        msg: "chosen {{ gpudirect_pair.plugin }}/{{ gpudirect_pair.rxdm }} asked {{ gpudirect_pair.asked | to_json }}"
"""


def run(tmp_path, extra_vars):
    inv = {"gpu_nodes": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
                         "hosts": {"n0": {"gpu_family": "a3-mega"}}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inv))
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
            str(tmp_path / "play.yml"), "-e", json.dumps(extra_vars)]
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_INVENTORY_ENABLED="ansible.builtin.yaml")
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    return proc.returncode, ansible_output.text(proc.stdout + proc.stderr)


def test_qualified_pair_passes_without_warning(tmp_path):
    rc, out = run(tmp_path, {"nccl_plugin_version": "v1.0.16", "rxdm_version": "v1.0.22"})
    assert rc == 0, out
    assert "unqualified" not in out


def test_unlisted_newer_pair_passes_with_one_warning(tmp_path):
    rc, out = run(tmp_path, {"nccl_plugin_version": "v1.0.18", "rxdm_version": "v1.0.24"})
    assert rc == 0, out
    warnings = [line for line in out.splitlines() if "[WARNING]" in line and "unqualified" in line]
    assert len(warnings) == 1, out
    assert "plugin v1.0.18 with RxDM v1.0.24 is not in the a3-mega version table" in warnings[0]


def test_unlisted_pair_is_refused_when_strict(tmp_path):
    rc, out = run(tmp_path, {"nccl_plugin_version": "v1.0.18", "rxdm_version": "v1.0.24",
                             "gpudirect_strict_versions": True})
    assert rc == 2, out
    assert "strict version checking is on" in out and "nothing was changed on n0" in out


def test_known_bad_pair_is_refused(tmp_path):
    rc, out = run(tmp_path, {"nccl_plugin_version": "v1.0.7", "rxdm_version": "v1.0.13"})
    assert rc == 2, out
    assert "known bad pair on a3-mega" in out and "Traceback" not in out


# the node's installed pair, as preflight's version read leaves it
INSTALLED = {"gpudirect_installed_pair": {"plugin": "v1.0.15", "rxdm": "v1.0.21"}}


def test_the_installed_pair_stays_and_the_run_says_so(tmp_path):
    rc, out = run(tmp_path, INSTALLED)
    assert rc == 0, out
    assert "chosen v1.0.15/v1.0.21" in out
    assert ("test: 1 node(s) (n0): kept the installed pair plugin v1.0.15 / RxDM v1.0.21; the collection's default "
            "is plugin v1.0.17 / RxDM v1.0.23; gpudirect.gcp.upgrade_plugin moves it") in out


def test_an_empty_survey_is_no_ask(tmp_path):
    rc, out = run(tmp_path, dict(INSTALLED, nccl_plugin_version="", rxdm_version=""))
    assert rc == 0, out
    assert "chosen v1.0.15/v1.0.21" in out


def test_the_change_option_moves_the_pair_and_a_bad_ask_is_refused_even_when_kept(tmp_path):
    rc, out = run(tmp_path, dict(INSTALLED, gpudirect_change_pair=True))
    assert rc == 0, out
    assert "chosen v1.0.17/v1.0.23" in out and "kept the installed" not in out
    rc, out = run(tmp_path, dict(INSTALLED, nccl_plugin_version="v1.0.7", rxdm_version="v1.0.13"))
    assert rc == 2, out
    assert "known bad pair on a3-mega" in out


def test_a_wrapped_warning_is_one_line_and_quotes_are_plain():
    out = '[WARNING]: plugin v1 is not in the\ntable: accepted\n\nfatal: [n0]: FAILED! => {"msg": "job \\"x\\""}'
    assert ansible_output.text(out).splitlines() == [
        "[WARNING]: plugin v1 is not in the table: accepted", "", 'fatal: [n0]: FAILED! => {"msg": "job "x""}']


def test_the_pair_keeps_what_was_asked_so_a_later_role_asking_the_same_reuses_it(tmp_path):
    rc, out = run(tmp_path, {"nccl_plugin_version": "v1.0.16", "rxdm_version": "v1.0.22"})
    assert rc == 0, out
    assert 'asked {"family": "a3-mega", "plugin": "v1.0.16", "rxdm": "v1.0.22"}' in out
