# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""_version_qualification parts what a floor refuses from what is only named."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.filter.preflight import version_qualification


def test_a_floor_refusal_and_a_pair_warning_part_by_severity():
    nodes, fams = ["n0", "n1"], ["a4x", "a3-mega"]
    versions = [{"nccl": "2.23.4"}, {"plugin": "v1.0.17", "driver": "580.65.06"}]
    refused = version_qualification(nodes, fams, versions, severity="fail")
    named = version_qualification(nodes, fams, versions, severity="warn")
    assert refused == ["NCCL: NCCL 2.23.4 is below the a4x floor, NCCL 2.25.1 [NCCLGH 2186, 2026-12] "
                       "(1 of 2 node(s): n0)"]
    assert len(named) == 1 and named[0].startswith("driver: driver 580.65.06 is older than driver 595.71.05")
    assert sorted(version_qualification(nodes, fams, versions)) == sorted(refused + named)


def test_an_unknown_severity_is_one_line():
    with pytest.raises(AnsibleFilterError, match="severity must be fail, warn or empty, got 'error'"):
        version_qualification(["n0"], ["a4x"], [{}], severity="error")
