# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""network_backend_info's logic: what manages a node's network, from one systemctl call and a few paths."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import systemd_show

UNITS = {"networkmanager": "NetworkManager.service", "networkd": "systemd-networkd.service"}
PROPERTIES = ("LoadState", "ActiveState", "SubState")
NETPLAN_SUFFIXES = (".yaml", ".yml")


def _unit_names():
    return [UNITS[key] for key in sorted(UNITS)]


def show_argv(systemctl):
    """One `systemctl show` for both units, in UNITS' order (sorted by key)."""
    return systemd_show.show_argv(systemctl, _unit_names(), PROPERTIES)


def parse_show(text):
    """{key: {LoadState, ActiveState, SubState}} from `systemctl show` of the units in show_argv's
    order; a unit without a block (or a property without its line) gets empty values."""
    found = systemd_show.parse_show(text, _unit_names(), PROPERTIES)
    return dict((key, dict((prop, found[UNITS[key]].get(prop, "")) for prop in PROPERTIES))
                for key in sorted(UNITS))


def running(states):
    """{key: bool}: whether each unit is active and running."""
    return dict((key, state.get("ActiveState") == "active" and state.get("SubState") == "running")
                for key, state in states.items())


def netplan_files(directory, exclude=(), listdir=os.listdir, isfile=os.path.isfile):
    """The netplan configuration files in directory (sorted paths), without those named in exclude."""
    try:
        names = listdir(directory)
    except (IOError, OSError):
        return []
    return sorted(os.path.join(directory, name) for name in names
                  if name.endswith(NETPLAN_SUFFIXES) and name not in exclude and isfile(os.path.join(directory, name)))


def first_existing(paths, exists=os.path.exists):
    """The first of paths that exists, or ''."""
    for path in paths:
        if exists(path):
            return path
    return ""
