# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node check's plugin part (module_utils/health/node_health.py PARTS): nccl_plugin_info takes its
setting as an option (DOCUMENTATION), node_health_info the part as its plugin option (PART)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


# Literal text, as ansible-test reads a fragment. PART repeats the options of DOCUMENTATION one level
# down (defaults may differ); tests/unit/docs/test_shared_options.py fails where their texts part.
class ModuleDocFragment(object):

    DOCUMENTATION = r"""
options:
  record_file:
    description: The install record's file name in the family's plugin install directory.
    type: str
    default: .gpudirect-installed
"""

    PART = r"""
options:
  plugin:
    description: Check the NCCL net plugin's files against its install record.
    type: dict
    suboptions:
      record_file:
        description: The install record's file name in the family's plugin install directory.
        type: str
        required: true
"""
