# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile text in, valid single-line text out; secrets masked in every shape they come in."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
from xml.etree import ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import findings_report
from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_report
from ansible_collections.gpudirect.gcp.plugins.module_utils.common import prom_text, safe_text

# an ANSI colour, a BEL, a NUL, a byte that is not UTF-8, a forged second line, a line separator
HOSTILE = b"\x1b[31mred\x07 nul\x00 byte\xff\nFAIL n9 forged\r".decode("utf-8", "surrogateescape") + u"\u2028"
SECRET = "ya29.a0AfH6SMBplanted-secret-value"


@pytest.mark.parametrize("value, expected", [
    (HOSTILE, "\\x1b[31mred\\x07 nul\\x00 byte\\xff\\nFAIL n9 forged\\r\\u2028"),
    (b"plain \xe2\x9c\x93 utf-8", u"plain \u2713 utf-8"),
    (None, ""), (42, "42"), ("tab\tthere", "tab\\tthere"), (u"\u0085next", "\\x85next")])
def test_one_line_shows_every_control_character_and_bad_byte(value, expected):
    assert safe_text.one_line(value) == expected


def test_visible_keeps_newlines_and_tabs_but_nothing_else():
    assert safe_text.visible("a\tb\nc\x0cd\udcfe") == "a\tb\nc\\x0cd\\xfe"
    safe_text.visible(HOSTILE).encode("utf-8")  # never a lone surrogate left


def test_one_line_limit():
    assert safe_text.one_line("x" * 300, limit=200) == "x" * 197 + "..."


@pytest.mark.parametrize("name, secret", [
    ("HF_TOKEN", True), ("db_password", True), ("AWS_SECRET_ACCESS_KEY", True), ("--api-key", True),
    ("GOOGLE_APPLICATION_CREDENTIALS", True), ("Authorization", True), ("COOKIE", True), ("PASSPHRASE", True),
    ("NCCL_IB_GID_INDEX", False), ("NCCL_SOCKET_IFNAME", False), ("LD_LIBRARY_PATH", False), ("PATH", False)])
def test_one_generous_rule_for_secret_names(name, secret):
    assert safe_text.is_secret_name(name) is secret


def test_masking_argv_text_and_env():
    argv = ["mpirun", "-x", "HF_TOKEN=abc", "-x", "NCCL_DEBUG=INFO", "--password", "hunter2", "--token=t0k",
            "-H", "a,b", SECRET, "Authorization: Bearer abc.def"]
    masked = safe_text.mask_argv(argv)
    assert masked == ["mpirun", "-x", "HF_TOKEN=********", "-x", "NCCL_DEBUG=INFO", "--password", "********",
                      "--token=********", "-H", "a,b", "********", "Authorization: ********"]
    text = safe_text.mask_text("export MY_SECRET='a b'; cannot read auth.json: No such file; key=%s" % SECRET)
    assert text == "export MY_SECRET=********; cannot read auth.json: No such file; key=********"
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"
    assert safe_text.mask_text("k: " + pem) == "k: ********"
    assert safe_text.mask_env({"X_TOKEN": "1", "NOTE": SECRET, "NCCL_IB_GID_INDEX": "3"}) == {
        "X_TOKEN": "********", "NOTE": "********", "NCCL_IB_GID_INDEX": "3"}


def _report():
    result = {"family": "a3-mega", "mode": "cluster", "verdict": "fail", "nodes": ["n0", "n1"],
              "env": {"HF_TOKEN": SECRET, "NCCL_DEBUG": HOSTILE},
              "collectives": [{"collective": "all_gather", "status": "fail", "reasons": [HOSTILE],
                               "hosts": ["n0", HOSTILE]}],
              "runs": [{"collective": "all_gather", "command": ["mpirun", "-x", "HF_TOKEN=" + SECRET, "-x",
                                                                "NCCL_DEBUG=WARN", "all_gather_perf"],
                        "output_tail": "env HF_TOKEN=%s\n%s" % (SECRET, HOSTILE)}]}
    findings = [{"host": "n0", "component": "nic", "subject": HOSTILE, "severity": "fail",
                 "cause": "bad\nFAIL n1 nic eth1: forged %s" % SECRET, "repair": HOSTILE}]
    return nccl_report.build_report(result, "run1", findings=findings, hosts=["n0", "n1"],
                                    diagnosis={"verdict": "fail", "passed": 1, "failed": 1})


def test_every_report_format_is_valid_for_hostile_text_and_keeps_no_secret():
    report = _report()
    for finding in report["findings"]:
        assert all("\n" not in (v or "") for v in finding.values())
    junit = nccl_report.to_junit(report)
    ET.fromstring(junit.encode("utf-8"))  # valid XML 1.0, or this raises
    html = nccl_report.to_html(report)
    html.encode("utf-8")
    assert "\x1b" not in html and "\x00" not in html and "\\x1b[31mred" in html
    text = nccl_report.to_json(report)
    json.loads(text)
    for output in (junit, html, text):
        assert SECRET not in output and "planted-secret" not in output
    assert report["runs"][0]["command"][2] == "HF_TOKEN=********"


def test_findings_clean_is_one_line_per_field():
    items = findings_report.clean([{"host": "n0", "component": "gpu", "subject": "GPU 1\nFAIL n2 gpu GPU 0",
                                    "severity": "fail", "cause": HOSTILE, "repair": None}])
    assert items[0]["subject"] == "GPU 1\\nFAIL n2 gpu GPU 0" and items[0]["repair"] is None


def test_prometheus_labels_are_one_line_of_utf8():
    text = prom_text.render([("m", "gauge", "help")], {"m": [([("subject", HOSTILE)], 1)]})
    text.encode("utf-8")
    assert len(text.splitlines()) == 3 and '\\\\x1b[31mred' in text


def test_the_agents_reason_is_one_line():
    line = node_health.one_line([node_health.finding("rxdm", "unit", "fail", HOSTILE + " token=" + SECRET)])
    assert "\n" not in line and "\r" not in line and SECRET not in line and "\\xff" in line


# any text in: what comes out is one line, valid UTF-8 and valid in every format

_ANY_TEXT = st.one_of(st.text(), st.binary().map(lambda b: b.decode("utf-8", "surrogateescape")))


@settings(max_examples=200, deadline=None)
@given(_ANY_TEXT)
def test_property_one_line_is_one_printable_utf8_line(text):
    out = safe_text.one_line(text)
    out.encode("utf-8")
    assert len(out.splitlines()) <= 1 and not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in out)


@settings(max_examples=100, deadline=None)
@given(_ANY_TEXT, _ANY_TEXT)
def test_property_every_report_format_takes_any_finding(subject, cause):
    findings = [{"host": "n0", "component": "gpu", "subject": subject, "severity": "fail", "cause": cause,
                 "repair": cause}]
    report = nccl_report.build_report({"family": "a3-mega", "nodes": ["n0"], "runs": [
        {"command": [subject, cause], "output_tail": cause}]}, "r", findings=findings, hosts=["n0"],
        diagnosis={"verdict": "fail"})
    ET.fromstring(nccl_report.to_junit(report).encode("utf-8"))
    nccl_report.to_html(report).encode("utf-8")
    json.loads(nccl_report.to_json(report))
    text = prom_text.render([("m", "gauge", "h")], {"m": [([("subject", subject)], 1)]})
    text.encode("utf-8")
    assert len(text.splitlines()) == 3


@settings(max_examples=100, deadline=None)
@given(_ANY_TEXT, _ANY_TEXT)
def test_property_the_agents_reason_and_drain_reason_are_one_line(subject, cause):
    from ansible_collections.gpudirect.gcp.plugins.module_utils.health import slurm_hook
    reason = node_health.one_line([node_health.finding("gpu", subject, "fail", cause)])
    reason.encode("utf-8")
    assert len(reason.splitlines()) == 1
    calls = []
    slurm_hook.drain(lambda argv: calls.append(argv) or (0, "", ""), {"scontrol": "/bin/scontrol"}.get,
                     {"SLURMD_NODENAME": "n1"}, "gpudirect: " + reason)
    drained = calls[0][-1]
    assert drained.startswith("reason=gpudirect: ") and len(drained.splitlines()) == 1 and len(drained) <= 207


@pytest.mark.parametrize("unit", ["a", "x-", "eyJ", "a.", "-"])
def test_masking_a_long_unbroken_token_is_linear(unit):
    """Tried at every character of a long token, a pattern that scans to the token's end costs the square of
    its length (minutes at this size); where a match may start is what keeps it linear."""
    import signal

    def too_slow(_signum, _frame):
        raise AssertionError("masking a 400000-character token took more than 20 s: quadratic again")
    old = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(20)
    try:
        token = unit * (400000 // len(unit))
        assert safe_text.mask_text(token) == token
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("text, masked", [
    ("0TOKEN=abc", "0TOKEN=********"), ("--api-key=abc", "--api-key=********"),
    ("x.y-secret=1 z=2", "x.y-secret=******** z=2"),
    ("/run/HF_TOKEN=abc", "/run/HF_TOKEN=********"), ("id_token=eyJabcdefgh.ijklmnopq.rstuvwxyz", "id_token=********"),
    ("jwt:eyJabcdefgh.ijklmnopq.rstuvwxyz", "jwt:********")])
def test_a_name_that_starts_a_word_is_still_found(text, masked):
    assert safe_text.mask_text(text) == masked
