# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node check's maintenance part (module_utils/health/node_health.py PARTS): gce_maintenance_info takes
its settings as options (DOCUMENTATION), node_health_info as the suboptions of its maintenance option
(PART)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


# Literal text, as ansible-test reads a fragment. PART repeats the options of DOCUMENTATION one level
# down (defaults may differ); tests/unit/docs/test_shared_options.py fails where their texts part.
class ModuleDocFragment(object):

    DOCUMENTATION = r"""
options:
  metadata_url:
    description: The metadata server's C(computeMetadata/v1) root.
    type: str
    default: http://metadata.google.internal/computeMetadata/v1
  warn_within_h:
    description: Hours ahead within which the start of a scheduled maintenance window is a warning.
    type: float
    default: 24
"""

    PART = r"""
options:
  maintenance:
    description: Read the host maintenance the metadata server announces.
    type: dict
    suboptions:
      metadata_url:
        description: The metadata server's C(computeMetadata/v1) root.
        type: str
        default: http://metadata.google.internal/computeMetadata/v1
      warn_within_h:
        description: Hours ahead within which the start of a scheduled maintenance window is a warning.
        type: float
        default: 24
"""
