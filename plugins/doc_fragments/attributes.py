# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Attribute descriptions shared by the collection's modules."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    description: Can run in check mode and return a changed status prediction without modifying the target.
  diff_mode:
    description: Returns details on what has changed, or would change in check mode, when run with C(--diff).
  idempotent:
    description: Running it again with the same options gives the same result and reports no change.
"""

    # For modules that only read the node.
    READ_ONLY = r"""
options: {}
attributes:
  check_mode:
    support: full
    details: The module never changes the node, so check mode runs it unchanged.
  diff_mode:
    support: none
    details: The module never changes the node.
  idempotent:
    support: full
"""

    # For action plugins that only read, on the controller (the Compute API).
    READ_ONLY_ACTION = r"""
options: {}
attributes:
  check_mode:
    support: full
    description: Reads only; check mode runs it unchanged.
  diff_mode:
    support: none
    description: Nothing changes.
  action:
    support: full
    description: Runs on the controller as an action plugin.
"""
