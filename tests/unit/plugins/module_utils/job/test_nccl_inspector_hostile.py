# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL Inspector's directory as the job may leave it: special files, links out, files caught
mid-rewrite, and label text built to make a parser backtrack."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import socket
import threading

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_inspector as ni
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.job.test_nccl_inspector import inspector_file

BANDWIDTH = [{"job": "4242", "comm": "DP Group 0", "collective": "AllReduce", "message_size": "4-5GB", "gbs": 180.0}]
LABELS = ('slurm_job_id="4242",node="n1",gpu="GPU0",comm_name="%s",collective="AllReduce",'
          'message_size="4-5GB",algo_proto="RING_SIMPLE"')


def good(directory, name="nccl_inspector_metrics_GPU0.prom"):
    (directory / name).write_text(inspector_file("n1", gpus=1))


def read_within(directory, seconds=10, **kwargs):
    """read_dir in a thread: a reader that blocks (on a FIFO) fails the test instead of hanging it."""
    out = []
    thread = threading.Thread(target=lambda: out.append(ni.read_dir(str(directory), 120, **kwargs)), daemon=True)
    thread.start()
    thread.join(seconds)
    return out[0] if out else None


def test_a_fifo_is_skipped_not_opened_for_a_read_that_never_ends(tmp_path):
    good(tmp_path)
    fifo = tmp_path / "nccl_inspector_metrics_GPU1.prom"
    os.mkfifo(str(fifo))
    result = read_within(tmp_path)
    if result is None:  # release the blocked reader before failing
        os.close(os.open(str(fifo), os.O_WRONLY | os.O_NONBLOCK))
    assert result == {"files": 1, "stale_files": 0, "skipped_files": 1, "skipped_lines": 0, "skipped_series": 0, "bandwidth": BANDWIDTH,
                      "slow_gpus": []}


def test_a_socket_is_skipped(tmp_path):
    good(tmp_path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(tmp_path / "nccl_inspector_metrics_GPU1.prom"))
    try:
        assert read_within(tmp_path)["skipped_files"] == 1
    finally:
        listener.close()


def test_no_link_is_followed_out_of_the_directory_or_in_it(tmp_path):
    dump = tmp_path / "dump"
    dump.mkdir()
    good(dump)
    (tmp_path / "elsewhere.prom").write_text(inspector_file("n1", bandwidth=1.0, gpus=1))
    os.symlink(str(tmp_path / "elsewhere.prom"), str(dump / "nccl_inspector_metrics_GPU1.prom"))
    os.symlink("../elsewhere.prom", str(dump / "nccl_inspector_metrics_GPU2.prom"))
    os.symlink("/dev/zero", str(dump / "nccl_inspector_metrics_GPU3.prom"))
    os.symlink("nccl_inspector_metrics_GPU0.prom", str(dump / "nccl_inspector_metrics_GPU4.prom"))
    result = read_within(dump)
    assert result == {"files": 1, "stale_files": 0, "skipped_files": 4, "skipped_lines": 0, "skipped_series": 0, "bandwidth": BANDWIDTH,
                      "slow_gpus": []}


def test_a_directory_named_like_a_file_is_skipped(tmp_path):
    good(tmp_path)
    (tmp_path / "nccl_inspector_metrics_GPU1.prom").mkdir()
    assert read_within(tmp_path)["skipped_files"] == 1


def test_a_line_caught_mid_rewrite_is_skipped_not_read_as_a_smaller_number():
    # "...} 180.25\n" caught after "...} 18": never a bandwidth of 18
    whole = "nccl_bus_bandwidth_gbs{%s} 180.25\n" % (LABELS % "DP Group 0")
    samples, skipped = ni.parse(whole + whole[:-5])
    assert [s["value"] for s in samples] == [180.25] and skipped == 1


def test_a_file_read_to_its_size_bound_drops_the_line_the_bound_cuts(tmp_path):
    line = "nccl_bus_bandwidth_gbs{%s} 180.25\n" % (LABELS % "DP Group 0")
    (tmp_path / "nccl_inspector_metrics_GPU0.prom").write_text(line * 3)
    result = read_within(tmp_path, max_bytes=len(line) * 2 + len(line) - 4)
    assert result["skipped_lines"] == 1 and result["bandwidth"][0]["gbs"] == 180.25


def test_a_file_that_changes_while_read_is_left_for_the_next_read(tmp_path, monkeypatch):
    path = tmp_path / "nccl_inspector_metrics_GPU0.prom"
    path.write_text(inspector_file("n1", gpus=1))
    real_read, inode = os.read, os.stat(str(path)).st_ino

    def rewriting_read(fd, size):
        data = real_read(fd, size)
        if os.fstat(fd).st_ino == inode:  # the writer appends its next interval meanwhile
            with open(str(path), "a") as handle:
                handle.write(inspector_file("n1", bandwidth=2.0, gpus=1))
        return data
    monkeypatch.setattr(ni.os, "read", rewriting_read)
    result = ni.read_dir(str(tmp_path), 120)
    assert (result["files"], result["skipped_files"], result["bandwidth"]) == (0, 1, [])


def test_a_200_kb_label_built_to_backtrack_is_parsed_in_one_pass():
    # a value without its closing quote, then 200 KB of text that looks like label names
    hostile = 'nccl_bus_bandwidth_gbs{collective="AllReduce",comm_name="' + "a" * 200000 + "} 5\n"
    assert ni.parse(hostile) == ([], 1)
    fragments = ('x="' * 70000)[:200000]
    samples, skipped = ni.parse("nccl_bus_bandwidth_gbs{%s} 7.5\n" % (LABELS % fragments))
    assert skipped == 0 and samples[0]["labels"]["comm_name"] == fragments and samples[0]["value"] == 7.5
    commas = '",b' * 66000 + "c" * 2000
    samples, skipped = ni.parse("nccl_bus_bandwidth_gbs{%s} 7.5\n" % (LABELS % commas))
    assert skipped == 0 and samples[0]["labels"]["comm_name"] == commas
    braces = "nccl_bus_bandwidth_gbs{" + "} " * 100000 + "\n"
    assert ni.parse(braces) == ([], 1)


def test_labels_keep_inspector_s_unescaped_values():
    assert ni.labels('a="x",b="y"') == {"a": "x", "b": "y"}
    assert ni.labels('comm_name="odd "name", with comma",collective="AllReduce"') == {
        "comm_name": 'odd "name", with comma', "collective": "AllReduce"}
    assert ni.labels('a="",b=""') == {"a": "", "b": ""}
    assert ni.labels("") == {}
    assert ni.labels('a="x') is None and ni.labels('="x"') is None and ni.labels('a=x') is None
    assert ni.labels('a="x"junk') is None


def test_the_job_naming_a_flood_of_communicators_publishes_a_bounded_set_of_series(tmp_path):
    """The job names its communicators: a node publishes at most max_series, and counts the rest."""
    text = "".join(inspector_file("n1", gpus=1, comm="comm %05d" % n) for n in range(300))
    (tmp_path / "nccl_inspector_metrics_GPU0.prom").write_text(text)
    result = ni.read_dir(str(tmp_path), 120, max_series=100)
    assert len(result["bandwidth"]) == 100 and result["skipped_series"] == 200
    assert ni.read_dir(str(tmp_path), 120)["skipped_series"] == 0


def test_a_long_communicator_name_reaches_a_metric_label_cut_to_its_bound():
    from ansible_collections.gpudirect.gcp.plugins.module_utils.common import prom_text
    text = prom_text.render([("m", "gauge", "h")], {"m": [([("comm", "c" * 200000)], 1)]})
    label = text.splitlines()[-1].split('"')[1]
    assert len(label) == prom_text.MAX_LABEL_CHARS and label.endswith("...")
