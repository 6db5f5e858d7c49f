# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpudirect.gcp.plugins.filter.nccl_tests_parse import FilterModule

FILTER = FilterModule().filters()["nccl_tests_parse"]
FIX = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "nccl")


def test_filter_on_text_and_registered_result():
    with open(os.path.join(FIX, "a3-mega_all_gather_2node_dstack.txt")) as f:
        text = f.read()
    res = FILTER(text, collective="all_gather")
    assert res["ok"] and res["collective"] == "all_gather" and res["largest_busbw_gbps"] == 188.37
    reg = {"stdout": text, "rc": 0, "changed": False}
    assert FILTER(reg)["rows"] == res["rows"]


def test_filter_bad_input_is_data_not_exception():
    res = FILTER(12)
    assert res["ok"] is False and "expected the text or JSON" in res["errors"][0]


def test_the_environment_nccl_echoed_is_masked_in_the_filters_result():
    text = ("h:1:1 [0] NCCL INFO NCCL_X_URL set by environment to https://u:pw@h/x.\n"
            "h:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0.\n")
    res = FILTER(text, collective="all_gather")
    assert res["env_set"] == {"NCCL_X_URL": "https://u:********@h/x", "NCCL_SOCKET_IFNAME": "eth0"}
