# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import topology as t


@pytest.mark.parametrize("key", ["subblock", "subBlock", "SUBBLOCK", "sub_block"])
def test_normalize_accepts_every_casing_of_the_subblock_key(key):
    assert t.normalize({"cluster": "c1", "block": "b1", key: "s1", "host": "h1"}) == {
        "cluster": "c1", "block": "b1", "subblock": "s1", "host": "h1"}


def test_normalize_drops_empty_and_non_text_values():
    assert t.normalize({"block": "b", "subblock": "", "host": None, "extra": "x"}) == {"block": "b"}
    assert t.normalize({"cluster": "c-only"}) == {}
    assert t.normalize({"block": {"nested": 1}}) == {}
    assert t.normalize("not a mapping") == {}


@pytest.mark.parametrize("value,want", [
    ("/b1/s1/h1", {"block": "b1", "subblock": "s1", "host": "h1"}),
    ("/c/b1/s1/h1", {"cluster": "c", "block": "b1", "subblock": "s1", "host": "h1"}),
    ("b1/s1/h1", {}), ("/b1//h1", {}), ("/b1/s1", {}), ("", {}), (None, {}), (42, {}),
])
def test_parse_physical_host(value, want):
    assert t.parse_physical_host(value) == want


def test_resource_status_prefers_the_structured_field_and_falls_back_to_physical_host():
    both = {"physicalHost": "/x/y/z",
            "physicalHostTopology": {"cluster": "c", "block": "b", "subBlock": "s", "host": "h"}}
    assert t.from_resource_status(both) == {"cluster": "c", "block": "b", "subblock": "s", "host": "h"}
    assert t.from_resource_status({"physicalHost": "/x/y/z"}) == {"block": "x", "subblock": "y", "host": "z"}
    assert t.from_resource_status({}) == {}
    assert t.from_resource_status(None) == {}


def test_metadata_json_first_then_flat_and_bad_json_named():
    assert t.from_metadata("/x/y/z", '{"cluster":"c","block":"b","subBlock":"s","host":"h"}')["subblock"] == "s"
    assert t.from_metadata("/x/y/z", None) == {"block": "x", "subblock": "y", "host": "z"}
    with pytest.raises(ValueError, match="physical_host_topology"):
        t.from_metadata(None, "{not json")
    with pytest.raises(ValueError, match="JSON object"):
        t.from_metadata(None, "[1, 2]")


def test_ids_locality_and_order():
    a = {"cluster": "c", "block": "b1", "subblock": "s1", "host": "h1"}
    b = dict(a, host="h2")
    c = dict(a, subblock="s2")
    d = dict(a, block="b2")
    assert t.subblock_id(a) == "c/b1/s1" and t.block_id(a) == "c/b1"
    assert t.subblock_id({"block": "b"}) is None
    assert t.locality(a, a) == t.SAME_HOST
    assert t.locality(a, b) == t.SAME_SUBBLOCK
    assert t.locality(a, c) == t.SAME_BLOCK
    assert t.locality(a, d) == t.SAME_CLUSTER
    assert t.locality(a, dict(a, cluster="other")) == t.FAR
    assert t.locality(a, {}) == t.UNKNOWN
    names = sorted([("n3", d), ("n0", {}), ("n2", c), ("n1", b), ("n4", a)], key=lambda x: t.sort_key(x[1], x[0]))
    assert [name for name, _topo in names] == ["n4", "n1", "n2", "n3", "n0"]


def test_differences_name_each_level():
    assert t.differences({"block": "b1", "host": "h"}, {"block": "b2", "host": "h", "subblock": "s"}) == [
        "block: inventory says b1, node says b2"]
    assert t.short("0123456789abcdef") == "01234567~"
