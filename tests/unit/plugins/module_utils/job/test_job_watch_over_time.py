# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The job watch's judgments over time: a bad poll does not restart a hang's clock, and the hang where
every rank waits in one collective is named from the GPUs' activity and published."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.job import job_watch
from ansible_collections.gpudirect.gcp.plugins.module_utils.job import nccl_ras
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.job.test_job_watch import (
    Clock, no_monitor, scripted)
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.job.test_nccl_ras_hostile import status_doc

SPIN = {"state": "spin", "gpus": [0, 1], "detail": "GPUs 0, 1 at 100% utilization and at most 19% of the power limit"}


def test_a_failed_or_timed_out_poll_does_not_restart_the_hang_clock():
    behind = status_doc([0, 1, 2], count=lambda n: 7 if n else 6)
    answers = [behind, nccl_ras.RasError("NCCL RAS at 127.0.0.1:28028 did not answer 'STATUS' within 10 s"),
               ValueError("communicators[0].size is nan"), behind]
    clock = Clock()
    watch = job_watch.JobWatch(status=scripted(answers), monitor=no_monitor, clock=clock, hang_after_s=600)
    for now in (0, 300, 450, 610):
        clock.now = now
        watch.poll()
    assert [(v["kind"], v["ranks"]) for v in watch.verdicts] == [("hang", [0])]
    assert "for 610 s" in watch.verdicts[0]["finding"]["cause"]


def test_a_failed_poll_holds_no_verdict_of_its_own():
    behind = status_doc([0, 1, 2], count=lambda n: 7 if n else 6)
    clock = Clock()
    watch = job_watch.JobWatch(status=scripted([behind, behind, nccl_ras.RasError("slow")]), monitor=no_monitor,
                               clock=clock, hang_after_s=10)
    watch.poll()
    clock.now = 20
    watch.poll()
    assert watch.verdicts
    watch.poll()
    assert watch.verdicts == [] and "gpudirect_job_hang{" not in watch.metrics(0.0)


def test_every_rank_in_one_collective_while_the_gpus_spin_is_told_and_published():
    agreeing = status_doc([0, 1, 2, 3], count=lambda n: 42)
    clock, samples = Clock(), []

    def activity(pids):
        samples.append(sorted(pids))
        return SPIN
    watch = job_watch.JobWatch(status=lambda **kw: agreeing, monitor=no_monitor, clock=clock, hang_after_s=60,
                               activity=activity)
    for now in (0, 30, 61):
        clock.now = now
        watch.poll()
    assert samples[0] == [1000, 1001, 1002, 1003]  # the ranks' pids, for the GPUs that run them
    lines = watch.news()
    assert len(lines) == 1 and lines[0].startswith("stuck: communicator 0xbad (4 ranks) is stuck inside a collective")
    text = watch.metrics(0.0)
    assert 'gpudirect_job_stuck{slurm_job="",comm="0xbad"} 1' in text
    assert 'gpudirect_job_stalled_seconds{slurm_job="",comm="0xbad"} 61.0' in text


def test_without_an_activity_sampler_agreeing_counts_stay_quiet():
    agreeing = status_doc([0, 1], count=lambda n: 42)
    clock = Clock()
    watch = job_watch.JobWatch(status=lambda **kw: agreeing, monitor=no_monitor, clock=clock, hang_after_s=60)
    for now in (0, 600, 6000):
        clock.now = now
        watch.poll()
    assert watch.verdicts == [] and watch.news() == []


def test_a_slow_gpu_inside_the_node_is_published_for_the_rule(tmp_path):
    from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.job.test_nccl_inspector_slow_gpu import (
        gpu_file)
    (tmp_path / "nccl_inspector_metrics_a.prom").write_text(gpu_file("a3u-3", [180.0] * 7 + [108.0]))
    watch = job_watch.JobWatch(status=lambda **kw: status_doc([0]), monitor=no_monitor, clock=Clock(),
                               inspector_dir=str(tmp_path))
    watch.poll()
    text = watch.metrics(0.0)
    assert ('gpudirect_job_slow_gpu{slurm_job="4242",comm="DP Group 0",collective="AllReduce",'
            'message_size="4-5GB",gpu="GPU7"} 0.6') in text
    assert text.count("gpudirect_job_slow_gpu{") == 1


def test_two_stuck_communicators_sharing_a_hash_publish_one_series_each_label_set():
    from ansible_collections.gpudirect.gcp.tests.unit.roles.test_node_health_agent import promtool_check
    doc = status_doc([0, 1], count=lambda n: 42)
    second = dict(doc["communicators"][0], secondary_hash="0x3:0x4")
    second["ranks"] = [dict(rank, pid=rank["pid"] + 100) for rank in second["ranks"]]
    doc["communicators"].append(second)
    clock = Clock()
    watch = job_watch.JobWatch(status=lambda **kw: doc, monitor=no_monitor, clock=clock, hang_after_s=60,
                               activity=lambda pids: SPIN)
    for now in (0, 61):
        clock.now = now
        watch.poll()
    assert [v["kind"] for v in watch.verdicts] == ["stuck", "stuck"]
    text = watch.metrics(0.0)
    assert text.count('gpudirect_job_stuck{slurm_job="",comm="0xbad"} 1') == 1
    assert promtool_check(text) == (0, "")
