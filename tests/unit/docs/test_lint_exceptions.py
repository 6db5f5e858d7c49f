# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lint exception for the shared settings (var-naming[no-role-prefix]) lives in one place,
.ansible-lint-ignore, with why: no role or playbook repeats it in a noqa comment, and each file it names
exists."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RULE = "var-naming[no-role-prefix]"


def ignored_files(text):
    """The files the ignore file exempts from RULE."""
    entries = [line.split("#")[0].split() for line in text.splitlines()]
    return [e[0] for e in entries if len(e) >= 2 and e[1] == RULE]


def noqa_lines(top):
    found = []
    for where in ("roles", "playbooks"):
        for path, _dirs, names in os.walk(os.path.join(top, where)):
            for name in names:
                if name.endswith((".yml", ".yaml")):
                    with open(os.path.join(path, name), encoding="utf-8") as fh:
                        found += ["%s:%d" % (os.path.relpath(os.path.join(path, name), top), number)
                                  for number, line in enumerate(fh, 1)
                                  if re.search(r"#\s*noqa:.*" + re.escape(RULE), line)]
    return found


def test_the_shared_settings_exception_is_in_one_place():
    with open(os.path.join(ROOT, ".ansible-lint-ignore"), encoding="utf-8") as fh:
        text = fh.read()
    files = ignored_files(text)
    assert "roles/_common/defaults/main.yml" in files
    assert [f for f in files if not os.path.isfile(os.path.join(ROOT, f))] == []
    assert text.lstrip().startswith("#"), "the ignore file says why first"
    assert noqa_lines(ROOT) == []


def test_a_noqa_comment_for_the_rule_is_found(tmp_path):
    tasks = tmp_path / "roles" / "x" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "main.yml").write_text("- ansible.builtin.set_fact:  # noqa: %s why\n    gpudirect_a: 1\n" % RULE)
    assert noqa_lines(str(tmp_path)) == ["roles/x/tasks/main.yml:1"]
    assert ignored_files("# why\nroles/x/tasks/main.yml %s skip\nother.yml yaml\n" % RULE) == [
        "roles/x/tasks/main.yml"]
