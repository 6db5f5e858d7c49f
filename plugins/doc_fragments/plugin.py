# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node check's plugin part (module_utils/health/node_health.py PARTS): nccl_plugin_info takes its
setting as an option (DOCUMENTATION), node_health_info the part as its plugin option (PART)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import textwrap

# Written once, at no indent, with a slot where the two modules' specs differ (the node check's config must
# name the record; nccl_plugin_info defaults to the collection's). No O() or RV(): the same text sits at the
# top of one module's options and one level down in the other's.
_OPTIONS = r"""
record_file:
  description: The install record's file name in the family's plugin install directory.
  type: str
  %(record_file)s
"""


class ModuleDocFragment(object):

    DOCUMENTATION = "options:" + textwrap.indent(_OPTIONS % dict(record_file="default: .gpudirect-installed"), " " * 2)

    PART = r"""
options:
  plugin:
    description: Check the NCCL net plugin's files against its install record.
    type: dict
    suboptions:""" + textwrap.indent(_OPTIONS % dict(record_file="required: true"), " " * 6)
