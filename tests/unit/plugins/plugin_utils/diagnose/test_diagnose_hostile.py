# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The diagnosis from evidence a hostile job or a broken node shaped: every finding's text is one masked,
bounded line, and a node's evidence of the wrong shape is one finding naming the node, never an error that
costs the other nodes their diagnosis."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.gpudirect.gcp.plugins.filter.diagnose import FilterModule
from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import diagnose, findings
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import Repairs
from ansible_collections.gpudirect.gcp.tests.unit.plugins.plugin_utils.diagnose import test_diagnose

FILTERS = FilterModule().filters()
REPAIRS = Repairs(args=["-i", "inv.yml"], zones={"n0": "us-central1-a"})
HOSTILE = (u"evil\nsecond line\r\x1b[31mred\x1b[0m\x00nul\u2028sep\u2029para\x85next "
           u"TOKEN=hunter2 Authorization: Bearer abc.def.ghi <script>alert(1)</script>")
SECRET = "hunter2"
HOSTS = ["n0", "n1", "n2", "n3"]


def healthy(host, n=4, nics=(1, 2)):
    """One healthy a3-mega node's evidence, as test_diagnose.py builds it."""
    return test_diagnose.healthy(host, n, nics)


def cluster():
    return dict((h, healthy(h)) for h in HOSTS)


def _assert_clean(items, limit=4000):
    json.dumps(items, allow_nan=False)
    for item in items:
        for field in ("host", "component", "subject", "severity", "cause", "repair"):
            text = item.get(field)
            if text is None:
                continue
            assert text == safe_text.one_line(text) and len(text) <= limit, (field, text)
            assert SECRET not in text and "abc.def.ghi" not in text, (field, text)
        line = FILTERS["_diagnose_line"](item)
        assert line == safe_text.one_line(line) and SECRET not in line


def test_node_text_in_every_finding_is_one_masked_bounded_line():
    ev = cluster()
    ev["n0"]["reach"] = {"ok": False, "msg": HOSTILE}
    ev["n1"]["error"] = {"task": HOSTILE, "msg": HOSTILE * 100}
    ev["n2"]["rxdm"].update(ready=False, reason=HOSTILE, log_tail=[HOSTILE])
    ev["n2"]["other"] = [{"component": "gpu", "subject": HOSTILE, "severity": "warn", "cause": HOSTILE * 1000}]
    ev["n3"]["profile"]["problems"] = [HOSTILE]
    ev["n3"]["gpu"] = {"error": None, "findings": [
        {"component": "gpu", "subject": HOSTILE, "severity": "fail", "cause": HOSTILE, "rung": "report_host"}]}
    found = FILTERS["_diagnose_node_findings"](ev, HOSTS)
    _assert_clean(found)
    assert set(f["host"] for f in found) == set(HOSTS)
    # Google's host repair carries the cause as its description: one masked line there too
    faulty = FILTERS["_diagnose_faulty_hosts"](found)
    assert [h["host"] for h in faulty] == ["n3"]
    assert faulty[0]["description"] == safe_text.one_line(faulty[0]["description"])
    assert SECRET not in faulty[0]["description"]


def test_an_unreachable_message_of_only_whitespace_or_not_text_is_still_one_finding():
    ev = cluster()
    ev["n0"]["reach"] = {"ok": False, "msg": "   \n  "}
    ev["n1"]["reach"] = {"ok": False, "msg": ["a", "b"]}
    found = FILTERS["_diagnose_node_findings"](ev, HOSTS)
    assert [(f["host"], f["subject"]) for f in found if f["severity"] == "fail"] == [
        ("n0", "connection"), ("n1", "connection")]
    _assert_clean(found)


WRONG = [
    ("evidence", [1, 2], "n1: diagnose evidence is not a mapping (list)"),
    ("evidence", "down\nhard", "n1: diagnose evidence is not a mapping (str)"),
    ("nics", [42], "n1: diagnose evidence is malformed"),
    ("nic", "eth1", "n1: diagnose evidence is malformed"),
    ("error", "boom", "n1: diagnose evidence is malformed"),
    ("rxdm", ["not", "ready"], "n1: diagnose evidence is malformed"),
    ("versions", {"driver": ["550"]}, "n1: diagnose evidence is malformed"),
    ("other", [{"component": "toaster", "subject": "x", "severity": "fail", "cause": "y"}],
     "n1: diagnose evidence is malformed"),
]


@pytest.mark.parametrize("field, value, why", WRONG, ids=["%s-%d" % (w[0], i) for i, w in enumerate(WRONG)])
def test_evidence_of_the_wrong_shape_is_one_finding_naming_the_node_and_costs_no_other(field, value, why):
    ev = cluster()
    if field == "evidence":
        ev["n1"] = value
    elif field == "nics":
        ev["n1"]["nic"]["nics"] = value
    else:
        ev["n1"][field] = value
    found = FILTERS["_diagnose_node_findings"](ev, HOSTS)
    mine = [f for f in found if f["host"] == "n1"]
    assert [(f["component"], f["subject"], f["severity"]) for f in mine] == [("host", "diagnose", "fail")]
    assert mine[0]["cause"].startswith(why)
    # the other nodes' diagnosis is as on a healthy cluster: nothing to say
    assert [f for f in found if f["host"] != "n1"] == []
    _assert_clean(found)


def test_a_diagnose_evidence_record_of_the_wrong_shape_costs_only_its_node():
    ev = cluster()
    ev["n2"] = {"results": {"node": ["x"]}, "settings": "all"}
    found = FILTERS["_diagnose_node_findings"](ev, HOSTS)
    assert [(f["host"], f["subject"]) for f in found] == [("n2", "diagnose")]
    assert found[0]["cause"].startswith("n2: diagnose evidence is malformed")


def test_wrong_input_from_the_playbook_is_one_clear_line():
    for call, why in [
            (lambda: FILTERS["_diagnose_node_findings"]([], HOSTS), "_diagnose_node_findings: expects"),
            (lambda: FILTERS["_diagnose_node_findings"](cluster(), "n0"), "_diagnose_node_findings: hosts must"),
            (lambda: FILTERS["_diagnose_busy"]([], HOSTS), "_diagnose_busy: expects"),
            (lambda: FILTERS["_diagnose_faulty_hosts"]([1], ), "_diagnose_faulty_hosts: expects a list of findings"),
            (lambda: FILTERS["_diagnose_summary"]("x", HOSTS), "_diagnose_summary: expects a list of findings"),
            (lambda: FILTERS["_diagnose_passing"]([None], HOSTS), "_diagnose_passing: expects a list of findings"),
            (lambda: FILTERS["_diagnose_job_summary"]({}, HOSTS, names=[1]), "_diagnose_job_summary: names"),
            (lambda: FILTERS["_diagnose_job_text"]({"headline": "x", "nodes": 3}), "_diagnose_job_text: expects")]:
        with pytest.raises(AnsibleFilterError) as err:
            call()
        assert str(err.value).startswith(why) and "\n" not in str(err.value), str(err.value)


@pytest.mark.parametrize("result", [
    {"failed": True, "msg": HOSTILE},
    {"failed": True, "msg": ["not", "text"]},
    {"verdict": "fail", "bad_nodes": "n1", "node_table": ["n1"], "collectives": [{"status": "fail"}]},
    {"verdict": "fail", "collectives": "all", "pairwise": {"fabric": {"bad": [{"runs": 3}]}}},
    {"verdict": "fail", "collectives": [{"collective": HOSTILE, "status": "fail", "reasons": [HOSTILE]}]},
])
def test_an_nccl_tests_result_of_any_shape_is_findings_never_a_traceback(result):
    found = FILTERS["_diagnose_add_fabric"]([], result, HOSTS, HOSTS)
    assert found and all(f["component"] == "fabric" for f in found)
    _assert_clean(found)


def test_a_finding_line_and_a_host_report_are_one_line_whatever_the_finding_holds():
    item = findings.finding("n0", "gpu", HOSTILE, "fail", HOSTILE, repair=HOSTILE)
    assert diagnose.line(item) == safe_text.one_line(diagnose.line(item))
    item = {"host": "n0", "component": "gpu", "subject": HOSTILE, "severity": "fail", "cause": HOSTILE,
            "repair": REPAIRS.report_host("n0", HOSTILE)}
    line = FILTERS["_diagnose_line"](item)
    assert line == safe_text.one_line(line) and SECRET not in line
    assert "\n" not in REPAIRS.report_host("n0", HOSTILE) and SECRET not in REPAIRS.report_host("n0", HOSTILE)


# --- any JSON-shaped evidence ---

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                     st.text(max_size=30), st.just(HOSTILE))
JSON = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                      st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                    max_leaves=10)
FIELDS = ("reach", "family", "zone", "error", "nic", "rxdm", "plugin", "profile", "devices", "kernel_modules",
          "versions", "gpu", "topology", "maintenance", "other", "busy", "os_release")


@st.composite
def evidence(draw):
    if draw(st.integers(0, 9)) == 0:
        return draw(JSON)
    ev = copy.deepcopy(healthy("n%d" % draw(st.integers(0, 3))))
    for field in draw(st.lists(st.sampled_from(FIELDS), max_size=3)):
        ev[field] = draw(JSON)
    return ev


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(evidence(), min_size=1, max_size=4))
def test_any_json_shaped_evidence_never_raises_and_every_finding_is_one_line(items):
    hosts = ["n%d" % i for i in range(len(items))]
    found = FILTERS["_diagnose_node_findings"](dict(zip(hosts, items)), hosts)
    _assert_clean(found)
    fabric = FILTERS["_diagnose_add_fabric"](found, items[0], hosts, hosts)
    _assert_clean(fabric)
