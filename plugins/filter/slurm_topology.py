# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter that writes Slurm's topology.conf from the nodes' placement (plugins/plugin_utils/plays/slurm_topology.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import slurm_topology
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import make_unsafe


def slurm_topology_conf(nodes, levels=slurm_topology.DEFAULT_LEVELS, unplaced_switch="unplaced"):
    try:
        text = slurm_topology.render(nodes, levels=levels, unplaced_switch=unplaced_switch)
    except ValueError as exc:
        raise AnsibleFilterError("slurm_topology_conf: %s" % exc)
    # ids from the inventory end up in the comments: never template them again
    return make_unsafe(text)


class FilterModule(object):
    def filters(self):
        return {
            "slurm_topology_conf": slurm_topology_conf,
        }
