# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every role option that takes a machine family offers exactly the family table's families."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import subprocess
import sys

import yaml

from ansible_collections.gpudirect.gcp.plugins.module_utils import families

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _options(options, where):
    for name, spec in (options or {}).items():
        spec = spec or {}
        yield "%s.%s" % (where, name), spec
        yield from _options(spec.get("options"), "%s.%s" % (where, name))


def family_options():
    """{role/entry point.option: its choices} for every option whose choices name a family."""
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "roles", "*", "meta", "argument_specs.yml"))):
        role = path.split(os.sep)[-3]
        with open(path) as fh:
            specs = yaml.safe_load(fh)["argument_specs"]
        for entry, spec in specs.items():
            for name, option in _options(spec.get("options"), "%s/%s" % (role, entry)):
                choices = option.get("choices") or []
                if set(choices) & set(families.FAMILIES):
                    out[name] = list(choices)
    return out


def test_family_choices_are_the_tables_families():
    found = family_options()
    for role in ("diagnose", "nccl_plugin", "nccl_profile", "rxdm"):
        assert any(name.startswith(role + "/") for name in found), role
    wrong = dict((name, choices) for name, choices in found.items() if choices != families.family_names())
    assert wrong == {}, "run scripts/gen_family_choices.py (table: %s)" % ", ".join(families.family_names())


def test_the_generator_agrees():
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_family_choices.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_generator_writes_a_new_family_into_every_choices_line():
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import gen_family_choices  # pylint: disable=import-outside-toplevel
    text = "    x:\n      choices: [a3-high, a4]  # kept\n    y:\n      choices: [on, off]\n"
    out = gen_family_choices.render(text, ["a3-high", "a4", "a5"])
    assert out == "    x:\n      choices: [a3-high, a4, a5]  # kept\n    y:\n      choices: [on, off]\n"
