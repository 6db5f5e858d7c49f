# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's public surface is deliberate: the filters users call are listed here, every other
filter is glue between the collection's own roles, named with a leading underscore and documented as
internal; _info modules return data and set no facts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

import yaml

from ansible_collections.gpudirect.gcp.plugins.filter import (
    diagnose, family, gpu, gpu_host_report, nccl_build, nccl_tests_parse, node_check, preflight, remediate, rxdm,
    slurm_topology, topology, zip_records)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# semver-bound from 1.0.0: changing one of these is a breaking change
PUBLIC_FILTERS = {"family_profile", "family_for_machine_type", "nccl_env", "nccl_tests_parse", "nvidia_smi_parse",
                  "xid_events", "topology_sort", "nvlink_domain", "nvlink_domain_peers", "slurm_topology_conf"}


def _filters():
    names = set()
    for mod in (diagnose, family, gpu, gpu_host_report, nccl_build, nccl_tests_parse, node_check, preflight, remediate,
                rxdm, slurm_topology, topology, zip_records):
        names |= set(mod.FilterModule().filters())
    return names


def test_every_filter_file_is_counted():
    files = set(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(ROOT, "plugins", "filter", "*.py")))
    assert files - {"__init__"} == {"diagnose", "family", "gpu", "gpu_host_report", "maintenance", "nccl_build",
                                    "nccl_tests_parse", "node_check", "preflight", "remediate", "rxdm", "slurm_topology",
                                    "topology", "zip_records"}


def test_public_filters_are_the_listed_ones_and_the_rest_are_internal():
    names = _filters()
    assert PUBLIC_FILTERS <= names
    internal = names - PUBLIC_FILTERS
    assert [n for n in internal if not n.startswith("_")] == []
    for name in sorted(internal):
        with open(os.path.join(ROOT, "plugins", "filter", name + ".yml"), encoding="utf-8") as fh:
            doc = yaml.safe_load(fh)["DOCUMENTATION"]
        assert doc["name"] == name and doc["short_description"].startswith("Internal, not for direct use"), name


def test_no_public_doc_points_users_at_an_internal_filter():
    internal = sorted(_filters() - PUBLIC_FILTERS)
    found = []
    for path in glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py")) + \
            glob.glob(os.path.join(ROOT, "roles", "[a-z]*", "meta", "argument_specs.yml")) + \
            [os.path.join(ROOT, "plugins", "filter", n + ".yml") for n in PUBLIC_FILTERS]:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        found += ["%s: %s" % (os.path.relpath(path, ROOT), n) for n in internal if "gpudirect.gcp." + n in text]
    assert found == []


def test_info_modules_set_no_facts():
    setting = []
    for path in glob.glob(os.path.join(ROOT, "plugins", "modules", "*_info.py")):
        with open(path, encoding="utf-8") as fh:
            # returned (a keyword, a dict key, a RETURN entry), not read as an option's default
            if re.search(r"ansible_facts\s*=|[\"']ansible_facts[\"']\s*:|^ansible_facts:", fh.read(), re.M):
                setting.append(os.path.basename(path))
    assert setting == []


# the playbooks users run as gpudirect.gcp.<name>; semver-bound as the filters are
PUBLIC_PLAYBOOKS = {"site", "configure", "fabric", "diagnose", "diagnose_job", "remediate", "validate", "node_health", "slurm_hooks",
                    "slurm_topology", "upgrade_plugin", "teardown", "add_nodes", "maintenance"}


def test_the_public_playbooks_are_the_listed_ones_and_documented():
    files = set(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(ROOT, "playbooks", "*.yml")))
    assert files == PUBLIC_PLAYBOOKS
    with open(os.path.join(ROOT, "docs", "development.md"), encoding="utf-8") as fh:
        development = fh.read()
    listed = development.split("## Public interface", 1)[1].split("\n- the roles", 1)[0]
    assert sorted(n for n in PUBLIC_PLAYBOOKS if "`%s`" % n not in listed and "gpudirect.gcp.%s`" % n not in listed) == []
    with open(os.path.join(ROOT, "docs", "playbooks.md"), encoding="utf-8") as fh:
        playbooks = fh.read()
    assert sorted(n for n in PUBLIC_PLAYBOOKS if "%s.yml" % n not in playbooks and "gpudirect.gcp.%s" % n not in playbooks) == []
