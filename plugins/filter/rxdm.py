# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that build the RxDM container command from the family table (plugins/plugin_utils/plays/rxdm_command.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import rxdm_command


def _rxdm(family):
    try:
        return families.get_family(family)["rxdm"]
    except families.FamilyError as exc:
        raise AnsibleFilterError(str(exc))


def _flavour(flavour, distribution):
    if flavour in (None, "", "auto"):
        return families.os_flavour(distribution)
    if flavour not in families.OS_FLAVOURS:
        raise AnsibleFilterError("OS flavour %r unknown; use auto, %s" % (flavour, ", ".join(families.OS_FLAVOURS)))
    return flavour


def command_of(family, spec):
    """{argv, host_paths} of the RxDM container for a family, from one spec (rxdm_command.SPEC_DEFAULTS' keys,
    plus distribution, which picks the OS flavour when flavour is auto)."""
    if not isinstance(spec, dict):
        raise AnsibleFilterError("_rxdm_command (%s): the spec must be a mapping, got %r" % (family, spec))
    spec = dict(spec)
    distribution = spec.pop("distribution", None)
    spec["flavour"] = _flavour(spec.get("flavour"), distribution)
    spec["driver_lib_dir"] = spec.get("driver_lib_dir") or None
    try:
        return rxdm_command.command(_rxdm(family), spec)
    except rxdm_command.RxdmCommandError as exc:
        raise AnsibleFilterError("_rxdm_command (%s): %s" % (family, exc))


def systemd_exec_line(argv):
    if not isinstance(argv, (list, tuple)) or not argv:
        raise AnsibleFilterError("_systemd_exec_line: expects a non-empty list of words, got %r" % (argv,))
    return rxdm_command.systemd_exec_line(argv)


class FilterModule(object):
    def filters(self):
        return {
            "_rxdm_command": command_of,
            "_systemd_exec_line": systemd_exec_line,
        }
