# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every form in which NCCL (2.19 to 2.30) and the GPUDirect net plugins print a value they use.

The lines are NCCL's own format strings with values filled in: src/misc/param.cc ncclLoadParam
("%s set by environment to %lld." and "Invalid value %s for %s, using default %lld."), src/misc/socket.cc
("NCCL_SOCKET_IFNAME set by environment to %s", "NCCL_SOCKET_IFNAME set to %s"), transport/net_ib
("NCCL_IB_HCA set to %s"), graph/paths.cc ("%s set by environment to %s" with a path type name),
init.cc ("Comm config netName reset to NCCL_NET=%s"), the plugin loaders ("NET/Plugin: Loaded net plugin %s
(v%d)", "TUNER/Plugin: Using %s (v%d)", "TUNER/Plugin: Using tuner plugin %s", "PROFILER/Plugin: Loaded %s
(v%d)", "ENV/Plugin: Using %s (v%d)") and the TCPX plugin ("NCCL_GPUDIRECTTCPX_SLOWNESS_SWITCH set by
environment to: %s", "TCPX_GPUDIRECTTCPX_TX_BINDINGS %s", "NET/GPUDirectTCPX : unix client prefix %s").
Values from /etc/nccl.conf or NCCL_CONF_FILE reach NCCL as environment variables (setenv without
overwrite) and print as "set by environment" too: there is no line of their own."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_env_used, nccl_parse, nccl_report

HEAD = "a3u-0:4021:4021 [0] NCCL INFO "
FIX = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "fixtures", "nccl")


def output(*lines):
    return "".join(HEAD + line + "\n" for line in lines) + "# Avg bus bandwidth    : 10.5\n"


def parse(*lines):
    return nccl_parse.parse(output(*lines), collective="all_gather")


def used(family, passed, *lines):
    return nccl_env_used.used(family, parse(*lines), passed)


def load(name):
    with open(os.path.join(FIX, name)) as fh:
        return fh.read()


def test_every_form_nccl_prints_a_value_in_lands_in_the_effective_environment():
    res = parse("NCCL_IB_DISABLE set by environment to 0.",
                "NCCL_SOCKET_IFNAME set by environment to enp0s19",
                "NCCL_IB_HCA set to mlx5_0,mlx5_1",
                "NCCL_OOB_NET_IFNAME set to eth0",
                "TUNER/Plugin: NCCL_TUNER_PLUGIN set to libnccl-tuner.so",
                "NCCL_P2P_LEVEL set by environment to PHB",
                "Comm config netName reset to NCCL_NET=gIB",
                "Comm config graphUsageMode reset to 1 by NCCL_GRAPH_MIXING_SUPPORT=0",
                "NCCL_GPUDIRECTTCPX_SLOWNESS_SWITCH set by environment to: TX_COMP",
                "TCPX_GPUDIRECTTCPX_TX_BINDINGS eth1:8-21,112-125;eth2:8-21,112-125",
                "TCPX_GPUDIRECTTCPX_RX_IRQ_BINDINGS (null)",
                "NET/GPUDirectTCPX : unix client prefix /run/tcpx")
    assert res["env_set"] == {
        "NCCL_IB_DISABLE": "0", "NCCL_SOCKET_IFNAME": "enp0s19", "NCCL_IB_HCA": "mlx5_0,mlx5_1",
        "NCCL_OOB_NET_IFNAME": "eth0", "NCCL_TUNER_PLUGIN": "libnccl-tuner.so", "NCCL_P2P_LEVEL": "PHB",
        "NCCL_NET": "gIB", "NCCL_GRAPH_MIXING_SUPPORT": "0", "NCCL_GPUDIRECTTCPX_SLOWNESS_SWITCH": "TX_COMP",
        "NCCL_GPUDIRECTTCPX_TX_BINDINGS": "eth1:8-21,112-125;eth2:8-21,112-125",
        "NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX": "/run/tcpx"}
    assert res["env_differs"] == []


def test_a_value_nccl_rejected_is_the_default_it_used_and_a_warning():
    res = parse("Invalid value 99999999999999999999 for NCCL_BUFFSIZE, using default 4194304.")
    assert res["env_set"] == {"NCCL_BUFFSIZE": "4194304"}
    assert res["env_invalid"] == {"NCCL_BUFFSIZE": "99999999999999999999"}
    got = nccl_env_used.used("a3-ultra", res, {"NCCL_BUFFSIZE": "99999999999999999999"})
    assert got["effective"]["NCCL_BUFFSIZE"]["source"] == "NCCL default"
    assert [(c["severity"], c["subject"]) for c in got["conflicts"]] == [("warn", "NCCL_BUFFSIZE")]
    assert "NCCL could not read" in got["conflicts"][0]["cause"] and "default 4194304" in got["conflicts"][0]["cause"]


@pytest.mark.parametrize("line, kind, name, version", [
    ("NET/Plugin: Loaded net plugin gIB (v8)", "net", "gIB", 8),
    ("NET/Plugin: Loaded net plugin GPUDirectTCPX_v7 (v7)", "net", "GPUDirectTCPX_v7", 7),
    ("NET/Plugin: Loaded collnet plugin SHARP (v9)", "collnet", "SHARP", 9),
    ("NET/Plugin: Loaded coll plugin SHARP (v6)", "collnet", "SHARP", 6),
    ("NET/Plugin: Loaded gin plugin GIN_IB (v11)", "gin", "GIN_IB", 11),
    ("GIN/Plugin: Loaded gin plugin GIN_IB (v13)", "gin", "GIN_IB", 13),
    ("TUNER/Plugin: Using A3xTunerPlugin_v2 (v3)", "tuner", "A3xTunerPlugin_v2", 3),
    ("TUNER/Plugin: Using tuner plugin A3xTunerPlugin_v2", "tuner", "A3xTunerPlugin_v2", None),
    ("Using tuner plugin: 'Example'", "tuner", "Example", None),
    ("PROFILER/Plugin: Loaded CoMMA (v5)", "profiler", "CoMMA", 5),
    ("PROFILER/Plugin: loaded CoMMA", "profiler", "CoMMA", None),
    ("PROFILER/Plugin: loaded ncclProfiler_v2.", "profiler", None, 2),
    ("ENV/Plugin: Using GCP env plugin (v1)", "env", "GCP env plugin", 1),
    ("NET/Plugin: Using internal network plugin.", "net", "internal", None),
    ("TUNER/Plugin: Using internal tuner plugin.", "tuner", "internal", None),
    ("NET/Plugin: Could not find: libnccl-net.so", "net", "internal", None),
    ("NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file No plugin found (libnccl-net.so), "
     "using internal implementation", "net", "internal", None),
])
def test_each_plugin_and_its_interface_version_as_each_nccl_version_prints_it(line, kind, name, version):
    res = parse(line)
    assert res["plugins"] == {kind: {"name": name, "version": version}}


def test_a_plugin_loaded_after_a_name_nccl_could_not_find_is_the_one_used():
    res = parse("NET/Plugin: Could not find: libnccl-net-gIB.so", "NET/Plugin: Loaded net plugin gIB (v10)",
                "NET/Plugin: Loaded net plugin other (v9)")
    assert res["plugins"]["net"] == {"name": "gIB", "version": 10}


def test_the_plugins_and_the_network_are_part_of_the_effective_environment():
    got = used("a3-ultra", {}, "NET/Plugin: Loaded net plugin gIB (v10)", "TUNER/Plugin: Using gIB tuner (v4)",
               "ENV/Plugin: Using GCP env plugin (v1)", "Using network gIB")
    assert got["plugins"] == {"net": {"name": "gIB", "version": 10}, "tuner": {"name": "gIB tuner", "version": 4},
                              "env": {"name": "GCP env plugin", "version": 1}}
    assert got["network"] == "gIB" and got["plugin"] == "GCP env plugin"
    merged = nccl_env_used.merged([None, got])
    assert merged["plugins"] == got["plugins"] and merged["network"] == "gIB"


@pytest.mark.parametrize("name, passed, printed", [
    ("NCCL_IB_DISABLE", "00", "0"),              # ncclLoadParam prints the number strtoll read
    ("NCCL_BUFFSIZE", "0x800000", "8388608"),
    ("NCCL_IB_DISABLE", " 1", "1"),
    ("NCCL_NVLS_ENABLE", "010", "8"),            # base 0: a leading 0 is octal
    ("NCCL_SOCKET_IFNAME", "eth1 ", "eth1"),     # trailing blanks
    ("NCCL_SOCKET_IFNAME", "eth1,eth2", "eth2,eth1"),   # NCCL matches each interface against the list
    ("NCCL_SOCKET_IFNAME", "^lo,docker0", "^docker0,lo"),
    ("NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1", "=mlx5_1:1,mlx5_0:1"),
    ("NCCL_P2P_LEVEL", "3", "PHB"),              # old numeric levels
    ("NCCL_NET_GDR_LEVEL", "4", "SYS"),
    ("NCCL_NET_GDR_LEVEL", "PIX", "PIX"),
])
def test_equivalent_spellings_of_one_value_are_no_conflict(name, passed, printed):
    got = used("a3-mega", {name: passed}, "%s set by environment to %s." % (name, printed))
    assert got["conflicts"] == [], got["conflicts"]
    assert got["effective"][name]["source"] == "profile"


@pytest.mark.parametrize("name, passed, printed", [
    ("NCCL_IB_DISABLE", "1", "0"),
    ("NCCL_NVLS_ENABLE", "true", "0"),           # NCCL reads numbers: "true" is 0 to it
    ("NCCL_SOCKET_IFNAME", "eth1,eth2", "eth1, eth2"),  # NCCL does not trim a list item: " eth2" is another name
    ("NCCL_SOCKET_IFNAME", "eth1", "=eth1"),     # exact match vs prefix match
    ("NCCL_SOCKET_IFNAME", "^lo", "lo"),
    ("NCCL_GPUDIRECTTCPX_SOCKET_IFNAME", "eth1,eth2", "eth2,eth1"),  # the plugin's order is its NIC order
    ("NCCL_P2P_LEVEL", "2", "PHB"),
    ("NCCL_NET_GDR_LEVEL", "pix", "PIX"),        # strcmp: the name is case sensitive
])
def test_a_real_difference_is_still_a_conflict(name, passed, printed):
    got = used("a3-mega", {name: passed}, "%s set by environment to %s." % (name, printed))
    assert [(c["severity"], c["subject"]) for c in got["conflicts"]] == [("warn", name)]


def test_ranks_that_print_one_value_in_two_spellings_do_not_differ():
    res = nccl_parse.parse(output("NCCL_SOCKET_IFNAME set by environment to eth1,eth2")
                           + "a3u-1:77:77 [0] NCCL INFO NCCL_SOCKET_IFNAME set to eth2,eth1\n")
    assert res["env_differs"] == []


def test_a_family_breaking_value_is_caught_in_any_spelling():
    got = used("a4x", {"NCCL_CUMEM_ENABLE": "00"}, "NCCL_CUMEM_ENABLE set by environment to 0.")
    assert ("fail", "NCCL_CUMEM_ENABLE") in [(c["severity"], c["subject"]) for c in got["conflicts"]]


def test_the_recorded_gib_run_reads_every_form():
    res = nccl_parse.parse(load("synthetic_v2.27_gib_env_forms.txt"), collective="all_gather")
    assert res["ok"] is True
    assert res["plugins"]["net"] == {"name": "gIB", "version": 10}
    assert res["plugins"]["tuner"] == {"name": "A3xTunerPlugin_v2", "version": None}
    assert res["plugins"]["profiler"] == {"name": "CoMMA", "version": None}
    assert res["env_set"]["NCCL_IB_HCA"] == "=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7"
    assert res["env_set"]["NCCL_NET_GDR_LEVEL"] == "PIX" and res["env_set"]["NCCL_IB_GID_INDEX"] == "3"
    assert res["env_differs"] == []


def test_the_report_shows_the_plugins_and_the_network_in_json_and_html():
    got = used("a3-ultra", {}, "NET/Plugin: Loaded net plugin gIB (v10)", "PROFILER/Plugin: Loaded p token=sec9 (v5)",
               "Using network gIB", "NCCL_IB_GID_INDEX set by environment to 3.")
    report = nccl_report.build_report({"collectives": [], "nccl_env": got}, "r1")
    assert report["nccl_env"]["plugins"]["net"] == {"name": "gIB", "version": 10}
    assert report["nccl_env"]["network"] == "gIB"
    html = nccl_report.to_html(report)
    assert "<tr><td>net</td><td>gIB</td><td>v10</td></tr>" in html and "Network: gIB" in html
    for text in (html, nccl_report.to_json(report), json.dumps(got)):
        assert "sec9" not in text
    # an older result without them still renders
    old = nccl_report.build_report({"collectives": [], "nccl_env": {"effective": got["effective"], "plugin": None,
                                                                    "conflicts": []}}, "r1")
    assert old["nccl_env"]["plugins"] == {} and "NCCL environment as NCCL used it" in nccl_report.to_html(old)


def test_hostile_values_cost_nothing_but_their_own_line():
    huge = "9" * 5000
    res = parse("NCCL_BUFFSIZE set by environment to %s." % huge, "NCCL_P2P_LEVEL set by environment to %s" % huge,
                "Invalid value %s for NCCL_NTHREADS, using default 512." % huge,
                "NCCL_SOCKET_IFNAME set by environment to eth0", "TUNER/Plugin: Using " + " " * 20000 + "x")
    assert not [e for e in res["errors"] if "parser error" in e] and res["env_set"]["NCCL_SOCKET_IFNAME"] == "eth0"
    got = nccl_env_used.used("a3-mega", res, {"NCCL_BUFFSIZE": huge + "0", "NCCL_P2P_LEVEL": "\u00b2"})
    assert [c["subject"] for c in got["conflicts"]] == ["NCCL_BUFFSIZE", "NCCL_NTHREADS", "NCCL_P2P_LEVEL"]
    assert nccl_parse.same_value("NCCL_P2P_LEVEL", "\u00b2", "SYS") is False
