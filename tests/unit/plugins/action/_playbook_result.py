# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action tests' run of the real ansible-playbook, whose play shows the action's result as
msg "RESULT=<json>"."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


def run(args, env):
    """(rc, output, the RESULT mapping or None) of ansible-playbook args, with the checkout's ansible.cfg."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_NOCOLOR="1", **env)
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook")] + [str(a) for a in args]
    proc = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=120, check=False)
    result = None
    for line in proc.stdout.splitlines():
        if '"msg": "RESULT=' in line:
            result = json.loads(json.loads("{%s}" % line.strip())["msg"][len("RESULT="):])
    return proc.returncode, proc.stdout, result
