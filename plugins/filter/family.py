# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that give plays the machine-family table (plugins/module_utils/families.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.utils.display import Display
from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.host import topology as topology_reader


def family_profile(name):
    try:
        return families.get_family(name)
    except families.FamilyError as exc:
        raise AnsibleFilterError("family_profile: %s" % exc)


def family_for_machine_type(machine_type):
    return families.family_for_machine_type(machine_type)


def nccl_env(family, control_ifaces, gpu_ifaces, overrides=None, allow=None, plugin_dir=None, base=None):
    if family not in families.FAMILIES:
        raise AnsibleFilterError("nccl_env: unknown GPU family %r; known: %s"
                                 % (family, ", ".join(families.family_names())))
    env, problems = families.render_nccl_env(family, list(control_ifaces or []), list(gpu_ifaces or []),
                                             overrides=overrides, allow=allow, plugin_dir=plugin_dir, base=base)
    return {"env": env, "problems": problems}


def nvlink_domain(topology, family):
    if family not in families.FAMILIES:
        raise AnsibleFilterError("nvlink_domain: unknown GPU family %r" % (family,))
    if topology is not None and not isinstance(topology, dict):
        raise AnsibleFilterError("nvlink_domain: expects a gce_topology mapping, got %r" % (topology,))
    return families.nvlink_domain(family, topology_reader.normalize(topology)) or ""


def version_pair_error(family, plugin_version, rxdm_version, strict=False):
    if family not in families.FAMILIES:
        raise AnsibleFilterError("_version_pair_error: unknown GPU family %r" % (family,))
    result = families.judge_versions(family, plugin_version, rxdm_version, strict=boolean(strict, strict=False))
    if result["verdict"] == "unqualified":
        # Display keeps one copy of a repeated warning, however often the value is templated
        Display().warning(result["message"])
    return result["message"] if result["verdict"] == "refused" else ""


class FilterModule(object):
    def filters(self):
        return {
            "family_profile": family_profile,
            "family_for_machine_type": family_for_machine_type,
            "nccl_env": nccl_env,
            "_version_pair_error": version_pair_error,
            "nvlink_domain": nvlink_domain,
        }
