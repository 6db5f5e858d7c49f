# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The job evidence summary from node results a hostile job or a broken node shaped: every node-supplied
text is one masked, bounded line (in the summary and its page) and a wrong-shaped result is one line naming
its node, never an exception that costs the other nodes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import job_summary
from ansible_collections.gpudirect.gcp.tests.unit.plugins.plugin_utils.diagnose import test_job_summary

NODES = test_job_summary.NODES


def node_result(index, odd_rank=5, frame_of=None):
    """One node's nccl_job_evidence result, as test_job_summary.py builds it, without its findings."""
    return dict(test_job_summary.node_result(index, odd_rank, frame_of), findings=[])


HOSTILE = (u"evil\nsecond line\r\x1b[31mred\x1b[0m\x00nul\u2028sep\u2029para\x85next "
           u"TOKEN=hunter2 Authorization: Bearer abc.def.ghi <script>alert(1)</script> | [x](http://evil) # h")
SECRET = "hunter2"


def _strings(value):
    """Every string in a JSON-shaped value, keys included."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


def _assert_clean(summary, limit=4000):
    # the summary is valid JSON (no NaN or inf) and every string in it one bounded line with no secret
    json.dumps(summary, allow_nan=False)
    for text in _strings(summary):
        assert text == safe_text.one_line(text), repr(text)
        assert len(text) <= limit and SECRET not in text and "abc.def.ghi" not in text, repr(text)
    page = job_summary.text(summary)
    assert page.endswith("\n")
    for line in page[:-1].split("\n"):
        assert line == safe_text.one_line(line) and len(line) <= job_summary.MAX_LINE, repr(line)
        assert SECRET not in line and "<script>" not in line and "[x](http" not in line, repr(line)
    return page


def _hostile_result(index):
    result = node_result(index, frame_of={2 * index: HOSTILE})
    result["job"] = HOSTILE
    result["ras"]["state"] = HOSTILE
    result["ras"]["odd_ranks"][0].update(comm=HOSTILE, host=HOSTILE, node=HOSTILE, behind=HOSTILE * 50,
                                         counts={HOSTILE: 41})
    result["findings"] = [{"component": "job", "subject": HOSTILE, "severity": "fail", "cause": HOSTILE * 100}]
    result["parts"]["gpus"]["reasons"] = [HOSTILE, HOSTILE * 1000]
    result["parts"][HOSTILE] = {"ok": False, "reasons": [HOSTILE]}
    return result


def test_node_text_is_one_masked_bounded_line_in_the_summary_and_its_page():
    results = dict((host, _hostile_result(i)) for i, host in enumerate(NODES))
    results[NODES[1]] = {"failed": True, "msg": HOSTILE * 100}
    summary = job_summary.summarize(results, NODES)
    page = _assert_clean(summary)
    # the odd rank is still named, with the node RAS gave, escaped
    assert [o["rank"] for o in summary["odd_ranks"]] == [5]
    assert summary["nodes"][1]["reason"].startswith("evil\\nsecond line\\r\\x1b[31mred")
    # markup from the node is shown as text, never rendered
    assert "\\<script\\>" in page and "\\|" in page


def test_the_headline_is_one_line_when_every_name_in_it_comes_from_the_nodes():
    results = dict((host, _hostile_result(i)) for i, host in enumerate(NODES))
    summary = job_summary.summarize(results, NODES, names={HOSTILE: HOSTILE})
    assert summary["headline"] == safe_text.one_line(summary["headline"])
    assert SECRET not in summary["headline"] and len(summary["headline"]) <= job_summary.MAX_LINE


@pytest.mark.parametrize("bad, why", [
    ([1, 2], "evidence result is not a mapping (list)"),
    ("text\nmore", "evidence result is not a mapping (str)"),
    (42, "evidence result is not a mapping (int)"),
])
def test_a_result_that_is_not_a_mapping_is_one_line_naming_its_node(bad, why):
    results = dict((host, node_result(i)) for i, host in enumerate(NODES))
    results["a3m-3"] = bad
    summary = job_summary.summarize(results, NODES)
    node = summary["nodes"][3]
    assert node["host"] == "a3m-3" and node["gathered"] is False and node["reason"] == why
    assert "a3m-3: %s" % why in [f["cause"] for f in summary["findings"]]
    # the other nodes are summarised as ever
    assert [n["gathered"] for n in summary["nodes"][:3]] == [True, True, True]
    assert [o["rank"] for o in summary["odd_ranks"]] == [5]
    _assert_clean(summary)


WRONG = [
    ("parts", [1], "parts is not a mapping (list)"),
    ("ras", "hang", "ras is not a mapping (str)"),
    ("ranks", {"rank": 1}, "ranks is not a list (dict)"),
    ("findings", ["text"], "findings[0] is not a mapping (str)"),
    ("inspector", {"gbs": 1}, "inspector is not a list (dict)"),
    ("xids", [None], "xids[0] is not a mapping (null)"),
    ("verdicts", "hang", "verdicts is not a list (str)"),
]


@pytest.mark.parametrize("field, value, why", WRONG, ids=[w[0] for w in WRONG])
def test_a_field_of_the_wrong_shape_is_one_line_naming_the_node_and_the_field(field, value, why):
    results = dict((host, node_result(i)) for i, host in enumerate(NODES))
    results["a3m-1"] = dict(results["a3m-1"], **{field: value})
    summary = job_summary.summarize(results, NODES)
    assert summary["nodes"][1]["gathered"] is False
    assert summary["nodes"][1]["reason"] == "evidence field %s" % why
    assert "a3m-1: evidence field %s" % why in [f["cause"] for f in summary["findings"]]
    assert [n["gathered"] for n in summary["nodes"]] == [True, False, True, True]
    _assert_clean(summary)


def test_numbers_that_are_strings_nan_or_inf_never_break_the_summary():
    hosts = ["a3m-%d" % n for n in range(6)]
    results = {}
    for index, host in enumerate(hosts):
        gbs = [float("nan"), float("inf"), "fast", 1e308, 180.0, 181.0][index]
        row = {"job": "4242", "comm": "DP 0", "collective": "AllReduce", "message_size": "4-5GB", "gbs": gbs}
        results[host] = dict(node_result(0), inspector=[row], processes="3", masked=float("nan"))
    results["a3m-0"]["ranks"] = [{"rank": "5", "frame": "f"}, {"rank": float("inf"), "frame": "g"}]
    results["a3m-1"]["ras"]["odd_ranks"][0]["rank"] = "five"
    summary = job_summary.summarize(results, hosts)
    _assert_clean(summary)
    assert summary["stragglers"] == []
    assert summary["nodes"][0]["ranks"] == [5, None] and summary["nodes"][0]["processes"] == 3


def test_a_missing_ras_or_parts_entry_of_the_wrong_shape_costs_only_that_node():
    results = dict((host, node_result(i)) for i, host in enumerate(NODES))
    del results["a3m-0"]["ras"]
    results["a3m-2"]["parts"]["stacks"] = ["ok"]
    summary = job_summary.summarize(results, NODES)
    assert summary["nodes"][0]["gathered"] is True and summary["nodes"][0]["ras"] == "-"
    assert summary["nodes"][2]["reason"] == "evidence field parts.stacks is not a mapping (list)"
    _assert_clean(summary)


def test_a_hostile_summary_handed_to_the_page_still_gives_one_line_rows():
    summary = job_summary.summarize({NODES[0]: node_result(0)}, NODES[:1])
    summary["nodes"][0]["host"] = HOSTILE
    summary["headline"] = HOSTILE
    for line in job_summary.text(summary)[:-1].split("\n"):
        assert line == safe_text.one_line(line) and SECRET not in line


# --- any JSON-shaped node result ---

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                     st.text(max_size=40), st.sampled_from([HOSTILE, "hang", "fail", "job", "ok"]))
JSON = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(st.text(max_size=10), inner, max_size=4)),
                    max_leaves=12)
FIELDS = ("job", "archive", "processes", "ranks", "ras", "verdicts", "findings", "xids", "masked", "inspector",
          "parts", "failed", "msg")


@st.composite
def node_results(draw):
    """A well-formed result with some of its fields (and fields inside them) replaced by any JSON."""
    if draw(st.integers(0, 9)) == 0:
        return draw(JSON)
    result = copy.deepcopy(node_result(draw(st.integers(0, 3))))
    for field in draw(st.lists(st.sampled_from(FIELDS), max_size=3)):
        result[field] = draw(JSON)
    if isinstance(result.get("ras"), dict) and isinstance(result["ras"].get("odd_ranks"), list) \
            and result["ras"]["odd_ranks"] and isinstance(result["ras"]["odd_ranks"][0], dict) and draw(st.booleans()):
        result["ras"]["odd_ranks"][0][draw(st.sampled_from(["comm", "rank", "host", "node", "behind", "counts"]))] = \
            draw(JSON)
    if isinstance(result.get("ranks"), list) and result["ranks"] and isinstance(result["ranks"][0], dict) \
            and draw(st.booleans()):
        result["ranks"][0][draw(st.sampled_from(["rank", "frame"]))] = draw(JSON)
    return result


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(node_results(), min_size=1, max_size=5), st.none() | st.dictionaries(st.text(max_size=8), JSON))
def test_any_json_shaped_node_result_never_raises_and_the_page_is_bounded_lines(results, names):
    hosts = ["node-%d" % n for n in range(len(results))]
    names = dict((k, v) for k, v in (names or {}).items() if isinstance(v, str)) or None
    summary = job_summary.summarize(dict(zip(hosts, results)), hosts, names=names)
    assert [n["host"] for n in summary["nodes"]] == hosts
    _assert_clean(summary)
