# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The internal role gpudirect.gcp._common refuses a call that does not come through the collection's roles:
each entry point included by a play itself, or by a role of the user's, fails in one line naming the public
roles that include it; included by a collection role (or with the collection playbooks' _common_internal),
it runs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

from ansible_collections.gpudirect.gcp.tests.unit.roles import _job_stand_ins as stand_ins

TASKS = os.path.join(stand_ins.ROOT, "roles", "_common", "tasks")
ENTRIES = sorted(name[:-4] for name in os.listdir(TASKS) if name.endswith(".yml") and name != "internal.yml")
REFUSAL = "Refuse a call that does not come through the collection's roles"

DIRECT = """
    - name: Include {entry} directly
      block:
        - name: The entry point {entry}
          ansible.builtin.include_role:
            name: gpudirect.gcp._common
            tasks_from: {entry}
          vars:
            _common_report_dir: /nonexistent
      rescue:
        - name: Say it was refused
          ansible.builtin.debug:
            msg: "REFUSED {entry} {{{{ ansible_failed_result.msg }}}}"
"""
PLAY = """
- name: The shared role, called in every way
  hosts: gpu_nodes
  gather_facts: false
  tasks:
%(direct)s
    - name: Include it from a role of the user's
      block:
        - name: The user's role
          ansible.builtin.include_role:
            name: mine
      rescue:
        - name: Say it was refused
          ansible.builtin.debug:
            msg: "REFUSED mine {{ ansible_failed_result.msg }}"

    - name: Include it with the collection playbooks' switch
      ansible.builtin.include_role:
        name: gpudirect.gcp._common
        tasks_from: family
      vars:
        _common_internal: true

    - name: Include it through a collection role
      block:
        - name: The collection role
          ansible.builtin.include_role:
            name: gpudirect.gcp.nccl_tests
            tasks_from: preflight
      rescue:
        - name: The role's own checks may fail on this host
          ansible.builtin.debug:
            msg: "later {{ ansible_failed_result.msg | default('') }}"
"""


def uses():
    """The table in internal.yml: entry point -> the public roles that include it."""
    with open(os.path.join(TASKS, "internal.yml")) as handle:
        return yaml.safe_load(handle)[0]["vars"]["_use"]


def test_every_entry_point_has_its_roles_in_the_refusal():
    assert sorted(uses()) == ENTRIES
    # each entry point runs the refusal first (family.yml's import of it, for those that import family.yml)
    for entry in ENTRIES:
        with open(os.path.join(TASKS, entry + ".yml")) as handle:
            first = yaml.safe_load(handle)[0]
        assert first.get("ansible.builtin.import_tasks") in ("internal.yml", "family.yml"), entry
        assert entry == "family" or first.get("vars", {}).get("_common_entry") == entry, entry


def test_a_direct_call_is_one_line_and_a_collection_roles_call_runs(tmp_path):
    role = tmp_path / "roles" / "mine" / "tasks"
    role.mkdir(parents=True)
    (role / "main.yml").write_text("- name: Use the shared role\n  ansible.builtin.include_role:\n"
                                   "    name: gpudirect.gcp._common\n    tasks_from: family\n")
    play = PLAY % {"direct": "".join(DIRECT.format(entry=e) for e in ENTRIES)}
    rc, out = stand_ins.run(tmp_path, play, extra_vars={"gpu_family": "a3-mega", "nccl_tests_family": "a3-mega"},
                            env={"ANSIBLE_ROLES_PATH": str(tmp_path / "roles")})
    refused = dict(ln.split('"msg": "REFUSED ')[1].rstrip('"').split(" ", 1) for ln in out.splitlines()
                   if '"msg": "REFUSED ' in ln)
    table = uses()
    assert sorted(refused) == sorted(ENTRIES + ["mine"]), out
    for entry in ENTRIES + ["mine"]:
        assert refused[entry] == (
            "gpudirect.gcp._common is internal to the collection and not for direct use: run %s, which include "
            "its %s entry point" % (table.get(entry, table["family"]), "family" if entry == "mine" else entry))
    # one refusal per direct call, the switch's and the collection role's pass
    results = stand_ins.task_results(out, REFUSAL)
    assert results.count("ok: [n0]") == 2 and len([r for r in results if r.startswith("fatal")]) == len(ENTRIES) + 1
    assert stand_ins.task_results(out, "nccl_tests : Work out what rules out the whole run") == ["ok: [n0]"], out
