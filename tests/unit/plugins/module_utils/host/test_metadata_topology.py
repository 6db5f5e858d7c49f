# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""metadata_topology: what is asked of the metadata server, 404 as absence, errors as one line."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import io
import json
import socket
from urllib.error import HTTPError, URLError

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import metadata_topology as mt

BASE = "http://169.254.169.254/computeMetadata/v1"
TOPO = {"cluster": "c1", "block": "b1", "subBlock": "s1", "host": "h1"}
PLACED = {"cluster": "c1", "block": "b1", "subblock": "s1", "host": "h1"}


class FakeServer(object):
    """An opener with open_url's signature: answers by attribute name, records every call."""

    def __init__(self, answers):
        self.answers, self.calls = answers, []

    def __call__(self, url, headers=None, timeout=None, **kwargs):
        self.calls.append(dict(kwargs, url=url, headers=headers, timeout=timeout))
        answer = self.answers.get(url.rsplit("/", 1)[1], 404)
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, int):
            raise HTTPError(url, answer, "Not Found" if answer == 404 else "Forbidden", {}, io.BytesIO(b""))
        return io.BytesIO(answer if isinstance(answer, bytes) else answer.encode())


def test_attribute_url_takes_the_v1_root_with_or_without_a_slash():
    assert mt.attribute_url(BASE + "/", "physical_host") == BASE + "/instance/attributes/physical_host"
    assert mt.attribute_url(BASE, "physical_host_topology") == BASE + "/instance/attributes/physical_host_topology"


def test_read_attribute_sends_the_header_directly_with_the_timeout():
    server = FakeServer({"physical_host": "/b1/s1/h1"})
    assert mt.read_attribute(BASE, "physical_host", 2.5, server) == "/b1/s1/h1"
    call = server.calls[0]
    assert call["url"] == BASE + "/instance/attributes/physical_host"
    assert call["headers"] == {"Metadata-Flavor": "Google"} and call["timeout"] == 2.5
    assert call["use_proxy"] is False and call["follow_redirects"] == "none" and call["use_netrc"] is False


def test_404_is_an_absent_attribute():
    assert mt.read_attribute(BASE, "physical_host", 3, FakeServer({})) is None
    assert mt.read_attributes(BASE, 3, FakeServer({})) == {"physical_host_topology": None, "physical_host": None}


@pytest.mark.parametrize("answer,words", [
    (403, "answered HTTP 403 Forbidden"),
    (URLError(ConnectionRefusedError(111, "Connection refused")), "cannot be reached: [Errno 111] Connection refused"),
    (URLError("unknown url type: metadata"), "cannot be reached: unknown url type: metadata"),
    (socket.timeout("timed out"), "did not answer within 3 s"),
    (ConnectionResetError(104, "reset\nby peer"), "cannot be reached: [Errno 104] reset by peer"),
    (b"x" * (mt.MAX_BYTES + 1), "answered more than 65536 bytes"),
    (b"\xff\xfe", "not UTF-8"),
])
def test_errors_are_one_line_naming_the_url(answer, words):
    with pytest.raises(mt.MetadataError) as exc:
        mt.read_attribute(BASE, "physical_host", 3, FakeServer({"physical_host": answer}))
    text = str(exc.value)
    assert text.startswith("metadata server %s/instance/attributes/physical_host " % BASE)
    assert words in text and "\n" not in text


def test_the_json_attribute_wins_over_physical_host():
    topo, source = mt.placement({"physical_host_topology": json.dumps(TOPO), "physical_host": "/x/y/z"})
    assert (topo, source) == (PLACED, "physical_host_topology")


def test_physical_host_answers_when_the_json_is_absent_or_places_nothing():
    want = ({"block": "x", "subblock": "y", "host": "z"}, "physical_host")
    assert mt.placement({"physical_host_topology": None, "physical_host": "/x/y/z"}) == want
    assert mt.placement({"physical_host_topology": '{"cluster": "c1"}', "physical_host": "/x/y/z"}) == want


def test_nothing_placed_is_an_empty_placement():
    assert mt.placement({"physical_host_topology": None, "physical_host": None}) == ({}, None)
    assert mt.placement({"physical_host": "not-a-path"}) == ({}, None)
    assert mt.placement(None) == ({}, None)
    assert mt.unplaced_answers({"physical_host_topology": None, "physical_host": "not-a-path"}) == [
        "physical_host='not-a-path'"]


def test_observe_compares_with_the_expected_placement():
    server = FakeServer({"physical_host_topology": json.dumps(TOPO)})
    same = mt.observe(BASE, 3, {"block": "b1", "subblock": "s1"}, server)
    assert same["topology"] == PLACED and same["consistent"] and same["mismatches"] == []
    other = mt.observe(BASE, 3, {"block": "b2", "subBlock": "s1", "host": "h1"}, server)
    assert other["mismatches"] == ["block: inventory says b2, node says b1"] and not other["consistent"]
    assert mt.observe(BASE, 3, None, server)["consistent"] is True


def test_observe_names_the_attribute_of_bad_json():
    for text in ("{not json", "[1, 2]"):
        with pytest.raises(mt.MetadataError) as exc:
            mt.observe(BASE, 3, None, FakeServer({"physical_host_topology": text, "physical_host": "/x/y/z"}))
        assert str(exc.value).startswith("metadata server %s/instance/attributes/physical_host_topology: "
                                         "physical_host_topology is not" % BASE)


def test_summary_lines():
    placed = {"topology": PLACED, "source": "physical_host_topology", "mismatches": []}
    assert mt.summary(placed) == "placed at c1/b1/s1/h1 (from physical_host_topology)"
    assert mt.summary(placed, {"block": "b1"}).endswith("; matches the expected placement")
    differs = dict(placed, mismatches=["block: inventory says b2, node says b1"])
    assert mt.summary(differs, {"block": "b2"}).endswith(
        "differs from the expected placement: block: inventory says b2, node says b1")
    none = {"topology": {}, "source": None, "mismatches": []}
    assert mt.summary(none, None, BASE) == (
        "no placement data from the metadata server %s/instance/attributes/ "
        "(physical_host_topology and physical_host absent or empty)" % BASE)
    assert mt.summary(none, {"block": "b1"}, BASE).endswith("; the expected placement cannot be checked")
