# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the modules that read a node's Slurm state look for its configuration
(module_utils/health/slurm_node.py CONF_PATHS)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r"""
options:
  slurm_conf_paths:
    description:
      - Where a Slurm configuration may be (besides C(SLURM_CONF)). Where none exists, Slurm is not
        configured on the node and its state is not read.
    type: list
    elements: path
    default: [/etc/slurm/slurm.conf, /etc/slurm-llnl/slurm.conf, /run/slurm/conf/slurm.conf,
              /var/spool/slurmd/conf-cache/slurm.conf]
"""
