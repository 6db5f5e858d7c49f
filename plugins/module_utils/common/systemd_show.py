# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""`systemctl show` of several units in one call: its argument list, and its answer read back per unit.

Plain Python (no ansible import).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def show_argv(systemctl, units, properties):
    """One `systemctl show -p P1 -p P2 ... -- U1 U2 ...`: one command for every unit, not one each."""
    argv = [systemctl, "show"]
    for prop in properties:
        argv += ["-p", prop]
    return argv + ["--"] + list(units)


def parse_show(text, units, properties):
    """{unit: {property: value}} from the answer to show_argv: one block per unit, in the order asked,
    separated by blank lines. A property the block lacks, or a unit with no block (no systemctl, a cut
    answer), is left out: each caller says what a missing value means."""
    blocks = text.strip().split("\n\n") if text and text.strip() else []
    out = {}
    for index, unit in enumerate(units):
        props = {}
        if index < len(blocks):
            for line in blocks[index].splitlines():
                key, sep, value = line.partition("=")
                if sep and key in properties:
                    props[key] = value.strip()
        out[unit] = props
    return out
