# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's driver, CUDA and NCCL against what its plugin release was qualified with."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import qualification

# TCPXO v1.0.17: driver 595.71.05, CUDA 13.2, NCCL 2.28.7 in the family table
GOOD = {"plugin": "v1.0.17", "driver": "595.71.05", "cuda": "13.2.0", "nccl": "2.28.7"}


def test_the_table_carries_each_pairs_qualification_with_its_source():
    q = families.plugin_qualification("a3-mega", "v1.0.17")
    assert (q["driver"], q["cuda"], q["nccl"]) == ("595.71.05", "13.2", "2.28.7")
    assert "TPI" in q["source"] and q["date"]
    # a release the table does not list has no qualification to judge against
    assert families.plugin_qualification("a3-mega", "v9.9.9") is None
    assert families.plugin_nccl_version("a3-mega", "v1.0.17") == "2.28.7"


def test_a_node_on_the_qualified_versions_or_a_newer_driver_is_not_named():
    assert qualification.check("a3-mega", GOOD) == []
    assert qualification.check("a3-mega", dict(GOOD, driver="600.10.01")) == []
    # the toolkit's patch release does not matter; nothing known, nothing said
    assert qualification.check("a3-mega", dict(GOOD, cuda="13.2.1", nccl=None, driver=None)) == []


@pytest.mark.parametrize("field, value, component, words", [
    ("driver", "580.65.06", "driver", "driver 580.65.06 is older than driver 595.71.05, which plugin v1.0.17"),
    ("driver", "595.58.02", "driver", "older than driver 595.71.05"),
    ("cuda", "12.8.1", "CUDA", "the node's CUDA toolkit is 12.8.1; plugin v1.0.17 was qualified with CUDA 13.2"),
    ("nccl", "2.21.5", "NCCL", "jobs can load NCCL 2.21.5, but plugin v1.0.17 was qualified with NCCL 2.28.7")])
def test_a_node_outside_its_pairs_qualification_is_named(field, value, component, words):
    [found] = qualification.check("a3-mega", dict(GOOD, **{field: value}))
    assert (found["component"], found["severity"]) == (component, "warn")
    assert words in found["cause"] and "[CEA PR 626" in found["cause"]
    [strict] = qualification.check("a3-mega", dict(GOOD, **{field: value}), strict=True)
    assert strict["severity"] == "fail"


def test_a_node_without_a_plugin_is_judged_against_the_release_the_run_installs():
    bare = {"driver": "580.65.06", "plugin": None}
    assert qualification.check("a3-mega", bare, plugin_version="v1.0.16") == []
    assert [f["component"] for f in qualification.check("a3-mega", bare)] == ["driver"]
    assert qualification.check("no-such-family", bare) == []


def test_the_table_says_how_old_its_newest_source_is():
    newest = families.newest_source_date()
    assert newest >= "2026-07"
    year, month = [int(n) for n in newest.split("-")[:2]]
    age = qualification.table_age(datetime.date(year, month, 1) + datetime.timedelta(days=30))
    assert age == {"newest_source": newest, "age_days": 30}
