# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""phase_state run by real ansible-playbook: the controller's digest follows the inputs, not the result or
what inputs_exclude names."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
PLAY = """
- hosts: localhost
  gather_facts: false
  vars:
    demo_sysctl: {net.core.optmem_max: "{{ optmem }}"}
    demo_result: "{{ 'anything' ~ noise }}"
    demo_phase_record: "{{ noise }}"
    demo_peers: "{{ [noise] }}"
  tasks:
    - name: Check
      gpudirect.gcp.phase_state:
        phase: demo
        inputs_from: [demo_]
        inputs_exclude: [demo_peers]
        directory: "{{ dir }}"
      register: before
    - name: Record
      gpudirect.gcp.phase_state:
        phase: demo
        state: record
        digest: "{{ before.digest }}"
        directory: "{{ dir }}"
        paths: ["{{ dir }}/conf"]
        result: {done: ["{{ optmem }}"]}
      when: record | bool
    - name: Show
      ansible.builtin.debug:
        msg: "RESULT={{ before | to_json }}"
"""


def play(tmp_path, optmem, record, noise=1):
    book = tmp_path / "play.yml"
    book.write_text(PLAY)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    extra = {"dir": str(tmp_path / "state"), "optmem": optmem, "record": record, "noise": noise,
             "ansible_python_interpreter": sys.executable}
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
            str(book), "-e", json.dumps(extra)]
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=120, check=False)
    for line in proc.stdout.splitlines():
        if '"msg": "RESULT=' in line:
            return json.loads(json.loads("{" + line.strip().rstrip(",") + "}")["msg"][len("RESULT="):])
    raise AssertionError(proc.stdout)


def test_digest_follows_the_inputs_and_ignores_result_switch_and_excluded(tmp_path):
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "conf").write_text("x\n")
    assert play(tmp_path, 131072, True)["converged"] is False
    out = play(tmp_path, 131072, False, noise=2)
    assert out["converged"] is True and out["result"] == {"done": [131072]}
    out = play(tmp_path, 20480, False)
    assert out["converged"] is False
    assert out["differences"] == ["the phase's inputs or the collection's code changed since the recorded run"]
    # that check discarded the record that no longer matched; a full run records again
    assert play(tmp_path, 131072, True)["differences"] == ["no record of a finished demo run on this node"]
    (tmp_path / "state" / "conf").write_text("y\n")
    out = play(tmp_path, 131072, False)
    assert out["differences"] == ["%s/state/conf: changed" % tmp_path]
