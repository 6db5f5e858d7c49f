# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One `systemctl show` for several units, read back per unit, for every module that asks."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import systemd_show


def test_one_call_for_every_unit_and_property():
    assert systemd_show.show_argv("/bin/systemctl", ["a.service", "b.service"], ("LoadState", "SubState")) == [
        "/bin/systemctl", "show", "-p", "LoadState", "-p", "SubState", "--", "a.service", "b.service"]


def test_blocks_are_read_in_the_order_asked_and_what_is_missing_is_left_out():
    text = "LoadState=loaded\nSubState= running \nOther=x\n\nLoadState=masked\n"
    assert systemd_show.parse_show(text, ["a.service", "b.service", "c.service"], ("LoadState", "SubState")) == {
        "a.service": {"LoadState": "loaded", "SubState": "running"}, "b.service": {"LoadState": "masked"},
        "c.service": {}}
    assert systemd_show.parse_show(None, ["a.service"], ("LoadState",)) == {"a.service": {}}
    assert systemd_show.parse_show("  \n", ["a.service"], ("LoadState",)) == {"a.service": {}}
