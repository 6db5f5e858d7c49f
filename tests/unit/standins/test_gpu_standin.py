# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The STAND-IN GPUs: what they print is what the collection's parsers read from real tools, each seeded
fault shows where the real one would, they refuse what the real tools refuse, and a reset or a reboot
clears what the real ones clear."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import json
import os

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import health, nvidia_smi, xid

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRIPT = os.path.join(ROOT, "tests", "sandbox", "standins", "gpu", "gpudirect_standin_gpu.py")
BUSES = ["0000:04:00.0", "0000:05:00.0", "0000:0a:00.0", "0000:0b:00.0",
         "0000:84:00.0", "0000:85:00.0", "0000:8a:00.0", "0000:8b:00.0"]


@pytest.fixture
def standin(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("gpudirect_standin_gpu", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    config = tmp_path / "gpu.json"
    config.write_text(json.dumps({"buses": BUSES, "smi_name": "NVIDIA H100 80GB HBM3", "nvlinks": 18,
                                  "fabric": False, "clique_id": 7, "cluster_uuid": "x"}))
    monkeypatch.setattr(mod, "CONFIG", str(config))
    monkeypatch.setattr(mod, "STATE", str(tmp_path / "state.json"))
    monkeypatch.setattr(mod, "MODPROBE_DIR", str(tmp_path / "modprobe.d"))
    # this machine's /proc also shows the RxDM stand-ins of any sandbox running beside the tests: only a
    # test's own count
    mod.test_rxdm_pids = set()
    real = mod._rxdm_processes
    monkeypatch.setattr(mod, "_rxdm_processes", lambda: [e for e in real() if e[0] in mod.test_rxdm_pids])
    return mod


def judge(mod, fabric_manager="active"):
    state = mod.load()
    ev = {"driver": "570.172.08", "pci": [nvidia_smi.bus_key(b) for b in BUSES],
          "smi": nvidia_smi.parse(mod.smi_xml(state)), "nvlink": nvidia_smi.parse_nvlink_status(mod.smi_nvlink(state)),
          "kernel_log": "\n".join(state["kernel_log"]), "fabric_manager": fabric_manager}
    return health.judge(health.expected_for(families.FAMILIES["a3-mega"]["gpu"]), ev)


def fails(found):
    return sorted(f["subject"] for f in found if f["severity"] == "fail")


def test_healthy_stand_in_reads_as_a_healthy_a3(standin):
    assert judge(standin) == []
    assert "STAND-IN" in standin.smi_xml(standin.load())


def test_each_seeded_fault_is_named_on_its_gpu(standin):
    for kind, args in (("gpu-xid", ["7", "79"]), ("gpu-pcie", ["2", "8"]), ("gpu-remap-pending", ["1"]),
                       ("gpu-nvlink", ["4", "2"]), ("gpu-throttle", ["3", "hw_slowdown"]),
                       ("gpu-remap-failure", ["5"]), ("gpu-ecc", ["6"])):
        standin.fault(standin.load(), kind, args)
    assert fails(judge(standin)) == ["GPU 0000:8b:00", "GPU 1 (0000:05:00)", "GPU 2 (0000:0a:00)",
                                     "GPU 3 (0000:0b:00)", "GPU 4 (0000:84:00)", "GPU 5 (0000:85:00)",
                                     "GPU 6 (0000:8a:00)"]
    log = "\n".join(standin.load()["kernel_log"])
    assert [e["xid"] for e in xid.events(log)] == [79, 63, 64, 94]


def test_a_reset_and_a_reboot_clear_what_the_real_ones_clear(standin):
    for kind, args in (("gpu-remap-pending", ["1"]), ("gpu-remap-failure", ["2"]), ("gpu-xid", ["7", "79"]),
                       ("gpu-throttle", ["3", "hw_slowdown"]), ("gpu-pcie", ["4", "8"])):
        standin.fault(standin.load(), kind, args)
    standin.reset(standin.load(), "1")
    # the reset applied the remap; the Xid line stays in the log as history
    assert "GPU 1 (0000:05:00)" not in fails(judge(standin))
    with pytest.raises(standin.Refused):
        standin.reset(standin.load(), "7")  # fell off the bus: nothing to reset
    standin.boot(standin.load())
    # spare rows spent and a board holding its clocks down survive a reboot
    assert fails(judge(standin)) == ["GPU 2 (0000:0a:00)", "GPU 3 (0000:0b:00)"]
    assert standin.load()["kernel_log"] == []


@pytest.mark.parametrize("kind,args,why", [
    ("gpu-pcie", ["0", "3"], "x1, x2, x4, x8 or x16"),
    ("gpu-nvlink", ["0", "19"], "18 NVLink links"),
    ("gpu-throttle", ["0", "slow"], "unknown clock event reason"),
    ("gpu-xid", ["9", "79"], "no GPU '9'"),
    ("gpu-fabric", ["0", "In Progress"], "no multi-node NVLink fabric"),
    ("gpu-xid", ["0"], "takes 2 argument(s)"),
    ("bogus", [], "unknown fault 'bogus'"),
])
def test_faults_the_hardware_cannot_have_are_refused(standin, kind, args, why):
    with pytest.raises(standin.Refused) as err:
        standin.fault(standin.load(), kind, args)
    assert why in str(err.value)


def test_nvidia_smi_answers_only_what_it_models(standin, capsys):
    assert standin.main(["nvidia-smi", "-q", "-x"]) == 0
    assert len(nvidia_smi.parse(capsys.readouterr().out)) == 8
    assert standin.main(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader,nounits"]) == 2
    assert 'Field "name" is not a valid field to query.' in capsys.readouterr().err
    assert standin.main(["nvidia-smi", "--query-gpu=index", "--format=csv"]) == 2
    assert standin.main(["nvidia-smi", "topo", "-m"]) == 2
    assert "the stand-in knows" in capsys.readouterr().err


def test_imex_refuses_the_node_lists_imex_refuses(standin, tmp_path, monkeypatch):
    conf = tmp_path / "config.cfg"
    nodes = tmp_path / "nodes_config.cfg"
    conf.write_text("SERVER_PORT=1\nIMEX_NODE_CONFIG_FILE=%s\n" % nodes)
    monkeypatch.setattr(standin, "IMEX_CONFIG", str(conf))
    for text, why in (("", "lists no node"), ("10.0.0.1\nnode-b\n", "not an IPv4 address"),
                      ("192.0.2.10\n192.0.2.11\n", "none of this node's addresses")):
        nodes.write_text(text)
        with pytest.raises(standin.Refused) as err:
            standin.imex_daemon()
        assert why in str(err.value)


def test_imex_ctl_says_unavailable_without_its_daemon(standin, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(standin, "IMEX_STATUS", str(tmp_path / "none.json"))
    assert standin.imex_ctl(["-q"]) == 1 and capsys.readouterr().out.strip() == "UNAVAILABLE"
    status = tmp_path / "status.json"
    status.write_text(json.dumps({"pid": os.getpid(), "peers": ["10.0.0.2"], "connected": []}))
    monkeypatch.setattr(standin, "IMEX_STATUS", str(status))
    assert standin.imex_ctl(["-q"]) == 0 and capsys.readouterr().out.strip() == "DEGRADED"
    status.write_text(json.dumps({"pid": os.getpid(), "peers": ["10.0.0.2"], "connected": ["10.0.0.2"]}))
    assert standin.imex_ctl(["-q"]) == 0 and capsys.readouterr().out.strip() == "READY"


@pytest.fixture
def rdma_standin(standin, tmp_path, monkeypatch):
    import sys
    sys.path.insert(0, os.path.join(ROOT, "tests", "sandbox"))
    from sandboxlib import standin_sysfs  # pylint: disable=import-outside-toplevel
    sys_root = tmp_path / "sys"
    standin_sysfs.write_rdma(str(sys_root), ["mlx5_0", "mlx5_1"], ["gpu0rdma0", "gpu1rdma0"])
    config = json.loads(open(standin.CONFIG).read())
    config.update(rdma_sys=str(sys_root / "class" / "infiniband"), rdma_devices=["mlx5_0", "mlx5_1"])
    with open(standin.CONFIG, "w") as fh:
        json.dump(config, fh)
    monkeypatch.setattr(standin, "RDMA_ERRORS_FLAG", str(tmp_path / "rdma-errors"))
    return standin, sys_root


def test_rdma_faults_show_where_the_checks_read_and_a_reboot_clears_them(rdma_standin):
    from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import rdma
    mod, sys_root = rdma_standin
    expected = {"rdma_devices": ["mlx5_0", "mlx5_1"], "vpc_mtu": 8896}

    def run(_argv):
        return 0, "\tactive_mtu:\t4096 (5)\n", ""
    assert rdma.judge(expected, rdma.gather(expected["rdma_devices"], run, lambda n: "/x", sys_dir=str(sys_root),
                                            interval_s=0.05)) == []
    assert mod.fault(mod.load(), "rdma-port-down", ["1"]) == "seeded rdma-port-down on mlx5_1 port 1"
    # the ticker the fault starts is a process of its own; here one tick by hand stands for it
    flag = mod.RDMA_ERRORS_FLAG + ".mlx5_0"
    with open(flag, "w") as fh:
        fh.write("x")
    ev_before = rdma.read_ports(str(sys_root))

    def one_tick(_seconds):
        os.unlink(flag)  # the ticker stops after the tick it is in
        with open(flag, "w"):
            pass
        for rel, step in mod.RDMA_TICK.items():
            path = os.path.join(mod._rdma_port(mod.load()["config"], "mlx5_0"), rel)
            with open(path) as fh:
                value = int(fh.read())
            with open(path, "w") as fh:
                fh.write("%d\n" % (value + step))
    found = rdma.judge(expected, rdma.gather(expected["rdma_devices"], run, lambda n: "/x", sys_dir=str(sys_root),
                                             interval_s=0, sleep=one_tick))
    assert sorted((f["subject"], f["severity"]) for f in found) == [
        ("mlx5_0 port 1", "fail"), ("mlx5_0 port 1", "warn"), ("mlx5_0 port 1", "warn"), ("mlx5_1 port 1", "fail")]
    assert ev_before["mlx5_1"]["ports"]["1"]["state"] == "DOWN"
    mod.boot(mod.load())
    assert not os.path.exists(flag)
    assert rdma.judge(expected, rdma.gather(expected["rdma_devices"], run, lambda n: "/x", sys_dir=str(sys_root),
                                            interval_s=0.05)) == []
    with pytest.raises(mod.Refused, match="no RDMA device '9': the node has devices 0-1"):
        mod.fault(mod.load(), "rdma-errors", ["9"])


def test_dcgmi_fails_the_memory_test_where_the_gpu_has_a_memory_fault(standin, capsys):
    from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import dcgm
    assert standin.dcgmi(["diag", "-r", "1", "-j"]) == 0
    clean = dcgm.parse(capsys.readouterr().out)
    assert [r["status"] for r in clean["results"]] == ["pass"] * 9
    standin.fault(standin.load(), "gpu-remap-pending", ["1"])
    standin.fault(standin.load(), "gpu-remap-failure", ["2"])
    standin.fault(standin.load(), "gpu-xid", ["7", "79"])
    assert standin.dcgmi(["diag", "-r", "1", "-j"]) == 226
    found = dcgm.judge({"level": 1, "error": None, "report": dcgm.parse(capsys.readouterr().out)},
                       {"1": "GPU 1 (0000:05:00)", "2": "GPU 2 (0000:0a:00)"})
    # GPU 7 fell off the bus: DCGM does not see it (the GPU checks name it)
    assert [(f["subject"], f["rung"]) for f in found] == [("GPU 1 (0000:05:00)", "reset_gpu"),
                                                          ("GPU 2 (0000:0a:00)", "report_host")]
    with pytest.raises(standin.Refused, match="Invalid run level 9"):
        standin.dcgmi(["diag", "-r", "9", "-j"])


def _alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def test_a_busy_gpu_lists_a_real_compute_process_until_a_reboot_or_clear(standin):
    from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import gpu_busy

    idle = nvidia_smi.parse(standin.smi_xml(standin.load()))
    assert [g["processes"] for g in idle] == [[]] * 8
    assert gpu_busy.decide(gpus=idle)["state"] == "idle"
    assert standin.fault(standin.load(), "gpu-busy", ["5"]).startswith("seeded gpu-busy on GPU 5")
    try:
        gpus = nvidia_smi.parse(standin.smi_xml(standin.load()))
        procs = gpu_busy.compute_processes(gpus)[0]
        assert [(p["gpu"], p["type"]) for p in procs] == [(5, "C")]
        pid = procs[0]["pid"]
        assert _alive(pid) and "STAND-IN" in procs[0]["process_name"]
        assert gpu_busy.decide(gpus=gpus)["reasons"][0].startswith("GPU 5: pid %d " % pid)
        # a busy GPU is no fault of the hardware
        assert judge(standin) == []
        standin.boot(standin.load())
        assert gpu_busy.compute_processes(nvidia_smi.parse(standin.smi_xml(standin.load())))[0] == []
        standin.fault(standin.load(), "gpu-busy", ["2"])
        pid = gpu_busy.compute_processes(nvidia_smi.parse(standin.smi_xml(standin.load())))[0][0]["pid"]
        standin.fault(standin.load(), "clear", [])
        assert gpu_busy.compute_processes(nvidia_smi.parse(standin.smi_xml(standin.load())))[0] == []
        assert not _alive(pid)
    finally:
        standin.fault(standin.load(), "clear", [])


def test_a_job_that_ended_leaves_its_gpu_idle(standin):
    from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import gpu_busy

    standin.fault(standin.load(), "gpu-busy", ["0"])
    pid = gpu_busy.compute_processes(nvidia_smi.parse(standin.smi_xml(standin.load())))[0][0]["pid"]
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    assert gpu_busy.compute_processes(nvidia_smi.parse(standin.smi_xml(standin.load())))[0] == []


@pytest.mark.parametrize("mode, family", [("tcpx", "a3-high"), ("tcpxo", "a3-mega")])
def test_a_running_rxdm_standin_is_listed_on_every_gpu_as_the_real_daemon_is(standin, mode, family):
    import subprocess
    import sys
    import time

    from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import gpu_busy

    rxdm = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "/fts/rxdm_standin.py",
                             "--standin_mode=" + mode])
    standin.test_rxdm_pids.add(rxdm.pid)
    try:
        deadline = time.time() + 10
        while time.time() < deadline and not any(entry[0] == rxdm.pid for entry in standin._rxdm_processes()):
            time.sleep(0.05)
        gpus = nvidia_smi.parse(standin.smi_xml(standin.load()))
        assert all(any(p["pid"] == rxdm.pid for p in g["processes"]) for g in gpus)
        # the family table's names tell it from a job; without them the node would read as busy
        assert gpu_busy.decide(gpus=gpus)["state"] == "busy"
        names = families.get_family(family)["rxdm"]["gpu_processes"]
        assert gpu_busy.decide(gpus=gpus, ignore=names)["state"] == "idle"
    finally:
        rxdm.kill()
        rxdm.wait()


def test_the_job_watch_reads_a_spinning_a_computing_and_an_idle_gpu_from_the_stand_in(standin, capsys):
    from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import gpu_activity

    def run(argv):
        code = standin.main(["nvidia-smi"] + argv[1:])
        captured = capsys.readouterr()
        return code, captured.out, captured.err
    try:
        assert gpu_activity.sample(run, "nvidia-smi")["state"] == "none"
        spin = int(standin.fault(standin.load(), "gpu-spin", ["3"]).rsplit("pid ", 1)[1])
        found = gpu_activity.sample(run, "nvidia-smi", [spin])
        assert (found["state"], found["gpus"]) == ("spin", [3])
        busy = int(standin.fault(standin.load(), "gpu-busy", ["4"]).rsplit("pid ", 1)[1])
        assert gpu_activity.sample(run, "nvidia-smi", [busy])["state"] == "compute"
        assert gpu_activity.sample(run, "nvidia-smi", [spin, busy])["state"] == "compute"
    finally:
        standin.fault(standin.load(), "clear", [])
