# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl.nccl_env_file import check_env, parse_profile

PROFILE = """# comment
export NCCL_FASTRAK_CTRL_DEV=eth0
export NCCL_FASTRAK_IFNAME=eth1,eth2
NCCL_PROTO="Simple,LL128"
export NCCL_TUNER_CONFIG_PATH=${NCCL_LIB_DIR}/a3plus_tuner_config.textproto
export LITERAL='$NCCL_LIB_DIR/x'
export NCCL_DEBUG=WARN # trailing comment
if [ -n "$X" ]; then echo hi; fi
"""


def test_parse_profile_resolves_lib_dir_and_skips_other_lines():
    env, skipped = parse_profile(PROFILE, {"NCCL_LIB_DIR": "/var/lib/tcpxo/lib64"})
    assert env == {
        "NCCL_FASTRAK_CTRL_DEV": "eth0",
        "NCCL_FASTRAK_IFNAME": "eth1,eth2",
        "NCCL_PROTO": "Simple,LL128",
        "NCCL_TUNER_CONFIG_PATH": "/var/lib/tcpxo/lib64/a3plus_tuner_config.textproto",
        "LITERAL": "$NCCL_LIB_DIR/x",
        "NCCL_DEBUG": "WARN",
    }
    assert skipped == ['if [ -n "$X" ]; then echo hi; fi']


def _mega_env(ctrl, gpus):
    env, problems = families.render_nccl_env("a3-mega", ctrl, gpus)
    assert problems == []
    return env


def test_check_env_accepts_a_good_a3_mega_env():
    env = _mega_env(["ens4"], ["ens5", "ens6"])
    existing = {"/var/lib/tcpxo/lib64", "/var/lib/tcpxo/lib64/libnccl-net.so",
                "/var/lib/tcpxo/lib64/a3plus_tuner_config.textproto",
                "/var/lib/tcpxo/lib64/a3plus_guest_config.textproto"}
    fam = families.FAMILIES["a3-mega"]
    assert check_env(env, list(fam["nccl_env_ifaces"]), [], ["lo", "ens4", "ens5", "ens6"],
                     "/var/lib/tcpxo/lib64", "libnccl-net.so", path_exists=existing.__contains__) == []


def test_check_env_names_every_fault():
    env = _mega_env(["eth0"], ["eth1", "eth9"])
    env["LD_LIBRARY_PATH"] = "/usr/lib:/var/lib/tcpxo/lib64"
    env["NCCL_DEBUG"] = "WARN\nINFO"
    fam = families.FAMILIES["a3-mega"]
    problems = check_env(env, list(fam["nccl_env_ifaces"]), [], ["lo", "eth0", "eth1"], "/var/lib/tcpxo/lib64",
                         "libnccl-net.so", path_exists=lambda p: False)
    assert "NCCL_DEBUG: value contains a line break, which env files cannot carry" in problems
    assert "NCCL_FASTRAK_IFNAME names interface eth9, which this node does not have (it has eth0, eth1, lo)" in problems
    assert ("LD_LIBRARY_PATH must start with the plugin directory /var/lib/tcpxo/lib64, "
            "got '/usr/lib:/var/lib/tcpxo/lib64'") in problems
    assert ("NCCL_TUNER_CONFIG_PATH names /var/lib/tcpxo/lib64/a3plus_tuner_config.textproto, "
            "which does not exist on this node") in problems


def test_a_profiler_library_named_by_path_must_exist_and_one_named_for_the_linker_is_not_looked_for():
    env = {"NCCL_PROFILER_PLUGIN": "/usr/local/lib/libnccl-profiler-inspector.so"}
    assert check_env(env, [], [], [], None, path_exists=lambda p: False) == [
        "NCCL_PROFILER_PLUGIN names /usr/local/lib/libnccl-profiler-inspector.so, which does not exist on this node"]
    assert check_env({"NCCL_PROFILER_PLUGIN": "inspector"}, [], [], [], None, path_exists=lambda p: False) == []


def test_check_env_tcpx_bindings_and_missing_plugin():
    env, problems = families.render_nccl_env("a3-high", ["enp0s12"], ["enp6s0", "enp12s0", "enp134s0", "enp140s0"])
    assert problems == []
    fam = families.FAMILIES["a3-high"]
    ifaces = ["enp0s12", "enp6s0", "enp12s0", "enp134s0"]  # enp140s0 missing
    problems = check_env(env, list(fam["nccl_env_ifaces"]), list(fam["nccl_env_bindings"]), ifaces,
                         "/var/lib/tcpx/lib64", "libnccl-net.so", path_exists=lambda p: False)
    assert "NCCL_GPUDIRECTTCPX_TX_BINDINGS names interface enp140s0, which this node does not have" in problems[2]
    assert ("LD_LIBRARY_PATH: plugin directory /var/lib/tcpx/lib64 does not exist (is the plugin installed?)"
            in problems)


def test_check_mode_before_install_skips_plugin_files_only():
    env = _mega_env(["eth0"], ["eth1"])
    problems = check_env(env, ["NCCL_FASTRAK_IFNAME"], [], ["eth0", "eth1"], "/var/lib/tcpxo/lib64",
                         "libnccl-net.so", path_exists=lambda p: False, plugin_missing_ok=True)
    assert problems == []
    env["NCCL_FASTRAK_IFNAME"] = "eth7"
    problems = check_env(env, ["NCCL_FASTRAK_IFNAME"], [], ["eth0", "eth1"], "/var/lib/tcpxo/lib64",
                         "libnccl-net.so", path_exists=lambda p: False, plugin_missing_ok=True)
    assert len(problems) == 1 and "eth7" in problems[0]
