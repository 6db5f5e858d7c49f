# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which plugin/RxDM pair a run puts on a node: the node's installed pair stays unless the run asks to change
it, so a collection upgrade with a newer default, an AWX survey left empty or a repair line moves no node."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils import families

CHOOSE = families.choose_pair


def test_a_node_without_a_pair_gets_what_was_asked_or_the_table_default():
    assert CHOOSE("a3-mega", "", "", None, None) == {
        "plugin": "v1.0.17", "rxdm": "v1.0.23", "kept": False, "message": "",
        "wanted": {"plugin": "v1.0.17", "rxdm": "v1.0.23"}}
    got = CHOOSE("a3-mega", "v1.0.15", "v1.0.21", None, None)
    assert (got["plugin"], got["rxdm"], got["kept"]) == ("v1.0.15", "v1.0.21", False)


def test_the_installed_pair_stays_and_the_run_says_what_it_kept_and_what_moves_it():
    got = CHOOSE("a3-mega", "", "", "v1.0.15", "v1.0.21")
    assert (got["plugin"], got["rxdm"], got["kept"]) == ("v1.0.15", "v1.0.21", True)
    assert got["message"] == ("kept the installed pair plugin v1.0.15 / RxDM v1.0.21; the collection's default is "
                              "plugin v1.0.17 / RxDM v1.0.23; gpudirect.gcp.upgrade_plugin moves it")


def test_an_explicit_ask_without_the_change_option_keeps_the_pair_too():
    got = CHOOSE("a3-mega", "v1.0.16", "v1.0.22", "v1.0.15", "v1.0.21")
    assert (got["plugin"], got["rxdm"], got["kept"]) == ("v1.0.15", "v1.0.21", True)
    assert "this run asked for plugin v1.0.16 / RxDM v1.0.22" in got["message"]
    assert got["wanted"] == {"plugin": "v1.0.16", "rxdm": "v1.0.22"}
    assert "gpudirect_change_pair=true" in got["message"]


def test_the_change_option_moves_the_node():
    got = CHOOSE("a3-mega", "", "", "v1.0.15", "v1.0.21", change=True)
    assert (got["plugin"], got["rxdm"], got["kept"]) == ("v1.0.17", "v1.0.23", False)
    got = CHOOSE("a3-mega", "v1.0.16", "v1.0.22", "v1.0.15", "v1.0.21", change=True)
    assert (got["plugin"], got["rxdm"]) == ("v1.0.16", "v1.0.22")


def test_the_installed_default_pair_is_no_news():
    assert CHOOSE("a3-mega", "", "", "v1.0.17", "v1.0.23") == {
        "plugin": "v1.0.17", "rxdm": "v1.0.23", "kept": False, "message": "",
        "wanted": {"plugin": "v1.0.17", "rxdm": "v1.0.23"}}


def test_a_missing_half_takes_the_partner_of_the_half_that_is_there():
    # the plugin's directory wiped (no record): RxDM's version picks the plugin back
    got = CHOOSE("a3-mega", "", "", None, "v1.0.21")
    assert (got["plugin"], got["rxdm"], got["kept"]) == ("v1.0.15", "v1.0.21", True)
    # RxDM's unit removed: the plugin's partner
    got = CHOOSE("a3-mega", "", "", "v1.0.16", None)
    assert (got["plugin"], got["rxdm"]) == ("v1.0.16", "v1.0.22")
    # a digest in the unit says nothing about the version: the plugin decides
    got = CHOOSE("a3-mega", "", "", "v1.0.16", "sha256:" + "a" * 64)
    assert (got["plugin"], got["rxdm"]) == ("v1.0.16", "v1.0.22")


def test_an_unlisted_installed_half_is_kept_with_what_the_table_cannot_pair():
    got = CHOOSE("a3-mega", "", "", "v1.0.99", None)
    assert (got["plugin"], got["rxdm"], got["kept"]) == ("v1.0.99", "v1.0.23", True)


def test_gib_families_keep_their_plugin_and_have_no_rxdm():
    got = CHOOSE("a4", "", "", "v1.0.9", None)
    assert (got["plugin"], got["rxdm"], got["kept"]) == ("v1.0.9", "", True)
    assert got["message"] == ("kept the installed plugin v1.0.9; the collection's default is plugin v1.1.1; "
                              "gpudirect.gcp.upgrade_plugin moves it")
    assert CHOOSE("a4", "", "", None, "v1.0.1")["rxdm"] == ""
