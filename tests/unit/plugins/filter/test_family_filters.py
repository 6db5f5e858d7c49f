# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.filter.family import FilterModule

FILTERS = FilterModule().filters()


def test_family_profile_adds_id():
    prof = FILTERS["family_profile"]("a3-mega")
    assert prof["family"] == "a3-mega" and prof["vpc_mtu"] == 8244


def test_family_profile_unknown_is_one_clear_error():
    with pytest.raises(AnsibleFilterError, match="family_profile: unknown GPU family 'h100'"):
        FILTERS["family_profile"]("h100")


def test_nccl_env_filter():
    out = FILTERS["nccl_env"]("a3-mega", ["eth0"], ["eth1"])
    assert out["env"]["NCCL_FASTRAK_IFNAME"] == "eth1"
    with pytest.raises(AnsibleFilterError, match="unknown GPU family"):
        FILTERS["nccl_env"]("nope", [], [])


def test_version_pair_error_filter():
    assert FILTERS["_version_pair_error"]("a3-mega", "v1.0.17", "v1.0.23") == ""
    assert "needs plugin v1.0.17" in FILTERS["_version_pair_error"]("a3-mega", "v1.0.14", "v1.0.23")


def test_version_pair_error_warns_about_an_unqualified_pair(monkeypatch):
    warned = []
    monkeypatch.setattr("ansible.utils.display.Display.warning", lambda self, msg, *a, **kw: warned.append(msg))
    assert FILTERS["_version_pair_error"]("a3-high", "v3.1.13", "v2.0.16") == ""
    assert len(warned) == 1 and "plugin v3.1.13 with RxDM v2.0.16" in warned[0] and "unqualified" in warned[0]
    # strict: refused, and no warning
    assert "strict" in FILTERS["_version_pair_error"]("a3-high", "v3.1.13", "v2.0.16", "true")
    assert len(warned) == 1
