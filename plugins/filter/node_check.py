# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node check's parts, from its one table (module_utils/health/node_health.py PARTS)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def node_check_parts(_value=None):
    """[{key, component, tag}] of every part, in the order the node check runs them."""
    # imported when the filter runs: a lookup of another filter loads this file without calling it
    from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health
    return [{"key": part["key"], "component": part["component"], "tag": part["tag"]} for part in node_health.PARTS]


class FilterModule(object):
    def filters(self):
        return {"_node_check_parts": node_check_parts}
