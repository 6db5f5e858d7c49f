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
from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_inspector


def family_profile(name):
    try:
        return families.get_family(name)
    except families.FamilyError as exc:
        raise AnsibleFilterError("family_profile: %s" % exc)


def family_for_machine_type(machine_type):
    return families.family_for_machine_type(machine_type)


def nccl_env(family, control_ifaces, gpu_ifaces, overrides=None, allow=None, plugin_dir=None, base=None,
             inspector=None):
    if family not in families.FAMILIES:
        raise AnsibleFilterError("nccl_env: unknown GPU family %r; known: %s"
                                 % (family, ", ".join(families.family_names())))
    env, problems = families.render_nccl_env(family, list(control_ifaces or []), list(gpu_ifaces or []),
                                             overrides=overrides, allow=allow, plugin_dir=plugin_dir, base=base)
    if inspector:
        if not isinstance(inspector, dict) or not inspector.get("library") or not inspector.get("dump_dir"):
            raise AnsibleFilterError("nccl_env: inspector needs library and dump_dir, got %r" % (inspector,))
        added, problem = nccl_inspector.profiler_env(env, inspector["library"], inspector["dump_dir"],
                                                     float(inspector.get("interval_s") or nccl_inspector.MIN_INTERVAL_S),
                                                     boolean(inspector.get("displace", False), strict=False))
        env.update(added)
        problems += [problem] if problem else []
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


def version_pair_choice(family, asked_plugin, asked_rxdm, installed=None, change=False):
    if family not in families.FAMILIES:
        raise AnsibleFilterError("_version_pair_choice: unknown GPU family %r" % (family,))
    installed = installed if isinstance(installed, dict) else {}
    return families.choose_pair(family, str(asked_plugin or "").strip(), str(asked_rxdm or "").strip(),
                                installed.get("plugin") or None, installed.get("rxdm") or None,
                                change=boolean(change, strict=False))


def version_pair_kept(hosts, pairs, shown=8):
    """One line per distinct kept-pair message, naming its nodes (the first few, the rest counted)."""
    hosts, pairs = list(hosts or []), list(pairs or [])
    if len(hosts) != len(pairs):
        raise AnsibleFilterError("_version_pair_kept: %d pair(s) for %d node(s)" % (len(pairs), len(hosts)))
    by_message, order = {}, []
    for host, pair in zip(hosts, pairs):
        if isinstance(pair, dict) and pair.get("kept"):
            if pair["message"] not in by_message:
                by_message[pair["message"]] = []
                order.append(pair["message"])
            by_message[pair["message"]].append(host)
    lines = []
    for message in order:
        who = by_message[message]
        names = ", ".join(who[:shown]) + (" and %d more" % (len(who) - shown) if len(who) > shown else "")
        lines.append("%d node(s) (%s): %s" % (len(who), names, message))
    return lines


class FilterModule(object):
    def filters(self):
        return {
            "family_profile": family_profile,
            "family_for_machine_type": family_for_machine_type,
            "nccl_env": nccl_env,
            "_version_pair_error": version_pair_error,
            "_version_pair_choice": version_pair_choice,
            "_version_pair_kept": version_pair_kept,
            "nvlink_domain": nvlink_domain,
        }
