# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection-wide ``gpudirect_*`` settings have one home, the shared role's defaults: a role
that reads one lists that role as a dependency (which makes its defaults the role's own), a play
that reads one includes the shared role with ``public``, and nothing sets one as a fact."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import yaml

from ansible_collections.gpudirect.gcp.tests.unit.playbooks import _local_play as local_play

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLES = os.path.join(ROOT, "roles")
SHARED = "_common"


def settings():
    with open(os.path.join(ROLES, SHARED, "defaults", "main.yml"), encoding="utf-8") as fh:
        return {k for k in yaml.safe_load(fh) if k.startswith("gpudirect_")}


def readers(text, names):
    """The settings a file's text names outside comments."""
    text = "\n".join(line.split(" #")[0] for line in text.splitlines() if not line.lstrip().startswith("#"))
    return {n for n in names if re.search(r"(?<![\w.])%s\b" % re.escape(n), text)}


def role_files(role):
    for folder, _dirs, files in os.walk(os.path.join(ROLES, role)):
        for name in files:
            if name.endswith((".yml", ".j2")) and "meta" not in os.path.relpath(folder, ROLES).split(os.sep):
                yield os.path.join(folder, name)


def depends_on_shared(role):
    with open(os.path.join(ROLES, role, "meta", "main.yml"), encoding="utf-8") as fh:
        deps = yaml.safe_load(fh).get("dependencies") or []
    return any((d.get("role") if isinstance(d, dict) else d) == "gpudirect.gcp." + SHARED for d in deps)


def fact_setters(text, names):
    """Settings a task sets as facts (set_fact keys)."""
    found = set()
    for task in _tasks(yaml.safe_load(text) or []):
        args = task.get("ansible.builtin.set_fact") or task.get("set_fact")
        if isinstance(args, dict):
            found |= names & set(args)
    return found


def _tasks(items):
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            yield item
            for key in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers"):
                yield from _tasks(item.get(key))


def test_the_checks_see_what_they_look_for():
    names = {"gpudirect_a", "gpudirect_ab"}
    assert readers("x: '{{ gpudirect_a }}'\n# gpudirect_ab\n", names) == {"gpudirect_a"}
    assert readers("x: '{{ y.gpudirect_a }}'  # gpudirect_ab", names) == set()
    text = "- name: t\n  block:\n    - ansible.builtin.set_fact:\n        gpudirect_ab: 1\n"
    assert fact_setters(text, names) == {"gpudirect_ab"}


def test_every_role_that_reads_a_setting_depends_on_the_shared_role():
    names = settings()
    assert len(names) > 10
    missing = []
    for role in sorted(os.listdir(ROLES)):
        if role == SHARED or not os.path.isdir(os.path.join(ROLES, role)):
            continue
        read = set()
        for path in role_files(role):
            with open(path, encoding="utf-8") as fh:
                read |= readers(fh.read(), names)
        if read and not depends_on_shared(role):
            missing.append("%s reads %s" % (role, ", ".join(sorted(read))))
    assert missing == []


def test_a_play_that_reads_a_setting_makes_the_shared_defaults_public():
    names = settings()
    missing = []
    for folder, _dirs, files in os.walk(os.path.join(ROOT, "playbooks")):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            # a play may set one (upgrade_plugin.yml sets gpudirect_change_pair); reading it needs the defaults
            read = {n for n in readers(text, names) if re.search(r"\{\{[^}]*\b%s\b" % n, text)}
            if read and "public: true" not in text:
                missing.append("%s reads %s" % (os.path.relpath(path, ROOT), ", ".join(sorted(read))))
    assert missing == []


def test_no_task_sets_a_setting_as_a_fact():
    names = settings()
    found = []
    for top in ("roles", "playbooks"):
        for folder, _dirs, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name.endswith(".yml") and os.path.basename(folder) in ("tasks", "handlers", "playbooks", "phases"):
                    path = os.path.join(folder, name)
                    with open(path, encoding="utf-8") as fh:
                        found += ["%s: %s" % (os.path.relpath(path, ROOT), n)
                                  for n in sorted(fact_setters(fh.read(), names))]
    assert found == []


PLAY = """
- name: Shared role
  hosts: n0
  gather_facts: false
  tasks:
    - name: Resolve the profile twice for one family, then for another
      ansible.builtin.include_role:
        name: gpudirect.gcp._common
        tasks_from: family
        public: true
      vars:
        _common_family: "{{ item }}"
        _common_internal: true
      loop: [a3-mega, a3-mega, a4]

    - name: Say what the play sees
      ansible.builtin.debug:
        msg: "seen {{ gpudirect_profile.family }} {{ gpudirect_rxdm_service_name }}"
"""


def test_the_profile_is_kept_for_its_family_and_the_settings_follow_the_old_names(tmp_path):
    rc, out = local_play.run(tmp_path, PLAY, {"gpu_family": "a3-mega"}, {"rxdm_service_name": "rxdm-old-name"})
    assert rc == 0, out
    assert "seen a4 rxdm-old-name" in out
