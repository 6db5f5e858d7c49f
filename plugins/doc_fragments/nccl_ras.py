# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the modules that ask NCCL RAS find it (module_utils/job/nccl_ras.py ARGUMENT_SPEC)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r"""
options:
  host:
    description: Where RAS answers (C(NCCL_RAS_ADDR) of the job); only the node itself is asked by default.
    type: str
    default: 127.0.0.1
  port:
    description: RAS's client port.
    type: int
    default: 28028
"""
