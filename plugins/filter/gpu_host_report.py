# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_host role's report of a full run, built once from what its steps registered."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import gpu_host_report


def report(steps, node):
    try:
        return gpu_host_report.report(steps, node)
    except (gpu_host_report.ReportInputError, KeyError, TypeError) as exc:
        raise AnsibleFilterError("_gpu_host_report: %s" % exc)


class FilterModule(object):
    def filters(self):
        return {"_gpu_host_report": report}
