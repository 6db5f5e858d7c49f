# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's driver, CUDA and NCCL against what its plugin release was qualified with."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import re

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


# --- the family floors: Google's gIB release notes, NVIDIA's minimums --------------------------

def test_the_gib_release_notes_are_in_the_table_with_their_source_date_and_digest():
    x86, arm = families.FAMILIES["a3-ultra"]["gib_release"], families.FAMILIES["a4x"]["gib_release"]
    assert x86["version"] == arm["version"] == "v1.1.2" and x86["date"] == arm["date"] == "2026-05-14"
    assert x86["image"].endswith("/gpudirect-gib/nccl-plugin-gib:v1.1.2")
    assert x86["digest"] == "sha256:b71627dcf88862cd0e64434dfd0224441960db58f2022f94b5f56123659c207e"
    assert arm["image"].endswith("/gpudirect-gib/nccl-plugin-gib-arm64:v1.1.2")
    assert arm["digest"] == "sha256:6b7950cac6e6833661d4206920f5633b6e361b18bfd5315b63f9bf4a4b84a80e"
    assert x86["source"].startswith("GIBRN") and arm["source"].startswith("GIBRN")
    assert families.FAMILIES["a4"]["gib_release"] is x86
    # TCPX/TCPXO carry no gIB release
    assert families.FAMILIES["a3-mega"]["gib_release"] is None


@pytest.mark.parametrize("name", families.family_names())
def test_every_floor_carries_its_source_and_date_and_every_family_its_dcgm(name):
    floors = families.FAMILIES[name]["floors"]
    assert set(floors) == {"nccl", "driver", "cuda", "dcgm"}
    for what, floor in floors.items():
        if floor is None:
            continue
        assert floor["version"] and floor["source"] and floor["date"], (name, what)
        assert re.match(r"^[A-Z][A-Z0-9]{1,5}\b", floor["source"]), floor["source"]
    assert floors["dcgm"] is not None, "%s: no DCGM release in the table" % name


@pytest.mark.parametrize("family, versions, component, words", [
    ("a3-ultra", {"driver": "550.54.15"}, "driver",
     "driver 550.54.15 is below the a3-ultra floor, driver 570.26 [NVCUDA"),
    ("a4", {"cuda": "12.4.1"}, "CUDA", "CUDA 12.4.1 is below the a4 floor, CUDA 12.8 [NVM"),
    ("a4x", {"nccl": "2.23.4"}, "NCCL", "NCCL 2.23.4 is below the a4x floor, NCCL 2.25.1 [NCCLGH"),
])
def test_a_version_below_the_family_floor_is_refused_naming_the_source(family, versions, component, words):
    found = [f for f in qualification.check(family, versions) if f["component"] == component]
    assert [f["severity"] for f in found] == ["fail"], found
    assert words in found[0]["cause"]


def test_a_dcgm_older_than_the_one_the_family_is_validated_with_is_named_not_refused():
    [found] = qualification.check("a4x", {"dcgm": "3.3.9"})
    assert (found["component"], found["severity"]) == ("DCGM", "warn")
    assert "DCGM 3.3.9 is older than DCGM 4.3.1, which a4x is validated with [CHS" in found["cause"]
    assert qualification.check("a4x", {"dcgm": "3.3.9"}, strict=True)[0]["severity"] == "fail"


def test_versions_at_or_above_the_floor_are_not_named_by_it():
    ok = {"driver": "570.26", "cuda": "12.8.0", "nccl": "2.25.1, 2.27.5", "dcgm": "4.3.1"}
    assert [f for f in qualification.check("a4x", ok) if f["severity"] == "fail"] == []
    # NCCL: the floor holds when some NCCL jobs can load meets it
    assert [f for f in qualification.check("a4x", {"nccl": "2.21.5, 2.26.2"}) if f["component"] == "NCCL"
            and "floor" in f["cause"]] == []


def test_a_floor_the_table_does_not_know_is_not_compared():
    # no GB300 NCCL floor is published: an old NCCL on A4X Max is not refused for it
    assert families.FAMILIES["a4x-max"]["floors"]["nccl"] is None
    assert [f for f in qualification.check("a4x-max", {"nccl": "2.18.1"}) if "floor" in f["cause"]] == []
