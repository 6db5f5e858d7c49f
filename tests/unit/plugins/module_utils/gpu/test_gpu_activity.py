# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A job's GPUs from nvidia-smi's two CSV queries: spinning, computing, idle, or unknown."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import gpu_activity

# as nvidia-smi prints them (csv,noheader,nounits) on an H100 node
GPUS = ("0, GPU-aaaa, 100, 131.40, 700.00\n1, GPU-bbbb, 100, 128.95, 700.00\n"
        "2, GPU-cccc, 0, 71.20, 700.00\n3, GPU-dddd, 100, 652.10, 700.00\n")
APPS = "4101, GPU-aaaa\n4102, GPU-bbbb\n4103, GPU-dddd\n977, GPU-cccc\n"


def test_the_ranks_gpus_that_are_busy_far_below_their_limit_spin():
    found = gpu_activity.state(gpu_activity.parse_gpus(GPUS), gpu_activity.parse_apps(APPS), pids=[4101, 4102])
    assert found["state"] == "spin" and found["gpus"] == [0, 1]
    assert found["detail"] == "GPUs 0, 1 at 100% utilization and at most 19% of the power limit"


def test_a_gpu_that_computes_or_rests_makes_the_job_no_spin():
    gpus, apps = gpu_activity.parse_gpus(GPUS), gpu_activity.parse_apps(APPS)
    assert gpu_activity.state(gpus, apps, pids=[4101, 4103])["state"] == "compute"
    idle = gpu_activity.state(gpus, apps, pids=[4101, 977])
    assert idle["state"] == "idle" and idle["detail"] == "GPU 2 at 0% utilization"
    # no rank of the job runs here by its pid: every GPU with a compute process is the job's
    assert gpu_activity.state(gpus, apps, pids=[1])["state"] == "idle"
    assert gpu_activity.state(gpus, {}, pids=[4101])["state"] == "none"


def test_readings_nvidia_smi_lacks_are_unknown_never_a_spin():
    gpus = gpu_activity.parse_gpus("0, GPU-aaaa, 100, [N/A], 700.00\n1, GPU-bbbb, [Not Supported], 90.1, 700.00\n")
    assert gpus[0]["power"] is None and gpus[1]["util"] is None
    assert gpu_activity.state(gpus[:1], {1: {"GPU-aaaa"}})["state"] == "unknown"
    assert gpu_activity.state(gpus, {1: {"GPU-bbbb"}})["state"] == "unknown"


@pytest.mark.parametrize("text, message", [
    ("0, GPU-a, 100\n", "line 1, is not index, uuid"),
    ("0, GPU-a, nan, 1, 2\n", "line 1: 'nan' is not a reading"),
    ("0, GPU-a, 100, -5, 700\n", "line 1: '-5' is not a reading"),
    ("0, GPU-a, 100, 100, 700\nx, GPU-b, 1, 1, 1\n", "line 2, is not index"),
])
def test_output_that_is_not_nvidia_smis_is_one_line_naming_the_line(text, message):
    with pytest.raises(ValueError, match=message):
        gpu_activity.parse_gpus(text)


def test_a_sample_that_cannot_be_taken_is_none():
    def run(answers):
        def call(argv):
            return answers.pop(0)
        return call
    assert gpu_activity.sample(run([(1, "", "NVML: driver not loaded")]), "nvidia-smi") is None
    assert gpu_activity.sample(run([(0, "garbage", ""), (0, APPS, "")]), "nvidia-smi") is None
    assert gpu_activity.sample(run([(0, GPUS, ""), (0, APPS, "")]), "nvidia-smi", [4101])["state"] == "spin"
