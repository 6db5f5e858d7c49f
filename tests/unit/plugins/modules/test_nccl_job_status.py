# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl_job_status as a module, asking the RAS stand-in over a real socket."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import time

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_ras
from ansible_collections.gpudirect.gcp.plugins.modules import nccl_job_status
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.job.test_nccl_inspector import inspector_file
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.job.test_nccl_ras_hostile import (  # noqa: F401 pylint: disable=unused-import
    hostile, once, status_doc, trickle)
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run
from ansible_collections.gpudirect.gcp.tests.unit.standins.ras_standin import (  # noqa: F401 pylint: disable=unused-import
    ras)


def test_no_ras_service_is_no_job_not_a_fault(capsys):
    result = run(nccl_job_status, {"port": 1, "timeout_s": 2}, capsys)
    assert result["state"] == "none" and not result.get("failed") and result["findings"] == []
    assert result["msg"].startswith("none: no NCCL RAS service at 127.0.0.1:1 ")


def test_a_healthy_job_read_once_is_ok_and_summarised(ras, capsys):
    result = run(nccl_job_status, {"port": ras()}, capsys, check_mode=True)
    assert result["state"] == "ok" and result["reads"] == 1 and not result["changed"]
    assert result["communicators"][0]["size"] == 32 and result["communicators"][0]["missing"] == 0
    assert "STAND-IN" in result["nccl_version"]


def test_a_watched_hang_names_the_odd_rank_and_its_node(ras, capsys):
    port = ras(hang_at=0.0, odd_rank=21)
    result = run(nccl_job_status, {"port": port, "watch_s": 3, "interval_s": 0.2, "hang_threshold_s": 0.5,
                                   "names": {"10.0.0.4": "a3m-node-2"}}, capsys)
    assert result["state"] == "hang"
    assert [(v["kind"], v["ranks"], v["hosts"]) for v in result["verdicts"]] == [("hang", [21], ["10.0.0.4"])]
    assert result["findings"][0]["subject"] == "a3m-node-2 (10.0.0.4)"
    assert result["reads"] < 10  # it stops at the hang, not at watch_s
    assert "rank 21 on a3m-node-2 (10.0.0.4)" in result["msg"]


def test_a_dead_rank_makes_the_job_faulty(ras, capsys):
    result = run(nccl_job_status, {"port": ras(dead_at=0.0, dead_rank=3)}, capsys)
    assert result["state"] == "faulty"
    assert [(v["kind"], v["ranks"]) for v in result["verdicts"]] == [("dead_rank", [3])]


@pytest.mark.parametrize("args,message", [
    ({"interval_s": 0}, "interval_s must be above 0, not 0.0"),
    ({"watch_s": -1}, "watch_s must be 0 or more, not -1.0"),
])
def test_bad_options_are_one_line(args, message, capsys):
    result = run(nccl_job_status, args, capsys)
    assert result["failed"] and result["msg"] == "nccl_job_status: " + message


def test_a_status_that_is_not_ras_json_is_unknown_naming_the_field():
    result = nccl_job_status.watch(
        {"host": "h", "port": 1, "timeout_s": 1, "ras_wait_s": None, "watch_s": 0, "interval_s": 1,
         "hang_threshold_s": 1, "names": {}},
        ask=lambda **kw: {"communicators": [{"hash": 7}]})
    assert result["state"] == "unknown" and "communicators[0] has no hash" in result["reason"]


def test_the_nodes_inspector_files_give_its_bandwidth_and_stale_or_cut_files_are_counted(tmp_path, capsys):
    for gpu, bandwidth in enumerate([170.0, 180.0, 190.0]):
        text = inspector_file("n1", bandwidth=bandwidth, gpus=1)
        (tmp_path / ("nccl_inspector_metrics_%d.prom" % gpu)).write_text(text)
    (tmp_path / "nccl_inspector_metrics_cut.prom").write_text('nccl_bus_bandwidth_gbs{node="n1",gpu="GP')
    old = tmp_path / "nccl_inspector_metrics_old.prom"
    old.write_text(inspector_file("n1", bandwidth=1.0, gpus=1))
    os.utime(str(old), (time.time() - 600, time.time() - 600))
    (tmp_path / "other.prom").write_text(inspector_file("n1", bandwidth=1.0, gpus=1))
    result = run(nccl_job_status, {"port": 1, "timeout_s": 2, "inspector_dir": str(tmp_path)}, capsys)
    assert result["inspector"] == {"files": 4, "stale_files": 1, "skipped_files": 0, "skipped_lines": 1, "skipped_series": 0, "bandwidth": [
        {"job": "4242", "comm": "DP Group 0", "collective": "AllReduce", "message_size": "4-5GB", "gbs": 180.0}],
        "slow_gpus": []}
    missing = run(nccl_job_status, {"port": 1, "timeout_s": 2, "inspector_dir": str(tmp_path / "nope")}, capsys)
    assert missing["failed"] and missing["msg"].endswith("nope is not a directory")


PARAMS = {"host": "127.0.0.1", "port": 1, "timeout_s": 2, "ras_wait_s": None, "watch_s": 0, "interval_s": 1,
          "hang_threshold_s": 1, "names": {}}


def test_a_deep_status_from_the_job_is_could_not_check_in_one_line(hostile, capsys):
    server = hostile(status=once(b'{"communicators": ' + b"[" * 100000))
    result = run(nccl_job_status, {"port": server.port, "timeout_s": 5}, capsys)
    assert result["state"] == "unknown" and not result.get("failed") and result["findings"] == []
    assert result["msg"].startswith("unknown: could not check the job: NCCL RAS at 127.0.0.1:%d sent a status that "
                                    "is not JSON as RAS writes it (it is nested deeper than 32)" % server.port)
    assert "\n" not in result["msg"]


def test_a_trickled_status_is_could_not_check_at_timeout_s(hostile, capsys):
    server = hostile(status=trickle(b"{" + b" " * 100 + b"}", 0.1))
    result = run(nccl_job_status, {"port": server.port, "timeout_s": 1}, capsys)
    assert result["state"] == "unknown" and not result.get("failed")
    assert result["reason"] == "could not check the job: NCCL RAS at 127.0.0.1:%d did not answer 'STATUS' within 1 s" \
        % server.port


@pytest.mark.parametrize("count", ["NaN", "1e400", "-1"])
def test_a_count_that_is_no_count_is_could_not_check_naming_the_field(hostile, count, capsys):
    text = json.dumps(status_doc([0, 1])).replace('"AllReduce": 1001', '"AllReduce": %s' % count)
    server = hostile(status=once(text.encode()))
    result = run(nccl_job_status, {"port": server.port, "timeout_s": 5}, capsys)
    assert result["state"] == "unknown" and not result.get("failed")
    assert result["reason"].startswith("could not check the job: NCCL RAS's status: "
                                       "communicators[0].ranks[1].collective_counts.AllReduce is ")


def test_an_answer_the_reader_did_not_foresee_is_could_not_check_not_a_traceback():
    def broken(**_kw):
        raise OverflowError("cannot convert float infinity to integer")
    result = nccl_job_status.watch(dict(PARAMS), ask=broken)
    assert result["state"] == "unknown"
    assert result["reason"] == "could not check the job: OverflowError: cannot convert float infinity to integer"


def test_a_job_that_stops_answering_mid_watch_keeps_what_was_judged(hostile):
    answers = [status_doc([0, 1])]

    def ask(**_kw):
        if answers:
            return answers.pop()
        raise nccl_ras.RasError("NCCL RAS at h:1 did not answer 'STATUS' within 2 s")
    result = nccl_job_status.watch(dict(PARAMS, watch_s=5, interval_s=0.01), ask=ask, sleep=lambda s: None)
    assert result["state"] == "ok" and result["reads"] == 1
