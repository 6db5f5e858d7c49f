# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node check's maintenance part (module_utils/health/node_health.py PARTS): gce_maintenance_info takes
its settings as options (DOCUMENTATION), node_health_info as the suboptions of its maintenance option
(PART)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import textwrap

# Written once, at no indent. No O() or RV(): the same text sits at the top of one module's options and one
# level down in the other's, where such a pointer would lead nowhere.
_OPTIONS = r"""
metadata_url:
  description: The metadata server's C(computeMetadata/v1) root.
  type: str
  default: http://metadata.google.internal/computeMetadata/v1
warn_within_h:
  description: Hours ahead within which the start of a scheduled maintenance window is a warning.
  type: float
  default: 24
"""


class ModuleDocFragment(object):

    DOCUMENTATION = "options:" + textwrap.indent(_OPTIONS, " " * 2)

    PART = r"""
options:
  maintenance:
    description: Read the host maintenance the metadata server announces.
    type: dict
    suboptions:""" + textwrap.indent(_OPTIONS, " " * 6)
