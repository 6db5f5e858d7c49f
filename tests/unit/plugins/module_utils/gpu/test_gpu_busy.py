# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a node may take an NCCL test: its GPUs' compute processes and its Slurm state."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import gpu_busy, nvidia_smi

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "fixtures", "gpu")
RTX = os.path.join(FIXTURES, "public", "rtx-a5000-x2-590.44.01-event-reasons-fabric-v13.xml")
H100 = os.path.join(FIXTURES, "h100-580.159.04", "nvidia-smi-q-x.xml")


def gpus(path):
    with open(path) as fh:
        return nvidia_smi.parse(fh.read())


def test_compute_processes_of_the_real_capture_name_gpu_pid_and_name():
    procs, ignored = gpu_busy.compute_processes(gpus(RTX))
    assert ignored == []
    assert [(p["gpu"], p["pid"], p["process_name"], p["used_memory_mib"]) for p in procs] == [
        (0, 100477, "/root/src/llama.cpp/build/bin/llama-server", 22430),
        (1, 100477, "/root/src/llama.cpp/build/bin/llama-server", 17246)]
    assert procs[0]["pci_bus_id"] == gpus(RTX)[0]["pci_bus_id"]


def test_the_real_capture_makes_the_node_busy_and_says_which_process_on_which_gpu():
    decision = gpu_busy.decide(gpus=gpus(RTX))
    assert decision["state"] == "busy" and decision["busy"] is True
    assert decision["reasons"] == [
        "GPU 0: pid 100477 /root/src/llama.cpp/build/bin/llama-server (22430 MiB); "
        "GPU 1: pid 100477 /root/src/llama.cpp/build/bin/llama-server (17246 MiB)"]


def test_the_idle_h100_is_idle():
    decision = gpu_busy.decide(gpus=gpus(H100))
    assert decision == {"state": "idle", "busy": False, "reasons": [], "processes": [], "ignored": [],
                        "slurm": None}


def _rxdm_on_every_gpu(name):
    return [{"index": i, "pci_bus_id": "0000:%02x:00.0" % i, "processes": [
        {"pid": 4242, "type": "C", "process_name": name, "used_memory_mib": 4096}]} for i in range(8)]


@pytest.mark.parametrize("family", ["a3-high", "a3-mega"])
def test_the_nodes_own_rxdm_on_every_gpu_is_no_job(family):
    from ansible_collections.gpudirect.gcp.plugins.module_utils import families

    names = families.get_family(family)["rxdm"]["gpu_processes"]
    records = _rxdm_on_every_gpu("/fts/" + names[0])
    # without the family's names RxDM reads as a job on every GPU: every node would be left out
    assert gpu_busy.decide(gpus=records)["state"] == "busy"
    decision = gpu_busy.decide(gpus=records, ignore=names)
    assert decision["state"] == "idle" and decision["processes"] == []
    assert [p["gpu"] for p in decision["ignored"]] == list(range(8))


def test_a_job_beside_rxdm_still_makes_the_node_busy():
    records = _rxdm_on_every_gpu("/tcpgpudmarxd/build/app/tcpgpudmarxd")
    records[3]["processes"].append({"pid": 77, "type": "C", "process_name": "python3 train.py", "used_memory_mib": 9})
    decision = gpu_busy.decide(gpus=records, ignore=["tcpgpudmarxd"])
    assert decision["state"] == "busy"
    assert decision["reasons"] == ["GPU 3: pid 77 python3 train.py (9 MiB)"]


@pytest.mark.parametrize("name, program", [
    ("/tcpgpudmarxd/build/app/tcpgpudmarxd", "tcpgpudmarxd"), ("python3 train.py", "python3"),
    ("tcpgpudmarxd-evil", "tcpgpudmarxd-evil"), ("", ""), (None, "")])
def test_program_name_is_the_file_name_only(name, program):
    assert gpu_busy.program_name(name) == program


def test_graphics_only_processes_do_not_make_a_node_busy():
    records = [{"index": 0, "pci_bus_id": "x", "processes": [
        {"pid": 900, "type": "G", "process_name": "/usr/lib/xorg/Xorg", "used_memory_mib": 4}]}]
    assert gpu_busy.decide(gpus=records)["state"] == "idle"
    records[0]["processes"][0]["type"] = "C+G"
    assert gpu_busy.decide(gpus=records)["state"] == "busy"


@pytest.mark.parametrize("error", ["nvidia-smi not found", "nvidia-smi -q -x exited 9: NVIDIA-SMI has failed"])
def test_a_node_whose_gpus_cannot_be_read_is_unknown_never_idle(error):
    decision = gpu_busy.decide(gpu_error=error)
    assert decision["state"] == "unknown" and decision["busy"] is False
    assert decision["reasons"] == ["could not read the GPU processes: " + error]


def test_a_gpu_with_no_process_list_is_unknown():
    decision = gpu_busy.decide(gpus=[{"index": 3, "pci_bus_id": "0000:8b:00", "processes": None}])
    assert decision["state"] == "unknown"
    assert decision["reasons"] == ["could not read the GPU processes: nvidia-smi lists no process block for GPU 3"]


def test_no_gpu_at_all_is_unknown():
    assert gpu_busy.decide(gpus=[])["state"] == "unknown"


@pytest.mark.parametrize("text,states,is_busy", [
    ("idle\n", ["idle"], False),
    ("allocated\n", ["allocated"], True),
    ("mixed\n", ["mixed"], True),
    ("mixed*\n", ["mixed"], True),
    ("drained\n", ["drained"], False),
    ("draining\n", ["draining"], True),
    ("completing\n", ["completing"], True),
    ("idle~\n", ["idle"], False),
    ("down*\n", ["down"], False),
    ("allocated+drain\n", ["allocated", "drain"], True),
    ("idle\nmixed\n", ["idle", "mixed"], True),
    ("IDLE+DRAIN\n", ["idle", "drain"], False),
    ("", [], False),
])
def test_slurm_states_from_sinfo(text, states, is_busy):
    parsed = gpu_busy.parse_sinfo_states(text)
    assert parsed == states
    assert gpu_busy.slurm_busy(parsed) is is_busy


def test_squeue_lines_become_jobs():
    assert gpu_busy.parse_squeue("4711|alice|train-llm|RUNNING\n4712|bob|eval|COMPLETING\n\n") == [
        {"id": "4711", "user": "alice", "name": "train-llm", "state": "RUNNING"},
        {"id": "4712", "user": "bob", "name": "eval", "state": "COMPLETING"}]
    assert gpu_busy.parse_squeue("garbage line\n") == []


def test_a_slurm_node_running_a_job_is_busy_and_names_the_job():
    slurm = {"node": "a3-node1", "states": ["mixed"], "jobs": [
        {"id": "4711", "user": "alice", "name": "train-llm", "state": "RUNNING"}]}
    decision = gpu_busy.decide(gpus=gpus(H100), slurm=slurm)
    assert decision["state"] == "busy"
    assert decision["reasons"] == ["Slurm node a3-node1 is mixed: job 4711 (train-llm, alice)"]


def test_a_drained_slurm_node_with_idle_gpus_is_idle():
    slurm = {"node": "a3-node1", "states": ["idle", "drain"], "jobs": []}
    assert gpu_busy.decide(gpus=gpus(H100), slurm=slurm)["state"] == "idle"


def test_slurm_that_cannot_be_read_makes_the_node_unknown_and_processes_still_win():
    decision = gpu_busy.decide(gpus=gpus(H100), slurm_error="sinfo exited 1: Unable to contact slurm controller")
    assert decision["state"] == "unknown"
    assert decision["reasons"] == ["could not read the Slurm state: sinfo exited 1: Unable to contact slurm controller"]
    both = gpu_busy.decide(gpus=gpus(RTX), slurm_error="sinfo exited 1")
    assert both["state"] == "busy" and len(both["reasons"]) == 2


def test_one_line_names_the_node_and_why():
    decision = gpu_busy.decide(gpus=gpus(RTX))
    assert gpu_busy.describe("node3", decision) == (
        "node3: busy: GPU 0: pid 100477 /root/src/llama.cpp/build/bin/llama-server (22430 MiB); "
        "GPU 1: pid 100477 /root/src/llama.cpp/build/bin/llama-server (17246 MiB)")
    assert gpu_busy.describe("node0", gpu_busy.decide(gpus=gpus(H100))) == "node0: idle"


def test_process_names_from_the_node_are_made_safe_and_short():
    records = [{"index": 0, "pci_bus_id": "x", "processes": [
        {"pid": 7, "type": "C", "process_name": "evil\x1b[2Jname\n" + "x" * 500, "used_memory_mib": None}]}]
    reason = gpu_busy.decide(gpus=records)["reasons"][0]
    assert "\x1b" not in reason and "\n" not in reason and len(reason) < 300
    assert reason.startswith("GPU 0: pid 7 evil\\x1b[2Jname")


def test_wait_idle_stops_at_the_deadline_without_sleeping_past_it():
    now, slept = [0.0], []

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds

    decision, waited = gpu_busy.wait_idle(lambda: {"state": "busy"}, 10, 4, clock=lambda: now[0], sleep=sleep)
    assert decision["state"] == "busy" and waited == 10 and slept == [4, 4, 2]


def test_wait_idle_returns_at_the_first_idle_look():
    looks = iter([{"state": "unknown"}, {"state": "idle"}, {"state": "busy"}])
    decision, _waited = gpu_busy.wait_idle(lambda: next(looks), 100, 1, clock=lambda: 0.0, sleep=lambda s: None)
    assert decision["state"] == "idle"
