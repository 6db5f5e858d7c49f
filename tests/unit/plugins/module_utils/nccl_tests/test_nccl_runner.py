# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The nccl-tests runner: mpirun command lines, a real local mpirun of the STAND-IN programs, and
pairwise mode driven by a fake executor that replays outputs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_runner
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.nccl_tests.test_nccl_judge import small_output

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
FIX = os.path.join(ROOT, "tests", "fixtures", "nccl")
STANDIN_BIN = os.path.join(ROOT, "tests", "sandbox", "standins", "nccl_tests", "bin")


def params(**kw):
    fam = families.FAMILIES["a3-mega"]
    p = {"family": "a3-mega", "mode": "cluster",
         "hosts": [{"name": "n0", "address": "10.0.0.2"}, {"name": "n1", "address": "10.0.0.3"}],
         "collectives": ["all_gather"], "minbytes": "1G", "maxbytes": "8G", "stepfactor": 2,
         "warmup_iters": 5, "iters": 20, "check_iters": 1, "slots": fam["gpu"]["count"],
         "binary_dir": STANDIN_BIN, "binary_suffix": "", "mpirun": "mpirun", "env": {"NCCL_BUFFSIZE": "8388608"},
         "control_iface": "eth0", "ssh_key": "/root/.ssh/k", "known_hosts": "/root/.ssh/kh",
         "test_timeout_s": 300, "run_timeout_s": 120, "threshold": 0.9, "baselines": {}, "check_plugin": True,
         "expected_net": None, "single_node": True, "max_rounds": 3, "mpirun_extra_args": [],
         "test_extra_args": [], "as_root": True}
    p.update(kw)
    return p


def test_mpirun_argv():
    argv = nccl_runner.mpirun_argv(params(), ["10.0.0.2", "10.0.0.3"], "all_gather", "/tmp/hf")
    assert argv[:2] == ["mpirun", "--allow-run-as-root"]
    joined = " ".join(argv)
    assert "--hostfile /tmp/hf -np 16" in joined
    assert "--mca btl self,tcp" in joined and "--mca btl_tcp_if_include eth0" in joined
    assert "-x NCCL_BUFFSIZE=8388608" in joined and "-x NCCL_DEBUG=INFO" in joined
    assert "-x NCCL_DEBUG_SUBSYS=INIT,NET,ENV" in joined
    assert "StrictHostKeyChecking=yes" in joined and "UserKnownHostsFile=/root/.ssh/kh" in joined
    tail = argv[argv.index(os.path.join(STANDIN_BIN, "all_gather_perf")):]
    assert tail == [os.path.join(STANDIN_BIN, "all_gather_perf"), "-b", "1G", "-e", "8G", "-f", "2", "-g", "1",
                    "-w", "5", "-n", "20", "-c", "1", "-T", "300"]
    argv = nccl_runner.mpirun_argv(params(as_root=False, check_plugin=False,
                                          env={"NCCL_DEBUG_SUBSYS": "ENV"}), ["a"], "all_reduce", "/h")
    assert "--allow-run-as-root" not in argv and "NCCL_DEBUG=INFO" not in " ".join(argv)


def test_one_process_a_node_drives_all_its_gpus():
    argv = nccl_runner.mpirun_argv(params(gpus_per_rank=8), ["10.0.0.2", "10.0.0.3"], "all_gather", "/tmp/hf")
    joined = " ".join(argv)
    assert "-np 2 --map-by ppr:1:node" in joined
    assert argv[argv.index("-g") + 1] == "8"
    argv = nccl_runner.mpirun_argv(params(gpus_per_rank=2), ["a", "b", "c"], "all_gather", "/tmp/hf")
    assert "-np 12 --map-by ppr:4:node" in " ".join(argv) and argv[argv.index("-g") + 1] == "2"


def test_plugin_check_turns_on_only_init_net_and_env():
    # A job profile such as TCPXO's carries NCCL_DEBUG_SUBSYS=INIT,NET,ENV,COLL,GRAPH for WARN level;
    # at INFO, COLL logs every collective call and floods large runs.
    env = {"NCCL_DEBUG": "WARN", "NCCL_DEBUG_SUBSYS": "INIT,NET,ENV,COLL,GRAPH"}
    argv = nccl_runner.mpirun_argv(params(env=env), ["a", "b"], "all_gather", "/h")
    assert "NCCL_DEBUG=INFO" in argv and "NCCL_DEBUG_SUBSYS=INIT,NET,ENV" in argv
    assert not [a for a in argv if a.startswith("NCCL_DEBUG_SUBSYS=") and a != "NCCL_DEBUG_SUBSYS=INIT,NET,ENV"]
    # without the plugin check the job keeps its own level and subsystems
    argv = nccl_runner.mpirun_argv(params(env=env, check_plugin=False), ["a", "b"], "all_gather", "/h")
    assert "NCCL_DEBUG=WARN" in argv and "NCCL_DEBUG_SUBSYS=INIT,NET,ENV,COLL,GRAPH" in argv


def test_env_file(tmp_path):
    path = tmp_path / "nccl.env"
    path.write_text("# written by nccl_profile\nNCCL_NET=gIB\nexport LD_LIBRARY_PATH=/usr/local/gib/lib64\n")
    env, _skipped = nccl_runner.read_env_file(str(path))
    assert env == {"NCCL_NET": "gIB", "LD_LIBRARY_PATH": "/usr/local/gib/lib64"}
    assert nccl_runner.read_env_file(str(tmp_path / "absent")) == ({}, None)


def plugin_dir(tmp_path, plugin="TCPXO", nccl="TCPXO"):
    """A plugin directory as the stand-in installer leaves it: plugin and NCCL core, each naming its installer."""
    plug = tmp_path / "lib64"
    plug.mkdir()
    (plug / "libnccl-net.so").write_text("STAND-IN libnccl-net.so; built against the NCCL from the %s installer\n"
                                         % plugin)
    if nccl:
        (plug / "libnccl.so.2").write_text("STAND-IN libnccl.so.2; is the NCCL from the %s installer\n" % nccl)
    return plug


def local_run(tmp_path, plug, **kw):
    conf = tmp_path / "conf"
    conf.mkdir(exist_ok=True)
    (conf / "net_name").write_text("FasTrak\n")
    p = params(hosts=[{"name": "local", "address": "localhost"}], slots=2, control_iface=None, ssh_key=None,
               known_hosts=None, as_root=os.geteuid() == 0,
               env={"LD_LIBRARY_PATH": str(plug), "NCCL_STANDIN_CONF_DIR": str(conf)})
    p.update(kw)
    return nccl_runner.NcclTestsRun(p).execute()


def test_standin_needs_an_nccl_core_to_start(tmp_path):
    # the TCPX installer without --install-nccl leaves the plugin only: nccl-tests cannot even load
    res = local_run(tmp_path, plugin_dir(tmp_path, "TCPX", nccl=None))
    run = res["runs"][0]
    assert run["rc"] == 127 and "libnccl.so.2: cannot open shared object file" in run["output_tail"]
    assert res["verdict"] == "fail"


def test_standin_refuses_a_plugin_built_for_another_nccl(tmp_path):
    run = local_run(tmp_path, plugin_dir(tmp_path, "TCPX", nccl="TCPXO"))["runs"][0]
    assert run["rc"] == 0 and run["net_names"] == ["Socket"]
    assert "built against the TCPX installer's NCCL, but" in run["output_tail"]
    # the same plugin with its own installer's NCCL loads
    other = tmp_path / "other"
    other.mkdir()
    run = local_run(other, plugin_dir(other, "TCPX", nccl="TCPX"))["runs"][0]
    assert run["rc"] == 0 and run["net_names"] == ["FasTrak"]


def test_real_local_mpirun_of_the_standin(tmp_path):
    """Real mpirun, real MPI ranks (the STAND-IN programs), parsed and judged."""
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "net_name").write_text("FasTrak\n")
    plug = plugin_dir(tmp_path)
    p = params(hosts=[{"name": "local", "address": "localhost"}], slots=2, control_iface=None, ssh_key=None,
               known_hosts=None, as_root=os.geteuid() == 0, collectives=["all_gather", "all_reduce"],
               env={"LD_LIBRARY_PATH": str(plug), "NCCL_STANDIN_CONF_DIR": str(conf)})
    res = nccl_runner.NcclTestsRun(p).execute()
    assert [r["rc"] for r in res["runs"]] == [0, 0], res["runs"][0]["output_tail"]
    run = res["runs"][0]
    assert run["ranks"] == 2 and run["net_names"] == ["FasTrak"]
    assert [r["size"] for r in run["rows"]] == [2 ** 30, 2 ** 31, 2 ** 32, 2 ** 33]
    # one node: no network baseline applies, so never a silent pass
    assert res["verdict"] == "not_judged"
    assert "STAND-IN" in run["output_tail"]


def test_real_local_mpirun_one_process_driving_both_gpus(tmp_path):
    """-g 2 in one MPI process: the same two ranks as two processes with -g 1."""
    res = local_run(tmp_path, plugin_dir(tmp_path), gpus_per_rank=2)
    run = res["runs"][0]
    assert "-np 1 --map-by ppr:1:node" in " ".join(run["command"]), run["command"]
    assert run["rc"] == 0 and run["ranks"] == 2 and run["net_names"] == ["FasTrak"], run["output_tail"]


def test_real_local_mpirun_bad_usage_maps_exit_code(tmp_path):
    p = params(hosts=[{"name": "local", "address": "localhost"}], slots=1, control_iface=None, ssh_key=None,
               known_hosts=None, as_root=os.geteuid() == 0, test_extra_args=["-q"], env={})
    res = nccl_runner.NcclTestsRun(p).execute()
    assert res["runs"][0]["rc"] == 6 and "invalid usage" in res["runs"][0]["exit_cause"]
    assert res["verdict"] == "fail"


def test_missing_binary_is_one_line():
    with pytest.raises(nccl_runner.RunnerInputError, match="nccl-tests binary not found.*all_gather_perf"):
        nccl_runner.NcclTestsRun(params(binary_dir="/nonexistent")).execute()


def test_check_mode_runs_nothing():
    calls = []
    res = nccl_runner.NcclTestsRun(params(binary_dir="/nonexistent", mode="pairwise"),
                                   executor=lambda *a: calls.append(a)).execute(check_mode=True)
    assert calls == [] and res["verdict"] is None and len(res["commands"]) == 1


# --- pairwise with a replaying executor ---------------------------------------

with open(os.path.join(FIX, "a3-mega_all_gather_2node_dstack.txt")) as _f:
    RECORDED = _f.read()


def replay(bad, net="FasTrak", slow_single=(), small_wrong=None):
    """Executor: every job prints the recorded run, busbw halved when a bad node takes part; a small-size job
    prints a checked run of a few bytes (small_wrong: {size: #wrong})."""
    seen = []

    def scaled(factor):
        def fix(m):
            return "%.2f" % (float(m.group(0)) * factor)
        out = []
        for line in RECORDED.splitlines():
            if re.match(r"^\s+\d+\s+\d+", line):
                toks = line.split()
                for i in (6, 7, 10, 11):
                    toks[i] = re.sub(r"[\d.]+", fix, toks[i])
                line = "  ".join(toks)
            out.append(line)
        return "h:1:1 [0] NCCL INFO Using network %s\n" % net + "\n".join(out)

    def executor(job_lists, timeout):
        seen.append([[j.names for j in jobs] for jobs in job_lists])
        for jobs in job_lists:
            names = set(jobs[0].names)
            flat = [n for js in job_lists for n in js[0].names]
            assert len(flat) == len(set(flat)), "a node in two runs at once"
            for job in jobs:
                if job.kind == "small_sizes":
                    job.output, job.rc, job.seconds = small_output(job.collective, wrong=small_wrong), 0, 1.0
                    continue
                factor = 0.5 if names & set(bad) and len(names) > 1 else 1.0
                if len(names) == 1 and names & set(slow_single):
                    factor = 0.3
                job.output, job.rc, job.seconds = scaled(factor), 0, 1.0
    executor.seen = seen
    return executor


def nodes(n):
    return [{"name": "node%d" % i, "address": "10.0.0.%d" % (i + 2)} for i in range(n)]


@pytest.mark.parametrize("n,bad", [(4, ["node2"]), (5, ["node4"]), (8, ["node1", "node6"]), (4, [])])
def test_pairwise_names_the_bad_nodes(n, bad):
    ex = replay(bad)
    res = nccl_runner.NcclTestsRun(params(mode="pairwise", hosts=nodes(n)), executor=ex).execute()
    assert res["bad_nodes"] == bad
    assert res["verdict"] == ("fail" if bad else "pass")
    assert len(res["pairwise"]["rounds"]) <= 3
    for b in bad:
        assert res["node_table"][b]["status"] == "bad"
        assert "failed with" in res["node_table"][b]["reason"]
    good = [h["name"] for h in nodes(n) if h["name"] not in bad]
    assert all(res["node_table"][g]["status"] == "good" for g in good)
    # single-node round first, all nodes at once
    assert ex.seen[0] == [[[h["name"]]] for h in nodes(n)]
    singles = res["pairwise"]["single_node"]
    assert set(singles) == set(h["name"] for h in nodes(n))
    pair_entry = res["pairwise"]["rounds"][0][0]
    assert pair_entry["busbw_gbps"]["all_gather"] > 0


def test_pairwise_single_node_outlier_is_named_without_pairing():
    res = nccl_runner.NcclTestsRun(params(mode="pairwise", hosts=nodes(4)),
                                   executor=replay([], slow_single=["node3"])).execute()
    assert res["bad_nodes"] == ["node3"]
    assert "single-node" in res["node_table"]["node3"]["reason"]
    assert "GPU/NVLink" in res["node_table"]["node3"]["reason"]


def test_socket_fallback_fails_every_pair():
    res = nccl_runner.NcclTestsRun(params(mode="cluster"), executor=replay([], net="Socket")).execute()
    assert res["verdict"] == "fail"
    assert "Socket" in res["collectives"][0]["reasons"][0]


def test_cluster_mode_pass_and_threshold():
    res = nccl_runner.NcclTestsRun(params(), executor=replay([])).execute()
    assert res["verdict"] == "pass" and res["collectives"][0]["measured_busbw_gbps"] == 188.37
    res = nccl_runner.NcclTestsRun(params(threshold=1.05), executor=replay([])).execute()
    assert res["verdict"] == "fail"


def a4x_params(domains):
    hosts = [{"name": "n%d" % i, "address": "10.0.0.%d" % (i + 2), "nvlink_domain": d}
             for i, d in enumerate(domains)]
    return params(family="a4x", hosts=hosts, slots=4)


def test_a4x_run_inside_one_nvlink_domain_meets_the_nvlink_bar():
    # the recording (about 188 GB/s at 8 GiB) is far below the 454 GB/s NVLink-domain baseline
    res = nccl_runner.NcclTestsRun(a4x_params(["b1/s1", "b1/s1"]), executor=replay([], net="gIB")).execute()
    verdict = res["collectives"][0]
    assert res["verdict"] == "fail" and verdict["scope"] == "nvlink_domain" and verdict["baseline_gbps"] == 454.0


def test_a4x_run_across_nvlink_domains_meets_the_network_bar():
    res = nccl_runner.NcclTestsRun(a4x_params(["b1/s1", "b1/s2"]), executor=replay([], net="gIB")).execute()
    verdict = res["collectives"][0]
    assert res["verdict"] == "pass" and verdict["scope"] == "network" and verdict["required_gbps"] == 160.0
    assert "different NVLink domains (n0=b1/s1, n1=b1/s2)" in " ".join(verdict["reasons"])
    res = nccl_runner.NcclTestsRun(a4x_params([None, "b1/s1"]), executor=replay([], net="gIB")).execute()
    assert "NVLink domain of n0 unknown" in " ".join(res["collectives"][0]["reasons"])


def test_standin_replays_the_recorded_fixture_unchanged():
    with open(os.path.join(STANDIN_BIN, "recorded", "a3-mega_all_gather_2node_dstack.txt")) as f:
        assert f.read() == RECORDED


def test_standin_slow_switch_only_slows_multi_node_runs(tmp_path):
    """One local node: the network switch does not apply, the GPU switch does."""
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "net_name").write_text("FasTrak\n")
    (conf / "slow").write_text("0.5\n")
    plug = plugin_dir(tmp_path)
    p = params(hosts=[{"name": "local", "address": "localhost"}], slots=2, control_iface=None, ssh_key=None,
               known_hosts=None, as_root=os.geteuid() == 0, maxbytes="8G", minbytes="8G",
               env={"LD_LIBRARY_PATH": str(plug), "NCCL_STANDIN_CONF_DIR": str(conf)})
    full = nccl_runner.NcclTestsRun(p).execute()["runs"][0]["rows"][0]["busbw_oop"]
    (conf / "slow_gpu").write_text("0.5\n")
    half = nccl_runner.NcclTestsRun(p).execute()["runs"][0]["rows"][0]["busbw_oop"]
    assert full == 188.37 and half == round(188.37 / 2, 2)


# --- gIB: the base environment from the installed script, judged by the stand-in checker -------------

def _gib_install(tmp_path, monkeypatch):
    """Run the gIB installer stand-in into tmp_path/gib: plugin, NCCL, set_nccl_env.sh, guest config."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("installer_standin", os.path.join(
        ROOT, "tests", "sandbox", "standins", "nccl_plugin_installer", "installer_standin.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setattr(mod, "TRANSPORT", "gib")
    monkeypatch.setattr(mod, "TARGET", str(tmp_path / "gib"))
    monkeypatch.setattr(mod, "mounted", lambda path: True)
    mod.main(["install", "--install-nccl"])
    return str(tmp_path / "gib")


def _bash(argv):
    import subprocess
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def _gib_run(tmp_path, env):
    conf = tmp_path / "conf"
    conf.mkdir(exist_ok=True)
    (conf / "net_name").write_text("gIB\n")
    env = dict(env, NCCL_STANDIN_CONF_DIR=str(conf))
    p = params(family="a4", hosts=[{"name": "local", "address": "localhost"}], slots=2, control_iface=None,
               ssh_key=None, known_hosts=None, as_root=os.geteuid() == 0, env=env)
    return nccl_runner.NcclTestsRun(p).execute()["runs"][0]


def test_gib_profile_from_the_installed_script_passes_its_checker(tmp_path, monkeypatch):
    from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl.nccl_env_file import sourced_env
    gib = _gib_install(tmp_path, monkeypatch)
    base, rc = sourced_env(_bash, "/bin/bash", os.path.join(gib, "scripts", "set_nccl_env.sh"),
                           {"NCCL_LIB_DIR": os.path.join(gib, "scripts")})
    assert rc == 0
    # computed by the script from NCCL_LIB_DIR, so read by running it, not by parsing it
    assert base["NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE"] == os.path.join(gib, "configs", "guest_config.txtpb")
    # a shell variable the script does not export never reaches a job, nor does the shell's own PATH
    assert "GIB_STANDIN_ROOT" not in base and "PATH" not in base
    env, problems = families.render_nccl_env("a4", ["lo"], [], base=base, plugin_dir=os.path.join(gib, "lib64"),
                                             overrides={"NCCL_TUNER_CONFIG_PATH": "unused-here"})
    assert problems == []
    run = _gib_run(tmp_path, env)
    assert run["rc"] == 0 and run["net_names"] == ["gIB"], run["output_tail"]


def test_gib_profile_with_another_releases_values_is_aborted(tmp_path, monkeypatch):
    gib = _gib_install(tmp_path, monkeypatch)
    # the values an older gIB's script set, as a copied table would carry them
    older = {"NCCL_NET": "gIB", "NCCL_CROSS_NIC": "0", "NCCL_NET_GDR_LEVEL": "PIX", "NCCL_P2P_NET_CHUNKSIZE": "131072",
             "NCCL_P2P_PCI_CHUNKSIZE": "131072", "NCCL_P2P_NVL_CHUNKSIZE": "524288", "NCCL_NVLS_CHUNKSIZE": "524288",
             "NCCL_IB_GID_INDEX": "3", "NCCL_IB_ADAPTIVE_ROUTING": "1", "NCCL_IB_QPS_PER_CONNECTION": "4",
             "NCCL_IB_TC": "52", "NCCL_IB_FIFO_TC": "84",
             "NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE": os.path.join(gib, "configs", "guest_config.txtpb")}
    env, _problems = families.render_nccl_env("a4", ["lo"], [], overrides=older,
                                              plugin_dir=os.path.join(gib, "lib64"))
    run = _gib_run(tmp_path, env)
    assert run["rc"] == 3
    assert "mismatch enforced: NCCL_P2P_NVL_CHUNKSIZE=524288 (expected 262144)" in run["output_tail"]


# --- the small-size stage of runs across four nodes or more -----------------------------------

def _small_commands(res):
    return [c for c in res["commands"] if c[c.index("-b") + 1] == "8"]


@pytest.mark.parametrize("mode", ["cluster", "pairwise"])
def test_four_nodes_or_more_add_a_small_size_sweep_judged_on_correctness(mode):
    res = nccl_runner.NcclTestsRun(params(mode=mode, hosts=nodes(4)), executor=replay([])).execute()
    [cmd] = _small_commands(res)
    # scalar sizes up to 64K, the data checked whatever the main sweep's -c
    assert cmd[cmd.index("-e") + 1] == "64K" and cmd[cmd.index("-c") + 1] == "1"
    assert "-np 32" in " ".join(cmd)
    assert res["small_sizes"]["required"] is True and res["small_sizes"]["status"] == "pass"
    assert res["verdict"] == "pass"
    assert [r["kind"] for r in res["runs"]].count("small_sizes") == 1


@pytest.mark.parametrize("mode", ["cluster", "pairwise"])
def test_large_sizes_fine_but_an_8_byte_row_wrong_fails_the_run_naming_the_size(mode):
    res = nccl_runner.NcclTestsRun(params(mode=mode, hosts=nodes(4), check_iters=0),
                                   executor=replay([], small_wrong={8: 2})).execute()
    assert res["verdict"] == "fail" and res["small_sizes"]["status"] == "fail"
    [verdict] = res["collectives"]
    assert verdict["status"] == "fail"
    assert "all_gather at 8 B: 4 wrong elements" in " ".join(verdict["reasons"])
    # the large sizes were fine: their bandwidth is still reported
    assert verdict["measured_busbw_gbps"] == 188.37
    [cmd] = _small_commands(res)
    assert cmd[cmd.index("-c") + 1] == "1"


def test_fewer_than_four_nodes_need_no_small_size_stage():
    res = nccl_runner.NcclTestsRun(params(hosts=nodes(3)), executor=replay([])).execute()
    assert _small_commands(res) == [] and res["verdict"] == "pass"
    assert res["small_sizes"] == {"required": False, "status": None, "verdicts": [], "minbytes": "8",
                                  "maxbytes": "64K", "min_nodes": 4}


def test_the_small_size_stage_follows_its_options():
    res = nccl_runner.NcclTestsRun(params(hosts=nodes(2), small_min_nodes=2, small_minbytes="4",
                                          small_maxbytes="1K"), executor=replay([])).execute()
    [cmd] = [c for c in res["commands"] if c[c.index("-b") + 1] == "4"]
    assert cmd[cmd.index("-e") + 1] == "1K"
    res = nccl_runner.NcclTestsRun(params(hosts=nodes(8), small_min_nodes=0), executor=replay([])).execute()
    assert _small_commands(res) == [] and res["small_sizes"]["required"] is False


def test_check_mode_shows_the_small_size_commands_too():
    res = nccl_runner.NcclTestsRun(params(binary_dir="/nonexistent", hosts=nodes(4)),
                                   executor=lambda *a: None).execute(check_mode=True)
    assert len(res["commands"]) == 2 and len(_small_commands(res)) == 1
    assert res["small_sizes"]["required"] is True and res["small_sizes"]["status"] is None
