# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_parse

FIX = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "fixtures", "nccl")


def load(name):
    with open(os.path.join(FIX, name)) as f:
        return f.read()


def test_real_dstack_output_without_hash():
    res = nccl_parse.parse(load("a3-mega_all_gather_2node_dstack.txt"), collective="all_gather")
    assert res["ok"] is True
    assert res["collective"] == "all_gather"
    assert len(res["rows"]) == 11
    assert res["header"]["minbytes"] == 8388608 and res["header"]["iters"] == 200
    assert res["header"]["warmup_iters"] == 5 and res["header"]["agg_iters"] == 1
    assert res["header"]["step"] == 2 and res["header"]["step_kind"] == "factor"
    first = res["rows"][0]
    assert first["size"] == 8388608 and first["count"] == 131072 and first["type"] == "float"
    assert first["redop"] == "none" and first["root"] == -1
    assert first["out_of_place"] == {"time_us": 394.2, "algbw_gbps": 21.28, "busbw_gbps": 19.95, "wrong": None}
    assert first["in_place"]["busbw_gbps"] == 20.03
    assert res["peak_busbw_gbps"] == 188.37
    assert res["largest_size"] == 8 * 2 ** 30 and res["largest_busbw_gbps"] == 188.37
    assert res["avg_busbw_reported_gbps"] == 125.436
    # the mean of both halves of every row is what nccl-tests prints
    assert abs(res["avg_busbw_gbps"] - 125.436) < 0.01
    assert res["out_of_bounds"] == 0


def test_new_layout_with_info_lines():
    res = nccl_parse.parse(load("synthetic_v2.19_all_reduce_2node_info.txt"))
    assert res["ok"] and res["collective"] == "all_reduce"
    assert res["nccl_tests_version"] == "2.19.6" and res["header"]["nccl_headers"] == 22807
    assert res["nccl_version"] == "2.21.5+cuda12.4"
    assert res["ranks"] == 16 and res["hosts"] == ["a3m-node0", "a3m-node1"]
    assert res["devices"][10] == {"rank": 10, "group": 0, "pid": 4010, "host": "a3m-node1", "device": 2,
                                  "bus_id": "0000:91:00", "name": "NVIDIA H100 80GB HBM3"}
    assert res["net_names"] == ["FasTrak"]
    assert any("Loaded net plugin FasTrak" in line for line in res["plugin_lines"])
    assert len(res["rows"]) == 6 and res["rows"][0]["redop"] == "sum"
    assert res["rows"][0]["out_of_place"]["wrong"] == 0
    assert res["header"]["unalign"] == 0 and res["header"]["graph"] == 0


@pytest.mark.parametrize("name", ["synthetic_prefixes_skypilot_ompi_stacked.txt", "synthetic_prefix_srun_l.txt"])
def test_launcher_prefixes(name):
    res = nccl_parse.parse(load(name))
    assert res["ok"] and res["collective"] == "all_gather"
    assert len(res["rows"]) == 6 and res["ranks"] == 16
    assert res["net_names"] == ["gIB"]
    assert res["rows"][-1]["size"] == 2 ** 33 and res["rows"][-1]["redop"] == "none"


def test_strip_prefixes_stacked():
    line = "(worker1, rank=1, pid=3901, ip=10.0.0.3) [1,0]<stdout>:  0: # Avg bus bandwidth : 1.5"
    assert nccl_parse.strip_prefixes(line) == "# Avg bus bandwidth : 1.5"
    row = "     8388608        131072     float"
    assert nccl_parse.strip_prefixes(row) == row


def test_old_layout_root_and_error_column():
    res = nccl_parse.parse(load("synthetic_v2.11_broadcast_old_layout.txt"), collective="broadcast")
    assert res["ok"] and res["ranks"] == 8
    assert res["devices"][0]["group"] is None and res["devices"][0]["bus_id"] == "0x1b"
    last = res["rows"][-1]
    assert last["root"] == 0 and last["redop"] is None
    assert last["out_of_place"]["max_error"] == 2e-07 and last["out_of_place"]["wrong"] is None
    assert last["out_of_place"]["busbw_gbps"] == 84.6
    assert "agg_iters" not in res["header"] and res["header"]["step"] == 4


def test_old_layout_no_redop_no_root():
    res = nccl_parse.parse(load("synthetic_v2.11_all_gather_old_layout.txt"))
    row = res["rows"][1]
    assert row["redop"] is None and row["root"] is None and row["type"] == "float"
    assert row["in_place"]["busbw_gbps"] == 59.7 and row["in_place"]["max_error"] == 0.0


def test_per_iteration_columns():
    res = nccl_parse.parse(load("synthetic_v2.19_all_gather_I_columns.txt"))
    row = res["rows"][1]
    assert row["out_of_place"]["busbw_gbps"] == 185.5 and row["in_place"]["busbw_gbps"] == 185.2
    assert set(row["in_place"]["extra"]) == {"i_min", "i_max", "i_p99", "i_cv%"}
    assert row["in_place"]["extra"]["i_cv%"] == 1.31


def test_timestamp_column():
    res = nccl_parse.parse(load("synthetic_v2.17_all_gather_S_column.txt"))
    assert res["rows"][0]["extra"] == "2026-03-01T10:00:01"
    assert res["rows"][1]["in_place"]["busbw_gbps"] == 185.5 and res["rows"][1]["in_place"]["wrong"] == 0


def test_layout_inferred_without_column_line():
    text = ("     8388608        131072     float     sum      -1    394.2   21.28   19.95      0    392.7   21.36   20.03      0\n"
            "# Out of bounds values : 0 OK\n")
    res = nccl_parse.parse(text)
    assert res["ok"] and res["rows"][0]["redop"] == "sum" and res["rows"][0]["root"] == -1
    assert res["rows"][0]["in_place"]["busbw_gbps"] == 20.03
    assert any("inferred" in n for n in res["notes"])


@pytest.mark.parametrize("name,spelled", [("synthetic_json_v1_bandwidith_spelling.json", "unchecked"),
                                          ("synthetic_json_v3_bandwidth_spelling.json", "OK")])
def test_json_both_spellings(name, spelled):
    text = load(name)
    for data in (text, json.loads(text)):
        res = nccl_parse.parse(data)
        assert res["source_format"] == "json" and res["ok"]
        assert res["avg_busbw_reported_gbps"] == 184.5
        assert res["rows"][0]["root"] == -1 and res["rows"][0]["redop"] in ("none", "sum")
        assert res["largest_busbw_gbps"] == 187.4 and res["ranks"] == 16
        assert res["avg_busbw_check"] == (None if spelled == "unchecked" else "OK")


def test_json_collective_from_args():
    assert nccl_parse.parse(load("synthetic_json_v3_bandwidth_spelling.json"))["collective"] == "all_reduce"
    assert nccl_parse.parse(load("synthetic_json_v1_bandwidith_spelling.json"))["collective"] == "all_gather"


def test_failure_lines_and_exit_code():
    res = nccl_parse.parse(load("synthetic_failure_nccl_exit3.txt"))
    assert res["ok"] is False
    assert res["exit_code_reported"] == 3
    assert res["net_names"] == ["Socket"]
    assert any("Test NCCL failure" in e for e in res["errors"])
    assert "no result rows found" in res["errors"]


def test_reducing_maxbytes_wrong_data_and_oob():
    res = nccl_parse.parse(load("synthetic_reducing_maxbytes_wrong_data.txt"))
    assert res["ok"] is False
    assert res["header"]["maxbytes_reduced_to"] == 22906492245
    assert res["wrong_total"] == 24 and res["out_of_bounds"] == 12
    assert any("lowered maxBytes" in e for e in res["errors"])


def test_reducing_maxbytes_alone_is_a_note_not_a_failure():
    text = load("a3-mega_all_gather_2node_dstack.txt").replace(
        "Out of bounds", "# Reducing maxBytes to 4294967296 due to memory limitation\nOut of bounds")
    res = nccl_parse.parse(text)
    assert res["ok"] is True and any("lowered maxBytes" in e for e in res["errors"])


def test_min_bw_failed_footer():
    text = load("a3-mega_all_gather_2node_dstack.txt").replace("125.436 ", "125.436 FAILED")
    res = nccl_parse.parse(text)
    assert res["ok"] is False and res["avg_busbw_check"] == "FAILED"


def test_elided_and_garbage_lines_are_ignored():
    text = load("a3-mega_all_gather_2node_dstack.txt").replace(
        "Out of bounds", "...\n[output elided]\n\x1b[0m\nOut of bounds")
    assert nccl_parse.parse(text)["ok"] is True


@pytest.mark.parametrize("data", [None, 42, "", "garbage", b"\xff\xfe\x00", "{not json", "[1, 2", {"results": "x"},
                                  {"results": [{"size": "big"}]}, ["a", "b"], "1 2 x 3"])
def test_never_raises(data):
    res = nccl_parse.parse(data)
    assert res["ok"] is False and res["errors"]


def test_bytes_input():
    res = nccl_parse.parse(load("a3-mega_all_gather_2node_dstack.txt").encode())
    assert res["ok"] and len(res["rows"]) == 11


def test_real_one_gpu_run_with_nccl_info_lines():
    res = nccl_parse.parse(load("h100x1_all_reduce_2.19.0_nccl-2.28.3.txt"))
    assert res["ok"], res["errors"]
    assert res["collective"] == "all_reduce" and res["nccl_tests_version"] == "2.19.0"
    assert res["nccl_version"] == "2.28.3+cuda13.0" and res["devices"][0]["bus_id"] == "0000:00:06"
    assert len(res["rows"]) == 14 and res["rows"][-1]["size"] == 536870912
    # no GPUDirect plugin on that machine: NCCL said so, and fell back to sockets
    assert res["net_names"] == ["Socket"] and "NET/Plugin: Could not find: libnccl-net.so" in res["plugin_lines"]
    # one rank: the bus bandwidth is 0 by definition, the algorithm bandwidth is what the GPU did
    assert res["largest_busbw_gbps"] == 0.0


def _cut(text, marker):
    """The output as a launcher that died mid-line leaves it: everything up to just after marker."""
    return text[:text.index(marker) + len(marker)]


def test_output_cut_mid_row_is_not_ok():
    text = load("a3-mega_all_gather_2node_dstack.txt")
    row = [line for line in text.splitlines() if line.strip().startswith("8589934592")][0]
    cut = text.replace(row, row[:len(row) // 2])
    res = nccl_parse.parse(cut, collective="all_gather")
    assert res["ok"] is False
    assert any(e.startswith("unreadable or cut data row: ") for e in res["errors"])


@pytest.mark.parametrize("bad", ["inf", "1e999", "nan"])
def test_a_row_with_a_value_that_is_not_finite_is_an_error_never_inf(bad):
    text = load("a3-mega_all_gather_2node_dstack.txt")
    row = [line for line in text.splitlines() if line.strip().startswith("8589934592")][0]
    tokens = row.split()
    tokens[-2] = bad
    res = nccl_parse.parse(text.replace(row, "  ".join(tokens)), collective="all_gather")
    assert res["ok"] is False and any("not a finite number" in e for e in res["errors"])
    json.dumps(res, allow_nan=False)


def test_a_long_run_of_digits_is_read_in_linear_time():
    """A regex that backtracks on a run of digits takes hours here; the fixed one milliseconds. The alarm
    turns a regression into a failure instead of a hang."""
    import signal

    def too_slow(_signum, _frame):
        raise AssertionError("parsing a 200000-digit token took more than 20 s: quadratic again")
    old = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(20)
    try:
        # where a row's reduction operator would stand, so the number pattern is tried on it
        res = nccl_parse.parse("8 2 float " + "9" * 200000 + "x -1 1 1 1 0 1 1 1 0\n", collective="all_gather")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert res["collective"] == "all_gather" and res["rows"][0]["redop"] == "9" * 200000 + "x"


def test_output_cut_inside_the_last_row_is_not_judged():
    """The cut falls inside the last column ("N/A" -> "N/"): every token is there, so only the missing end
    of the line tells that the row is incomplete."""
    text = load("a3-mega_all_gather_2node_dstack.txt")
    last = [line for line in text.splitlines() if line.strip().startswith("8589934592")][0]
    cut = text[:text.index(last) + len(last) - 1]
    res = nccl_parse.parse(cut, collective="all_gather")
    assert res["ok"] is False
    assert any(e.startswith("the output ends inside a data row (cut short): 8589934592") for e in res["errors"])
    assert res["largest_size"] == 4294967296


def test_a_complete_last_row_without_a_final_newline_is_still_read():
    """Ansible's command module strips the final newline: a whole row is no cut."""
    text = load("a3-mega_all_gather_2node_dstack.txt")
    last = [line for line in text.splitlines() if line.strip().startswith("8589934592")][0]
    res = nccl_parse.parse(text[:text.index(last) + len(last)] + "\n", collective="all_gather")
    assert res["largest_size"] == 8589934592
    assert not any("cut short" in e for e in res["errors"])


def test_an_average_of_huge_bandwidths_stays_finite_json():
    row = "  8388608  2097152  float  sum  -1  100.0  83.89  1.7e308  0  99.0  84.7  1.7e308  0\n"
    res = nccl_parse.parse(HEADER + row * 2, collective="all_reduce")
    assert res["avg_busbw_gbps"] == 1.7e308
    json.dumps(res, allow_nan=False)


@pytest.mark.parametrize("field", ["size", "count"])
def test_a_negative_size_in_the_json_form_is_an_error(field):
    half = {"time": 1.0, "alg_bw": 1.0, "bus_bw": 1.0, "nwrong": 0}
    item = {"size": 8, "count": 2, "type": "float", "redop": "sum", "root": -1,
            "out_of_place": half, "in_place": half}
    item[field] = -8
    res = nccl_parse.parse(json.dumps({"results": [item, dict(item, size=16, count=4)]}), collective="all_reduce")
    assert res["ok"] is False
    assert any(e.startswith("JSON result entry with a negative %s: -8" % field) for e in res["errors"])
    assert [r["size"] for r in res["rows"]] == [16]


HEADER = ("#       size         count      type   redop    root     time   algbw   busbw #wrong"
          "     time   algbw   busbw #wrong\n")


def test_an_error_line_quoting_a_credential_is_masked_before_it_is_cut():
    from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_parse as parser
    pad = "x" * 260  # the cut at 300 falls just after the password, before its "@"
    text = ("Error: cannot reach %s https://svc:hunter2hunter2@store.example/x\n"
            "Error: token=opaque-secret\n"
            "Test failure common.cu:1 Authorization: Bearer opaque2\n") % pad
    res = parser.parse(text, collective="all_gather")
    flat = " ".join(res["errors"])
    assert "hunter2" not in flat and "opaque" not in flat
    assert "Error: token=********" in res["errors"]
