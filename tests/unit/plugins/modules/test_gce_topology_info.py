# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gce_topology_info run as a module, the metadata server answered by a fake."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
from urllib.error import URLError

import pytest

from ansible_collections.gpudirect.gcp.plugins.modules import gce_topology_info
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.host.test_metadata_topology import (
    BASE, PLACED, TOPO, FakeServer)
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules._module_args import patch_module_args


def run(args, server, capsys, check_mode=False):
    args = dict(args, metadata_url=args.get("metadata_url", BASE))
    if check_mode:
        args["_ansible_check_mode"] = True
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            gce_topology_info.run_module(opener=server)
    return json.loads(capsys.readouterr().out)


def warnings(out):
    """The warnings' texts (ansible-core 2.19 returns each as a summary with its event's msg)."""
    return [w["event"]["msg"] if isinstance(w, dict) else w for w in out.get("warnings", [])]


def test_placement_from_the_json_attribute_in_check_mode_too(capsys):
    server = FakeServer({"physical_host_topology": json.dumps(TOPO), "physical_host": "/x/y/z"})
    for check_mode in (False, True):
        out = run({}, server, capsys, check_mode=check_mode)
        assert out["changed"] is False and "failed" not in out and warnings(out) == []
        assert out["topology"] == PLACED and "ansible_facts" not in out
        assert out["source"] == "physical_host_topology" and out["mismatches"] == [] and out["consistent"]
        assert out["msg"] == "placed at c1/b1/s1/h1 (from physical_host_topology)"
    assert server.calls[0]["timeout"] == 3.0


def test_physical_host_when_the_json_is_absent(capsys):
    out = run({"expected": {"block": "x"}, "timeout": 1}, FakeServer({"physical_host": "/x/y/z"}), capsys)
    assert out["topology"] == {"block": "x", "subblock": "y", "host": "z"}
    assert out["source"] == "physical_host" and out["consistent"]
    assert out["msg"].endswith("matches the expected placement")


def test_a_mismatch_is_data_and_a_warning_not_a_failure(capsys):
    expected = {"cluster": "c1", "block": "b9", "subblock": "s1", "host": "h2"}
    out = run({"expected": expected}, FakeServer({"physical_host_topology": json.dumps(TOPO)}), capsys)
    assert "failed" not in out and out["consistent"] is False
    assert out["mismatches"] == ["block: inventory says b9, node says b1", "host: inventory says h2, node says h1"]
    assert "differs from the expected placement: block: inventory says b9" in out["msg"]
    assert warnings(out) == [out["msg"]]


def test_no_placement_is_empty_unless_required(capsys):
    out = run({"expected": {"block": "b1"}}, FakeServer({}), capsys)
    assert "failed" not in out and out["topology"] == {}
    assert out["source"] == "none" and out["consistent"] is True
    assert out["msg"].endswith("absent or empty); the expected placement cannot be checked")
    failed = run({"required": True}, FakeServer({}), capsys)
    assert failed["failed"] is True and failed["topology"] == {}
    assert failed["msg"] == ("no placement data from the metadata server %s/instance/attributes/ "
                             "(physical_host_topology and physical_host absent or empty); required is true" % BASE)


def test_an_answer_that_places_nothing_is_warned_about(capsys):
    out = run({}, FakeServer({"physical_host": "rack-7"}), capsys)
    assert out["source"] == "none" and out["topology"] == {}
    assert warnings(out) == ["the metadata server answered without a placement: physical_host='rack-7'"]


def test_an_expected_placement_that_places_nothing_is_warned_about(capsys):
    out = run({"expected": {"cluster": "c1"}}, FakeServer({"physical_host": "/x/y/z"}), capsys)
    assert warnings(out) == ["expected places nothing (no block, sub-block or host), so nothing was compared"]


@pytest.mark.parametrize("answers,words", [
    ({"physical_host_topology": URLError("timed out")},
     "metadata server %s/instance/attributes/physical_host_topology cannot be reached: timed out" % BASE),
    ({"physical_host_topology": "{not json"},
     "metadata server %s/instance/attributes/physical_host_topology: physical_host_topology is not JSON" % BASE),
    ({"physical_host": 500}, "metadata server %s/instance/attributes/physical_host answered HTTP 500" % BASE),
])
def test_errors_fail_with_one_line(answers, words, capsys):
    out = run({}, FakeServer(answers), capsys)
    assert out["failed"] is True and out["msg"].startswith(words)
    assert "\n" not in out["msg"] and "exception" not in out


def test_bad_timeout_is_one_line(capsys):
    out = run({"timeout": 0}, FakeServer({}), capsys)
    assert out["failed"] is True and out["msg"] == "timeout must be more than 0 seconds, got 0.0"
