# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every Molecule scenario inherits what it shares from extensions/molecule/config.yml and
keeps only what differs: a scenario that repeats a value of the base config fails here,
naming the scenario and the key."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import sys

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
MOLECULE = os.path.join(ROOT, "extensions", "molecule")
SCENARIOS = sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(MOLECULE, "*", "molecule.yml"))
                   if not os.path.basename(os.path.dirname(p)).startswith("_"))
# Keys only the base config may set: one driver, no platforms of a scenario's own.
BASE_ONLY = ("driver", "platforms", "dependency")


def _load(path):
    with open(path) as fh:
        return yaml.safe_load(fh) or {}


def repeated_keys(base, scenario, path=""):
    """Dotted keys whose value in scenario equals the base's (a dictionary is compared key by key,
    as Molecule merges it; lists and scalars whole, as Molecule replaces them)."""
    out = []
    for key, value in scenario.items():
        where = "%s.%s" % (path, key) if path else str(key)
        if key not in base:
            continue
        if isinstance(value, dict) and isinstance(base[key], dict):
            out += repeated_keys(base[key], value, where)
        elif value == base[key]:
            out.append(where)
    return out


def test_the_check_catches_a_repeated_value():
    base = {"ansible": {"env": {"A": "1", "B": "2"}}, "scenario": {"test_sequence": ["x", "y"]}}
    scenario = {"ansible": {"env": {"A": "1", "B": "3"}}, "scenario": {"test_sequence": ["x", "y"]}}
    assert repeated_keys(base, scenario) == ["ansible.env.A", "scenario.test_sequence"]
    assert repeated_keys(base, {"ansible": {"env": {"B": "3"}}}) == []


def test_there_are_scenarios():
    assert "sandbox" in SCENARIOS and "gpu_network_el" in SCENARIOS


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario_repeats_nothing_of_the_base(scenario):
    base = _load(os.path.join(MOLECULE, "config.yml"))
    data = _load(os.path.join(MOLECULE, scenario, "molecule.yml"))
    repeated = repeated_keys(base, data)
    assert not repeated, "%s/molecule.yml repeats the base config's %s" % (scenario, ", ".join(repeated))
    own = [key for key in BASE_ONLY if key in data]
    assert not own, "%s/molecule.yml sets %s, which only config.yml may set" % (scenario, ", ".join(own))


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_scenario_playbooks_exist(scenario):
    base = _load(os.path.join(MOLECULE, "config.yml"))
    data = _load(os.path.join(MOLECULE, scenario, "molecule.yml"))
    playbooks = dict(base["ansible"]["playbooks"], **(data.get("ansible", {}).get("playbooks") or {}))
    for step, rel in playbooks.items():
        assert os.path.isfile(os.path.join(MOLECULE, scenario, rel)), "%s: %s playbook %s is missing" % (
            scenario, step, rel)


def _env(scenario):
    base = _load(os.path.join(MOLECULE, "config.yml"))["ansible"]["env"]
    return dict(base, **(_load(os.path.join(MOLECULE, scenario, "molecule.yml")).get("ansible", {}).get("env") or {}))


def test_each_scenario_names_its_own_sandbox():
    """Scenarios run side by side, so no two may share a sandbox."""
    names = {}
    for scenario in SCENARIOS:
        name = _env(scenario).get("GPUDIRECT_SANDBOX_NAME")
        assert name, "%s/molecule.yml does not set GPUDIRECT_SANDBOX_NAME" % scenario
        # ${VAR:-default}: the default is the name a plain run uses
        name = name.split(":-", 1)[1].rstrip("}") if name.startswith("${") else name
        assert name not in names, "%s and %s share the sandbox %s" % (names.get(name), scenario, name)
        names[name] = scenario


def test_variants_and_families_exist():
    sys.path.insert(0, os.path.join(ROOT, "tests", "sandbox"))
    try:
        from sandboxlib import layout  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.pop(0)
    families = layout.families().family_names()
    for scenario in SCENARIOS:
        env = _env(scenario)
        assert env["GPUDIRECT_SANDBOX_VARIANT"] in layout.VARIANTS, scenario
        assert env["GPUDIRECT_SANDBOX_FAMILY"] in families, scenario
