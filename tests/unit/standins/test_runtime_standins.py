# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The RxDM and plugin installer stand-ins stay faithful to the family table and fail like the real ones."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl.nccl_env_file import parse_profile
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_parse

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
STANDINS = os.path.join(ROOT, "tests", "sandbox", "standins")


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _installer(tmp_path, monkeypatch, transport):
    mod = _load("installer_standin", os.path.join(STANDINS, "nccl_plugin_installer", "installer_standin.py"))
    monkeypatch.setattr(mod, "TRANSPORT", transport)
    monkeypatch.setattr(mod, "TARGET", str(tmp_path / transport / "lib64"))
    monkeypatch.setattr(mod, "mounted", lambda path: True)
    return mod


@pytest.fixture
def installer(tmp_path, monkeypatch):
    return _installer(tmp_path, monkeypatch, "tcpxo")


def test_tcpx_installer_lays_out_what_the_real_one_does(tmp_path, monkeypatch):
    tcpx = _installer(tmp_path, monkeypatch, "tcpx")
    tcpx.main(["install"])
    # plain `install` leaves the plugin only: no NCCL core for nccl-tests to load
    assert sorted(os.listdir(tcpx.TARGET)) == ["libnccl-net.so"]
    tcpx.main(["install", "--install-nccl"])
    for name in families.FAMILIES["a3-high"]["plugin"]["files"]:
        assert "STAND-IN" in open(os.path.join(tcpx.TARGET, name)).read(), name
    assert os.readlink(os.path.join(tcpx.TARGET, "libnccl.so")) == "libnccl.so.2"
    assert "NCCL from the TCPX installer" in open(os.path.join(tcpx.TARGET, "libnccl-net.so")).read()
    assert families.FAMILIES["a3-high"]["plugin"]["install_args"] == ["install", "--install-nccl"]


def test_installer_writes_every_file_the_table_expects(installer):
    installer.main(["install", "--install-nccl"])
    lib = installer.TARGET
    for name in families.FAMILIES["a3-mega"]["plugin"]["files"]:
        path = os.path.join(lib, name)
        assert os.path.exists(path), name
        assert "STAND-IN" in open(path).read()
    assert os.readlink(os.path.join(lib, "nccl-env-profile-ll128.sh")) == "nccl-env-profile.sh"


def test_gib_installer_lays_out_the_tables_files(tmp_path, monkeypatch):
    gib = _installer(tmp_path, monkeypatch, "gib")
    gib.main(["install", "--install-nccl"])
    for name in families.FAMILIES["a4"]["plugin"]["files"] + ["lib64/libnccl.so.2"]:
        assert "STAND-IN" in open(os.path.join(gib.TARGET, name)).read(), name
    script = open(os.path.join(gib.TARGET, "scripts", "set_nccl_env.sh")).read()
    config = open(os.path.join(gib.TARGET, "configs", "guest_config.txtpb")).read()
    # the checker enforces exactly what the script exports
    for key, value in gib.GIB_ENV:
        assert "export %s=%s" % (key, value) in script
        assert key == "NCCL_NET" or 'enforced { key: "%s" value: "%s" }' % (key, value) in config


def test_installer_without_install_nccl_leaves_out_nccl(installer):
    installer.main(["install"])
    assert not os.path.exists(os.path.join(installer.TARGET, "libnccl.so.2"))


def test_installer_profile_matches_the_documented_values(installer):
    installer.main(["install", "--install-nccl"])
    lib = installer.TARGET
    env, skipped = parse_profile(open(os.path.join(lib, "nccl-env-profile.sh")).read(), {"NCCL_LIB_DIR": lib})
    assert skipped == []
    table = families.FAMILIES["a3-mega"]["nccl_env"]
    for key, value in env.items():
        if key in table:
            assert value == table[key].format(lib_dir=lib, install_dir=os.path.dirname(lib)), key
    # the interface names the real profile assumes (COS names: eth0 control, eth1..eth8 data)
    assert env["NCCL_FASTRAK_IFNAME"] == "eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8"
    assert env["NCCL_FASTRAK_CTRL_DEV"] == "eth0"


def test_installer_refuses_bad_usage(installer, capsys):
    with pytest.raises(SystemExit) as exc:
        installer.main(["install", "--bogus"])
    assert exc.value.code == 1
    assert "unknown option --bogus" in capsys.readouterr().err


def test_standin_images_are_the_tables_images_and_pairs():
    rxdm = yaml.safe_load(open(os.path.join(STANDINS, "rxdm", "standin.yml")))
    inst = dict((v["name"], v) for v in
                yaml.safe_load(open(os.path.join(STANDINS, "nccl_plugin_installer", "standin.yml")))["variants"])
    mega, high = families.FAMILIES["a3-mega"], families.FAMILIES["a3-high"]
    assert set(rxdm["images"]) == {mega["rxdm"]["image"], high["rxdm"]["image"]}
    # every qualified pair of both transports can be pulled
    assert {p["rxdm"] for p in mega["rxdm"]["pairs"] + high["rxdm"]["pairs"]} <= set(rxdm["tags"])
    assert inst["tcpxo"]["images"] == [mega["plugin"]["image"]]
    assert {p["plugin"] for p in mega["rxdm"]["pairs"]} <= set(inst["tcpxo"]["tags"])
    assert inst["tcpx"]["images"] == [high["plugin"]["image"]]
    assert {p["plugin"] for p in high["rxdm"]["pairs"]} <= set(inst["tcpx"]["tags"])
    assert inst["tcpx"]["build_args"] == {"TRANSPORT": "tcpx"}
    gib = families.FAMILIES["a4"]["plugin"]
    assert inst["gib"]["images"] == [gib["image"]] and gib["version"] in inst["gib"]["tags"]


def run_rxdm(args):
    return subprocess.run([sys.executable, os.path.join(STANDINS, "rxdm", "rxdm_standin.py")] + args,
                          capture_output=True, text=True, timeout=30, check=False)


def test_rxdm_standin_rejects_unknown_flags_like_gflags():
    proc = run_rxdm(["--standin_mode=tcpxo", "--num_hops=2", "--gpu_nic_preset=a3vm"])
    assert proc.returncode == 1
    assert "STAND-IN tcpgpudmarxd (TCPXO)" in proc.stdout
    assert "ERROR: unknown command line flag 'gpu_nic_preset'" in proc.stdout


def test_rxdm_standin_without_gpus_or_driver_mount_fails_like_rxdm(monkeypatch):
    # This test process has no GPU and no /usr/local/nvidia/lib64 mount; the stand-in must refuse to start.
    monkeypatch.delenv("GPUDIRECT_STANDIN_GPUS", raising=False)
    proc = run_rxdm(["--standin_mode=tcpxo", "--num_hops=2", "--num_nics=8"])
    assert proc.returncode == 1
    assert any(s in proc.stdout for s in ("no CUDA-capable device is detected", "Operation not permitted",
                                          "no GPU NIC"))
    monkeypatch.setenv("GPUDIRECT_STANDIN_GPUS", "all")
    proc = run_rxdm(["--standin_mode=tcpxo", "--num_hops=2", "--num_nics=8"])
    assert proc.returncode == 1
    assert any(s in proc.stdout for s in ("libcuda.so.1: cannot open shared object file", "Operation not permitted",
                                          "no GPU NIC"))


def test_rxdm_standin_reads_the_topology_files_interfaces(tmp_path):
    rxdm = _load("rxdm_standin", os.path.join(STANDINS, "rxdm", "rxdm_standin.py"))
    topo = tmp_path / "gpu_rxq_configuration.textproto"
    topo.write_text(open(os.path.join(ROOT, "tests", "fixtures", "rxdm",
                                      "a3-high_ubuntu_gpu_rxq_configuration.textproto")).read())
    assert rxdm.topology_ifnames(str(topo)) == ["enp6s0", "enp12s0", "enp134s0", "enp140s0"]


def test_rxdm_standin_finds_libcuda_where_the_loader_would(tmp_path, monkeypatch):
    rxdm = _load("rxdm_standin", os.path.join(STANDINS, "rxdm", "rxdm_standin.py"))
    monkeypatch.setattr(rxdm, "LOADER_DIRS", [str(tmp_path / "nvidia")])
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path / "ld"))
    assert rxdm.find_library("libcuda.so.1") is None
    (tmp_path / "ld").mkdir()
    (tmp_path / "ld" / "libcuda.so.1").write_text("STAND-IN")
    assert rxdm.find_library("libcuda.so.1") == str(tmp_path / "ld" / "libcuda.so.1")


@pytest.mark.parametrize("family", sorted(families.FAMILIES))
def test_standin_replay_peaks_stay_within_what_the_family_can_carry(family):
    sys.path.insert(0, os.path.join(ROOT, "tests", "sandbox"))
    try:
        from sandboxlib import layout  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.pop(0)
    peaks = layout.standin_peaks(family)
    assert set(peaks) == set(families.FAMILIES[family]["nccl_tests"]["collectives"])
    for coll, peak in peaks.items():
        assert 0 < peak <= families.busbw_ceiling_gbps(family, coll), coll
        base = families.baseline(family, coll)
        if base:
            assert peak >= 0.9 * base["busbw_gbps"], coll


def test_nccl_tests_standin_slows_only_jobs_spanning_a_slow_pair_of_sub_blocks():
    standin = _load("nccl_tests_standin", os.path.join(STANDINS, "nccl_tests", "bin", "nccl_tests_standin.py"))
    links = "b0/s0 b1/s1 0.25\nb0/s1 b0/s1 0.1\n"
    assert standin.link_speed(links, {"b0/s0", "b1/s1"}) == 0.25
    assert standin.link_speed(links, {"b0/s0", "b0/s1"}) == 1.0
    assert standin.link_speed(links, {"b0/s1"}) == 1.0
    assert standin.link_speed("b0/s0 b1/s1\n", {"b1/s1", "b0/s0", "b1/s0"}) == 0.5
    assert standin.link_speed("", {"b0/s0", "b1/s1"}) == 1.0


@pytest.mark.parametrize("nodes,blocks,subs", [(2, 1, 1), (5, 1, 1), (6, 2, 4), (8, 2, 4), (16, 2, 4), (9, 2, 4)])
def test_sandbox_nodes_sit_in_blocks_and_sub_blocks(nodes, blocks, subs):
    sys.path.insert(0, os.path.join(ROOT, "tests", "sandbox"))
    try:
        from sandboxlib import layout  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.pop(0)
    placement = layout.topology("t", nodes)
    assert len(set(p["block"] for p in placement)) == blocks
    assert len(set((p["block"], p["subblock"]) for p in placement)) == subs
    sizes = [sum(1 for p in placement if p["subblock"] == s) for s in set(p["subblock"] for p in placement)]
    assert max(sizes) - min(sizes) <= 1
    assert all(len(p["block"]) == len(p["subblock"]) == len(p["host"]) == 32 for p in placement)
    assert len(set(p["host"] for p in placement)) == nodes


def test_rxdm_standin_tunes_the_host_as_the_family_table_says_the_image_does():
    spec = importlib.util.spec_from_file_location("rxdm_standin", os.path.join(STANDINS, "rxdm", "rxdm_standin.py"))
    standin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(standin)
    tuning = families.get_family("a3-mega")["rxdm"]["host_tuning"]
    assert standin.TCPXO_TUNING == tuning["sysctls"]
    assert standin.TCPXO_NIC_TUNING == tuning["nic_sysctls"]


def test_nccl_tests_standin_prints_the_env_nccl_read_through_a_standin_env_plugin(tmp_path, monkeypatch):
    standin = _load("nccl_tests_standin", os.path.join(STANDINS, "nccl_tests", "bin", "nccl_tests_standin.py"))
    for key in [k for k in os.environ if k.startswith("NCCL_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("NCCL_DEBUG", "INFO")
    monkeypatch.setenv("NCCL_DEBUG_SUBSYS", "INIT,NET")
    monkeypatch.setenv("NCCL_BUFFSIZE", "4194304")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path))
    assert standin.env_lines("h:1:1 [0] NCCL INFO ") == []
    monkeypatch.setenv("NCCL_DEBUG_SUBSYS", "INIT,NET,ENV")
    (tmp_path / "libnccl-env.so").write_text("STAND-IN: GCP env plugin\nNCCL_BUFFSIZE=8388608\n")
    lines = standin.env_lines("h:1:1 [0] NCCL INFO ")
    assert lines[0] == "h:1:1 [0] NCCL INFO ENV/Plugin: Using GCP env plugin (v1)"
    assert "h:1:1 [0] NCCL INFO NCCL_BUFFSIZE set by environment to 8388608." in lines
    # parsed as the collection reads real NCCL output
    parsed = nccl_parse.parse("\n".join(lines) + "\n", collective="all_gather")
    assert parsed["env_plugin"] == "GCP env plugin" and parsed["env_set"]["NCCL_BUFFSIZE"] == "8388608"
    monkeypatch.setenv("NCCL_ENV_PLUGIN", "none")
    assert "h:1:1 [0] NCCL INFO NCCL_BUFFSIZE set by environment to 4194304." in standin.env_lines("h:1:1 [0] NCCL INFO ")
