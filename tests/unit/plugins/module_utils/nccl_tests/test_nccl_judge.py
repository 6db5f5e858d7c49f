# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_judge, nccl_parse

FIX = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "fixtures", "nccl")
INFO = "host:1:1 [0] NCCL INFO Using network %s\n"


def load(name, net=None):
    with open(os.path.join(FIX, name)) as f:
        text = f.read()
    if net:
        text = INFO % net + text
    return nccl_parse.parse(text, collective="all_gather")


def test_real_a3_mega_passes_against_its_baseline():
    v = nccl_judge.judge_collective(load("a3-mega_all_gather_2node_dstack.txt", "FasTrak"), "a3-mega")
    base = families.baseline("a3-mega", "all_gather")
    assert v["status"] == "pass" and v["plugin_ok"] is True
    assert v["baseline_gbps"] == base["busbw_gbps"] and v["measured_busbw_gbps"] == 188.37
    assert v["measured_at_bytes"] == base["bytes"]
    assert v["required_gbps"] == round(0.9 * base["busbw_gbps"], 3)


def test_same_run_fails_a_stricter_threshold_and_a_bigger_family():
    parsed = load("a3-mega_all_gather_2node_dstack.txt", "FasTrak")
    v = nccl_judge.judge_collective(parsed, "a3-mega", threshold=1.01)
    assert v["status"] == "fail" and "below 101%" in v["reasons"][0]
    v = nccl_judge.judge_collective(load("a3-mega_all_gather_2node_dstack.txt", "gIB"), "a3-ultra")
    assert v["status"] == "fail" and v["ratio"] < 0.9


def test_judged_on_large_messages_not_on_the_average():
    parsed = load("a3-mega_all_gather_2node_dstack.txt", "FasTrak")
    # the average (125 GB/s) is far below the baseline, the large messages are not
    assert parsed["avg_busbw_gbps"] < 0.9 * families.baseline("a3-mega", "all_gather")["busbw_gbps"]
    assert nccl_judge.judge_collective(parsed, "a3-mega")["status"] == "pass"


def test_socket_fallback_fails_even_with_good_numbers():
    v = nccl_judge.judge_collective(load("a3-mega_all_gather_2node_dstack.txt", "Socket"), "a3-mega")
    assert v["status"] == "fail" and v["plugin_ok"] is False
    assert "Using network Socket" in v["reasons"][0]


def test_missing_info_lines_fail_the_plugin_check():
    v = nccl_judge.judge_collective(load("a3-mega_all_gather_2node_dstack.txt"), "a3-mega")
    assert v["status"] == "fail" and "NCCL_DEBUG=INFO" in v["plugin_message"]
    v = nccl_judge.judge_collective(load("a3-mega_all_gather_2node_dstack.txt"), "a3-mega", check_net=False)
    assert v["status"] == "pass"


def test_wrong_network_name():
    v = nccl_judge.judge_collective(load("a3-mega_all_gather_2node_dstack.txt", "GPUDirectTCPX"), "a3-mega")
    assert v["status"] == "fail" and "expected FasTrak" in v["plugin_message"]
    ok, _msg = nccl_judge.check_plugin({"net_names": ["GPUDirectTCPX_v7"]}, "a3-high")
    assert ok


def test_floor_is_judged_over_its_own_window_only():
    parsed = load("a3-mega_all_gather_2node_dstack.txt", "FasTrak")
    floor = families.FAMILIES["a3-mega"]["avg_busbw_floor"]
    # the run's own average (8M-8G, about 125 GB/s) is below the 2G-8G floor; its 2G-8G window is not
    assert parsed["avg_busbw_gbps"] < floor["gbps"]
    window = nccl_judge.window_avg_busbw(parsed, floor["minbytes"], floor["maxbytes"])
    assert window > floor["gbps"]
    v = nccl_judge.judge_collective(parsed, "a3-mega", baseline_gbps=None, multi_node=True,
                                    scope="nvlink_domain")  # a3-mega has no NVLink-domain baseline
    assert v["status"] == "pass" and v["window_avg_busbw_gbps"] == round(window, 3)
    assert "over 2147483648-8589934592 B meets the family floor 150.0 GB/s" in " ".join(v["reasons"])


def test_floor_holds_for_its_collective_only():
    parsed = load("a3-mega_all_gather_2node_dstack.txt", "FasTrak")
    # CHS's floor is an all_gather figure: an all_reduce without baseline is not judged by it
    v = nccl_judge.judge_collective(parsed, "a3-mega", collective="all_reduce")
    assert families.baseline("a3-mega", "all_reduce") is None
    assert v["status"] == "not_judged" and "no family floor for it" in v["reasons"][0]


def test_floor_window_not_covered_is_said():
    text = "\n".join(line for line in open(os.path.join(FIX, "a3-mega_all_gather_2node_dstack.txt"))
                     .read().splitlines() if not line.strip()[:1].isdigit() or int(line.split()[0]) < 2 ** 31)
    v = nccl_judge.judge_collective(nccl_parse.parse(INFO % "FasTrak" + text), "a3-mega",
                                    collective="all_gather", scope="nvlink_domain")
    assert v["status"] == "not_judged" and "which this run does not cover" in v["reasons"][0]


def test_a4x_pairs_are_judged_against_their_own_scope():
    parsed = load("a3-mega_all_gather_2node_dstack.txt", "gIB")  # about 188 GB/s at 8 GiB
    inside = nccl_judge.judge_collective(parsed, "a4x", scope="nvlink_domain")
    assert inside["status"] == "fail" and inside["baseline_gbps"] == 454.0
    across = nccl_judge.judge_collective(parsed, "a4x", scope="network")
    assert across["status"] == "pass" and across["required_gbps"] == 160.0
    assert "no network baseline for all_gather on a4x" in across["reasons"][0]


def test_no_baseline_and_no_floor_is_not_judged():
    parsed = load("a3-mega_all_gather_2node_dstack.txt", "GPUDirectTCPX")
    assert families.FAMILIES["a3-edge"]["avg_busbw_floor"] is None
    v = nccl_judge.judge_collective(parsed, "a3-edge")
    assert v["status"] == "not_judged" and "not judged" in v["reasons"][0]
    assert nccl_judge.overall([v]) == "not_judged"


def test_user_baseline_overrides_the_table():
    parsed = load("a3-mega_all_gather_2node_dstack.txt", "FasTrak")
    v = nccl_judge.judge_collective(parsed, "a3-mega", baseline_gbps=100, baseline_bytes=2 ** 20)
    assert v["status"] == "pass" and v["baseline_source"] == "user" and v["baseline_gbps"] == 100.0


def test_run_below_baseline_size_is_said():
    text = "\n".join(line for line in open(os.path.join(FIX, "a3-mega_all_gather_2node_dstack.txt"))
                     .read().splitlines() if not line.strip().startswith(("4294967296", "8589934592")))
    v = nccl_judge.judge_collective(nccl_parse.parse(INFO % "FasTrak" + text), "a3-mega", collective="all_gather")
    assert v["measured_at_bytes"] == 2 ** 31 and "below the baseline's size" in " ".join(v["reasons"])


def test_failed_run_fails():
    parsed = nccl_parse.parse(open(os.path.join(FIX, "synthetic_failure_nccl_exit3.txt")).read())
    v = nccl_judge.judge_collective(parsed, "a3-mega")
    assert v["status"] == "fail" and "Test NCCL failure" in v["reasons"][0]


def test_above_ceiling_is_flagged():
    parsed = load("a3-mega_all_gather_2node_dstack.txt", "FasTrak")
    for row in parsed["rows"]:
        row["in_place"]["busbw_gbps"] *= 3
    v = nccl_judge.judge_collective(parsed, "a3-mega")
    assert any("ceiling" in r for r in v["reasons"])


@pytest.mark.parametrize("rc,word", [(0, "success"), (3, "NCCL error"), (4, "timeout"), (7, "wrong data"),
                                     (255, "bad sizes"), (137, "SIGKILL"), (None, "did not run"), (42, "unknown")])
def test_exit_causes(rc, word):
    assert word in nccl_judge.exit_cause(rc)


def test_overall():
    assert nccl_judge.overall([{"status": "pass"}, {"status": "fail"}]) == "fail"
    assert nccl_judge.overall([{"status": "pass"}]) == "pass"
    assert nccl_judge.overall([]) == "not_judged"


# --- the small-size stage: correctness, not bandwidth -----------------------------------------

def small_output(collective="all_reduce", wrong=None, warn=None, sizes=(8, 16, 32, 64, 128, 65536)):
    """nccl-tests 2.19 text of a -b 8 -e 64K run; wrong: {size: #wrong of both halves} (default 0)."""
    wrong = wrong or {}
    redop = "sum" if collective in ("all_reduce", "reduce_scatter") else "none"
    lines = ["# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807",
             "# Collective test starting: %s_perf" % collective,
             "# nThread 1 nGpus 1 minBytes 8 maxBytes 65536 step: 2(factor) warmup iters: 5 iters: 20 "
             "agg iters: 1 validation: 1 graph: 0 unalign: 0",
             "h0:1:1 [0] NCCL INFO Using network gIB"]
    if warn:
        lines.append("h0:1:1 [0] NCCL WARN %s" % warn)
    lines += ["#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw"
              "   busbw  #wrong",
              "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)"
              "  (GB/s)"]
    for size in sizes:
        w = wrong.get(size, 0)
        lines.append("%12d  %12d     float  %6s      -1     30.1    0.00    0.00  %6d     29.8    0.00    0.00  %6d"
                     % (size, size // 4, redop, w, w))
    lines += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 0.001", "#",
              "# Collective test concluded: %s_perf" % collective, ""]
    return "\n".join(lines)


def test_small_sizes_are_required_from_four_nodes():
    assert [nccl_judge.small_sizes_required(n) for n in (1, 2, 3, 4, 16)] == [False, False, False, True, True]
    # 0 turns the stage off; a lower bar asks for it on smaller runs
    assert nccl_judge.small_sizes_required(64, min_nodes=0) is False
    assert nccl_judge.small_sizes_required(2, min_nodes=2) is True


def test_a_clean_small_size_run_passes_on_correctness_alone():
    parsed = nccl_parse.parse(small_output(), collective="all_reduce")
    v = nccl_judge.judge_small_sizes(parsed, "all_reduce", rc=0)
    assert v["status"] == "pass" and v["stage"] == "small_sizes" and v["sizes"] == [8, 16, 32, 64, 128, 65536]
    # busbw of a few bytes is near zero by nature: never held against the run
    assert v["measured_busbw_gbps"] is None


def test_an_8_byte_row_with_wrong_data_fails_naming_the_size_and_the_collective():
    parsed = nccl_parse.parse(small_output(wrong={8: 3}), collective="all_reduce")
    v = nccl_judge.judge_small_sizes(parsed, "all_reduce", rc=0)
    assert v["status"] == "fail"
    assert "all_reduce at 8 B: 6 wrong elements (out of place 3, in place 3)" in v["reasons"][0]
    assert v["failed_sizes"] == [8]


def test_a_small_size_run_that_failed_fails_naming_the_collective_and_the_exit():
    text = "h0: Test NCCL failure common.cu:1000 'unhandled system error / ibv_reg_mr failed'\n"
    v = nccl_judge.judge_small_sizes(nccl_parse.parse(text, collective="all_gather"), "all_gather", rc=3)
    assert v["status"] == "fail"
    assert v["reasons"][0].startswith("all_gather at small sizes: exit code 3: NCCL error")


def test_a_registration_warning_fails_the_small_sizes_though_the_data_is_right():
    warn = "NET/gIB : ibv_reg_mr failed for buffer registration: Cannot allocate memory"
    parsed = nccl_parse.parse(small_output(warn=warn), collective="all_reduce")
    v = nccl_judge.judge_small_sizes(parsed, "all_reduce", rc=0)
    assert v["status"] == "fail" and "registration" in v["reasons"][0] and "all_reduce" in v["reasons"][0]
    # a warning about something else is no registration failure
    other = nccl_parse.parse(small_output(warn="NET/gIB : slow link detected"), collective="all_reduce")
    assert nccl_judge.judge_small_sizes(other, "all_reduce", rc=0)["status"] == "pass"


def test_a_small_size_run_that_checked_no_data_is_not_judged():
    text = small_output().replace("       0     29.8", "     N/A     29.8").replace("0.00       0", "0.00     N/A")
    v = nccl_judge.judge_small_sizes(nccl_parse.parse(text, collective="all_reduce"), "all_reduce", rc=0)
    assert v["status"] == "not_judged" and "checked no data" in v["reasons"][0]
