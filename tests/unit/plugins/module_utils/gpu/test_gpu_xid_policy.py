# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Xid policy: NVIDIA's catalogue by default, one code's severity or count threshold changed by the
inventory, and every judgment read from that one table."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import health, xid, xid_catalogue
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu.xid_catalogue import XIDS
from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.gpu.test_gpu_health import A3, evidence
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.gpu.test_gpu_xid import lines_of, read

# Xid 79 on GPU 0 and the public log's five GSP timeouts (Xid 119, 45 s apart) moved to GPU 1
LOG = ("[ 99.1] NVRM: Xid (PCI:0000:04:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
       + lines_of(read("public", "xid-kernel-log.txt"), "PCI:0000:61:00): 119").replace("0000:61:00", "0000:05:00"))


def xid_findings(policy=None, log=LOG):
    found = health.judge(A3, evidence(kernel_log=log), xid_policy=policy)
    return [(f["subject"], f["severity"], f["rung"]) for f in found]


def test_the_default_policy_is_nvidias_catalogue():
    table, problems = xid.policy()
    assert problems == [] and sorted(table) == sorted(XIDS)
    for number, entry in XIDS.items():
        row = table[number]
        for field in ("meaning", "severity", "repair", "source"):
            assert row[field] == entry[field], (number, field)
        assert row["count"] == 1 and row["window_s"] is None and row["known"] is True, number
    assert xid.policy({})[0] == table and xid.policy(None)[0] == table


def test_an_override_changes_the_verdict_for_that_code_only():
    before = xid_findings()
    assert ("GPU 0 (0000:04:00)", "fail", "reboot") in before and ("GPU 1 (0000:05:00)", "fail", "reset_gpu") in before
    after = xid_findings({"79": {"severity": "warn", "repair": "rerun"}})
    assert set(before) - set(after) == {("GPU 0 (0000:04:00)", "fail", "reboot")}
    assert set(after) - set(before) == {("GPU 0 (0000:04:00)", "warn", "rerun")}
    # an int key works as well as the JSON config's string key
    assert xid_findings({79: {"severity": "warn", "repair": "rerun"}}) == after


def test_a_count_in_a_window_decides_the_severity():
    gsp = ("GPU 1 (0000:05:00)", "fail", "reset_gpu")
    assert gsp in xid_findings({"119": {"count": 5, "window_s": 3600}})
    below = ("GPU 1 (0000:05:00)", "warn", "rerun")
    assert below in xid_findings({"119": {"count": 6, "window_s": 3600}})
    # 45 s apart: at most two in any minute
    assert below in xid_findings({"119": {"count": 3, "window_s": 60}})
    assert gsp in xid_findings({"119": {"count": 2, "window_s": 60}})
    cause = [f["cause"] for f in health.judge(A3, evidence(kernel_log=LOG), xid_policy={"119": {"count": 6}})
             if f["subject"].startswith("GPU 1")][0]
    assert "x5" in cause and "6" in cause
    # the other code keeps the catalogue's reading
    assert ("GPU 0 (0000:04:00)", "fail", "reboot") in xid_findings({"119": {"count": 6}})


def test_a_bad_override_is_one_line_and_the_rest_applies():
    table, problems = xid.policy({"79": {"severity": "fatal"}, "abc": {"severity": "warn"},
                                  "13": {"count": -1, "severity": "fail"}, "119": {"severity": "warn"},
                                  "31": "fail", "43": {"colour": "red"}, "48": {"window_s": 1.5}})
    assert len(problems) == 6 and all("\n" not in p for p in problems)
    said = " | ".join(problems)
    for code, field in (("79", "severity"), ("abc", "code"), ("13", "count"), ("31", ""), ("43", "colour"),
                        ("48", "window_s")):
        assert any(p.startswith("xid_policy %s" % code) and field in p for p in problems), (code, field, said)
    assert table[79]["severity"] == "fail" and table[13]["severity"] == "fail" and table[13]["count"] == 1
    assert table[119]["severity"] == "warn" and table[48]["window_s"] is None
    found = health.judge(A3, evidence(kernel_log=LOG), xid_policy={"79": {"severity": "fatal"},
                                                                   "119": {"severity": "warn", "repair": "rerun"}})
    policy_lines = [f for f in found if f["subject"] == "xid_policy"]
    assert [(f["severity"], f["rung"]) for f in policy_lines] == [("warn", "rerun")]
    assert "79" in policy_lines[0]["cause"] and "severity" in policy_lines[0]["cause"]
    assert ("GPU 1 (0000:05:00)", "warn", "rerun") in [(f["subject"], f["severity"], f["rung"]) for f in found]
    assert xid.policy("79: fatal")[1] == ["xid_policy: must map Xid codes to their settings, got str"]


def test_a_code_the_catalogue_lacks_can_be_given_a_policy():
    log = "NVRM: Xid (PCI:0000:04:00): 9999, pid=7, name=python, something new\n"
    assert xid_findings(log=log) == [("GPU 0 (0000:04:00)", "warn", "reset_gpu")]
    assert xid_findings({"9999": {"severity": "fail"}}, log=log) == [("GPU 0 (0000:04:00)", "fail", "reset_gpu")]


def test_a_throwaway_row_of_the_table_reaches_the_judgment(monkeypatch):
    log = "[ 7.0] NVRM: Xid (PCI:0000:04:00): 777, pid=7, name=python, made up for this test\n"
    assert xid_findings(log=log) == [("GPU 0 (0000:04:00)", "warn", "reset_gpu")]
    monkeypatch.setitem(xid_catalogue.XIDS, 777, {"meaning": "throwaway row", "severity": "fail",
                                                  "repair": "report_host", "source": "NVCAT"})
    assert xid_findings(log=log) == [("GPU 0 (0000:04:00)", "fail", "report_host")]
    assert "throwaway row" in health.judge(A3, evidence(kernel_log=log))[0]["cause"]
    # the state-backed column too: a row that names the ECC state is history once that state is clear
    monkeypatch.setitem(xid_catalogue.XIDS, 777, dict(xid_catalogue.XIDS[777], state="ecc"))
    assert xid_findings(log=log) == [("GPU 0 (0000:04:00)", "warn", "rerun")]


def test_the_node_checks_pass_the_policy_to_the_gpu_judge(monkeypatch):
    assert node_health.gpu_options()["xid_policy"]["type"] == "dict"
    seen = {}

    def check(expected, run, which, **kwargs):
        seen.update(kwargs)
        return {"driver": None, "gpus": [], "xids": [], "dcgm": None, "findings": []}
    monkeypatch.setattr(node_health.gpu_health, "check", check)
    monkeypatch.setattr(node_health.rdma, "check", lambda *a, **k: ([], []))
    node_health.gpu_state("a3-mega", {"xid_policy": {"13": {"count": 5}}}, None, None)
    assert seen["xid_policy"] == {"13": {"count": 5}}
