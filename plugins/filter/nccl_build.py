# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter: the packages a node needs to build nccl-tests (plugins/plugin_utils/plays/nccl_build.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import nccl_build


def nccl_tests_build_packages(family, pkg_mgr, plugin_version=None):
    try:
        return nccl_build.build_packages(family, pkg_mgr, plugin_version or None)
    except ValueError as exc:
        raise AnsibleFilterError("_nccl_tests_build_packages: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"_nccl_tests_build_packages": nccl_tests_build_packages}
