# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every collection whose modules the roles and playbooks call is declared.

A module of another collection used without a galaxy.yml dependency works on
the machine that happens to have it and fails on a clean install.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# a task key or a handler key that is a fully qualified module name
FQCN_TASK_KEY = re.compile(r"^\s*-?\s*([a-z0-9_]+)\.([a-z0-9_]+)\.[a-z0-9_]+:\s*$", re.M)
OWN = {("ansible", "builtin"), ("gpudirect", "gcp")}


def used_collections(root, top_dirs):
    used = {}
    for top in top_dirs:
        for base, _dirs, names in os.walk(os.path.join(root, top)):
            for name in names:
                if not name.endswith((".yml", ".yaml")):
                    continue
                path = os.path.join(base, name)
                with open(path, encoding="utf-8") as fh:
                    for namespace, collection in FQCN_TASK_KEY.findall(fh.read()):
                        if (namespace, collection) not in OWN:
                            used.setdefault("%s.%s" % (namespace, collection), os.path.relpath(path, root))
    return used


def _declared():
    with open(os.path.join(ROOT, "galaxy.yml"), encoding="utf-8") as fh:
        galaxy = set((yaml.safe_load(fh).get("dependencies") or {}))
    with open(os.path.join(ROOT, "requirements.yml"), encoding="utf-8") as fh:
        requirements = {c["name"] for c in yaml.safe_load(fh)["collections"]}
    return galaxy, requirements


def test_every_collection_used_is_declared_in_galaxy_and_requirements():
    galaxy, requirements = _declared()
    used = used_collections(ROOT, ["roles", "playbooks"])
    assert used, "the scan found no collection module at all"
    missing = {name: where for name, where in used.items() if name not in galaxy or name not in requirements}
    assert missing == {}
    assert galaxy == requirements


def test_the_scan_sees_a_collection_module(tmp_path):
    tasks = tmp_path / "roles" / "r" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "main.yml").write_text("- name: x\n  community.crypto.openssh_keypair:\n    path: /k\n"
                                    "- name: y\n  ansible.builtin.debug:\n    msg: hi\n")
    assert used_collections(str(tmp_path), ["roles"]) == {"community.crypto": "roles/r/tasks/main.yml"}
