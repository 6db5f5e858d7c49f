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


def rxdm_run_argv(family, engine, ref, flavour="auto", distribution=None, name=rxdm_command.CONTAINER_NAME,
                  gpus=None, gpu_devices=None, volume_sources=None, extra_volumes=None, extra_env=None,
                  extra_args=None, args=None, driver_lib_dir=None):
    try:
        return rxdm_command.build_run_argv(
            _rxdm(family), engine, ref, _flavour(flavour, distribution), name=name, gpus=gpus,
            gpu_devices=gpu_devices, volume_sources=volume_sources, extra_volumes=extra_volumes,
            extra_env=extra_env, extra_args=extra_args, args=args, driver_lib_dir=driver_lib_dir or None)
    except rxdm_command.RxdmCommandError as exc:
        raise AnsibleFilterError("_rxdm_run_argv (%s): %s" % (family, exc))


def rxdm_host_paths(family, volume_sources=None, extra_volumes=None, flavour="auto", distribution=None,
                    driver_lib_dir=None):
    return rxdm_command.host_paths(_rxdm(family), volume_sources, extra_volumes, _flavour(flavour, distribution),
                                   driver_lib_dir or None)


def systemd_exec_line(argv):
    if not isinstance(argv, (list, tuple)) or not argv:
        raise AnsibleFilterError("_systemd_exec_line: expects a non-empty list of words, got %r" % (argv,))
    return rxdm_command.systemd_exec_line(argv)


class FilterModule(object):
    def filters(self):
        return {
            "_rxdm_run_argv": rxdm_run_argv,
            "_rxdm_host_paths": rxdm_host_paths,
            "_systemd_exec_line": systemd_exec_line,
        }
