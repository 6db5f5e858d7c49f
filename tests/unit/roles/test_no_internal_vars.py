# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""No template reads ansible-core's internal ``vars`` dictionary: ansible-core 2.21 warns that it is
deprecated (removed in 2.24) on every run. ``hostvars[inventory_hostname]`` says the same."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXPRESSION = re.compile(r"\{\{(.*?)\}\}|\{%(.*?)%\}", re.S)
# the bare name, not hostvars, _vars, item.vars or a key 'vars'
BARE_VARS = re.compile(r"(?<![\w.'\"])vars(?![\w'\"])")


def uses(text):
    return [m.group(0) for m in EXPRESSION.finditer(text) if BARE_VARS.search(m.group(1) or m.group(2) or "")]


def test_the_finder_sees_the_bare_name_only():
    assert uses("{{ ['a'] | reject('in', vars) | list }}") and uses("{% if 'x' in vars %}")
    assert not uses("{{ hostvars[inventory_hostname] }} {{ _vars }} {{ item.vars }} {{ x['vars'] }}")


def test_no_role_or_playbook_reads_the_internal_vars_dictionary():
    found = []
    for top in ("roles", "playbooks", "extensions"):
        for folder, _dirs, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name.endswith((".yml", ".yaml", ".j2")):
                    path = os.path.join(folder, name)
                    with open(path, encoding="utf-8") as fh:
                        found += ["%s: %s" % (os.path.relpath(path, ROOT), u) for u in uses(fh.read())]
    assert found == []
