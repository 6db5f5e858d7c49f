# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Internal consistency of the machine-family table."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import subprocess
import sys

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils import families as F
from ansible_collections.gpudirect.gcp.plugins.module_utils.host import topology

EXPECTED = {
    "a3-high": ("a3-highgpu-8g", "tcpx"),
    "a3-edge": ("a3-edgegpu-8g", "tcpx"),
    "a3-mega": ("a3-megagpu-8g", "tcpxo"),
    "a3-ultra": ("a3-ultragpu-8g", "gib"),
    "a4": ("a4-highgpu-8g", "gib"),
    "a4x": ("a4x-highgpu-4g", "gib"),
    "a4x-max": ("a4x-maxgpu-4g-metal", "gib"),
}
REQUIRED = ("machine_type", "transport", "arch", "gpu", "nics", "rdma_devices", "vpc_mtu", "max_vm_gbps",
            "rxdm", "plugin", "nccl_env", "nccl_env_ifaces", "nccl_env_bindings", "nccl_env_forbidden",
            "host", "baselines", "avg_busbw_floor", "nccl_tests", "source", "floors", "gib_release")


def test_every_family_with_its_machine_type_and_transport():
    assert set(F.FAMILIES) == set(EXPECTED)
    for name, (machine_type, transport) in EXPECTED.items():
        fam = F.FAMILIES[name]
        assert fam["machine_type"] == machine_type
        assert fam["transport"] == transport
        assert F.family_for_machine_type(machine_type) == name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_field_is_present(name):
    missing = [k for k in REQUIRED if k not in F.FAMILIES[name]]
    assert not missing, "%s lacks %s" % (name, missing)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_nic_counts_match_name_lists(name):
    nics = F.FAMILIES[name]["nics"]
    assert nics["count"] == len(nics["nic_types"])
    for flavour in F.OS_FLAVOURS:
        assert len(nics["guest_names"][flavour]) == nics["count"], (name, flavour)
    indexes = nics["gpu_indexes"] + nics["host_indexes"]
    assert sorted(indexes) == list(range(nics["count"])), "every NIC is either GPU or host"
    assert 0 in nics["host_indexes"], "nic0 is the control NIC"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_transport_specific_pieces(name):
    fam = F.FAMILIES[name]
    gpu_types = set(fam["nics"]["nic_types"][i] for i in fam["nics"]["gpu_indexes"])
    if fam["transport"] == "gib":
        assert fam["rxdm"] is None, "RDMA families run no RxDM"
        assert gpu_types == {"MRDMA"}
        assert len(fam["rdma_devices"]) == len(fam["nics"]["gpu_indexes"])
        assert fam["vpc_mtu"] == 8896
    else:
        assert fam["rxdm"]["image"].startswith("us-docker.pkg.dev/")
        assert gpu_types == {"GVNIC"}
        assert fam["rdma_devices"] == []
        assert fam["gpu"]["count"] == len(fam["nics"]["gpu_indexes"]) * (8 // len(fam["nics"]["gpu_indexes"]))


@pytest.mark.parametrize("name", [n for n in EXPECTED if F.FAMILIES[n]["rxdm"]])
def test_rxdm_default_is_the_newest_qualified_pair(name):
    fam = F.FAMILIES[name]
    pairs = fam["rxdm"]["pairs"]
    assert (pairs[0]["rxdm"], pairs[0]["plugin"]) == (fam["rxdm"]["version"], fam["plugin"]["version"])
    assert F.judge_versions(name, fam["plugin"]["version"], fam["rxdm"]["version"]) == {
        "verdict": "qualified", "message": ""}
    for pair in pairs + fam["rxdm"]["bad_pairs"]:
        assert re.match(r"^v\d+\.\d+\.\d+$", pair["rxdm"]) and re.match(r"^v\d+\.\d+\.\d+$", pair["plugin"])
        # every pair names where it comes from and when
        assert pair["source"] and pair["date"]
    # one plugin per RxDM, one RxDM per plugin
    assert len({p["rxdm"] for p in pairs}) == len(pairs) == len({p["plugin"] for p in pairs})


def refused(name, plugin_version, rxdm_version, strict=False):
    """The reason the table refuses the pair, else None."""
    result = F.judge_versions(name, plugin_version, rxdm_version, strict=strict)
    return result["message"] if result["verdict"] == "refused" else None


def test_current_tcpx_pair_is_qualified():
    assert F.judge_versions("a3-high", "v3.1.12", "v2.0.15")["verdict"] == "qualified"
    assert F.judge_versions("a3-high", "v3.1.9", "v2.0.12")["verdict"] == "qualified"
    assert refused("a3-edge", "v3.1.12", "v2.0.15") is None


def test_mismatch_of_two_known_versions_is_refused_naming_both_partners():
    msg = refused("a3-mega", "v1.0.15", "v1.0.23")
    assert "RxDM v1.0.23 needs plugin v1.0.17" in msg and "plugin v1.0.15 needs RxDM v1.0.21" in msg


def test_unknown_pair_is_accepted_unqualified_and_refused_when_strict():
    result = F.judge_versions("a3-mega", "v1.0.18", "v1.0.24")
    assert result["verdict"] == "unqualified"
    assert "plugin v1.0.18 with RxDM v1.0.24" in result["message"] and "v1.0.23" in result["message"]
    assert refused("a3-mega", "v1.0.18", "v1.0.24") is None
    strict = refused("a3-mega", "v1.0.18", "v1.0.24", strict=True)
    assert "not a qualified pair" in strict and "strict" in strict
    # a known RxDM with a newer plugin is new too, not a mismatch
    assert F.judge_versions("a3-high", "v3.1.13", "v2.0.15")["verdict"] == "unqualified"


def test_known_bad_pair_is_refused_even_when_not_strict():
    msg = refused("a3-mega", "v1.0.7", "v1.0.13")
    assert "known bad pair" in msg and "SG PR 235" in msg


def test_families_without_rxdm_have_no_pair():
    assert refused("a4", "anything", "anything", strict=True) is None


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_baselines_below_ceiling_and_have_sources(name):
    for entry in F.FAMILIES[name]["baselines"]:
        assert entry["source"]
        assert entry["bytes"] >= 2 ** 30, "baselines are large-message figures"
        scope = entry.get("scope", "network")
        assert scope in F.SCOPES
        assert 0 < entry["busbw_gbps"] <= F.busbw_ceiling_gbps(name, entry["collective"], scope), entry
    floor = F.FAMILIES[name]["avg_busbw_floor"]
    if floor is not None:
        assert floor["gbps"] < F.busbw_ceiling_gbps(name, floor["collective"])
        # a floor holds only for the message-size window it was set on
        assert floor["minbytes"] == 2 * 2 ** 30 and floor["maxbytes"] == 8 * 2 ** 30
        assert floor["source"].startswith("CHS")


@pytest.mark.parametrize("name", ["a3-mega", "a3-ultra", "a4", "a4x"])
def test_held_packages_are_the_accelerator_images_nvidia_server_packages(name):
    held = F.FAMILIES[name]["host"]["held_packages"]
    # CT holds the driver's server packages and the fabric manager, never a driver meta-package
    for pattern in ("nvidia-fabricmanager-*", "libnvidia-compute-*-server", "nvidia-utils-*-server"):
        assert pattern in held
    assert not [p for p in held if p.startswith(("nvidia-driver-", "cuda-toolkit"))]


@pytest.mark.parametrize("name", ["a3-ultra", "a4", "a4x"])
def test_gib_families_run_as_many_iterations_as_the_peers(name):
    assert F.FAMILIES[name]["nccl_tests"]["iters"] >= 100


def test_a4x_judges_nvlink_domain_and_network_pairs_apart():
    assert F.baseline("a4x", "all_gather", "nvlink_domain")["busbw_gbps"] == 454.0
    assert F.baseline("a4x", "all_gather") is None  # no published network figure
    assert F.FAMILIES["a4x"]["avg_busbw_floor"]["gbps"] == 160.0
    assert F.has_nvlink_domains("a4x") and not F.has_nvlink_domains("a4")
    assert F.nvlink_domain("a4x", {"block": "b1", "subblock": "s2", "host": "h"}) == "b1/s2"
    assert F.nvlink_domain("a4x", topology.normalize({"block": "b1", "subBlock": "s2"})) == "b1/s2"
    assert F.nvlink_domain("a4x", {}) is None and F.nvlink_domain("a4", {"block": "b", "subblock": "s"}) is None


def test_a4x_max_has_nvlink_domains_though_no_baseline_is_published():
    # its GPUs join a multi-node NVLink fabric: IMEX and the NVLink-domain scope follow from that, not from figures
    assert F.FAMILIES["a4x-max"]["baselines"] == [] and F.has_nvlink_domains("a4x-max")
    assert F.nvlink_domain("a4x-max", {"block": "b1", "subblock": "s2"}) == "b1/s2"
    assert F.baseline("a4x-max", "all_gather", "nvlink_domain") is None


def test_a4x_guest_names_are_the_arm64_images():
    assert F.FAMILIES["a4x"]["nics"]["guest_names"]["ubuntu"] == [
        "enp0s1", "enp192s1", "gpu0rdma0", "gpu1rdma0", "gpu2rdma0", "gpu3rdma0"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_default_nccl_tests_collectives_are_known(name):
    tests = F.FAMILIES[name]["nccl_tests"]
    assert tests["collectives"]
    for coll in tests["collectives"]:
        assert coll in ("all_gather", "all_reduce", "reduce_scatter", "alltoall", "broadcast", "sendrecv")


def test_ceiling_uses_gpu_nics():
    assert F.busbw_ceiling_gbps("a3-mega") == 200.0
    assert F.busbw_ceiling_gbps("a3-high") == 100.0
    assert F.busbw_ceiling_gbps("a3-ultra") == 400.0
    assert F.busbw_ceiling_gbps("a4", "all_reduce") == 800.0


def test_get_family_is_a_copy_and_rejects_unknown():
    fam = F.get_family("a3-mega")
    fam["vpc_mtu"] = 1
    assert F.FAMILIES["a3-mega"]["vpc_mtu"] == 8244
    with pytest.raises(F.FamilyError, match="unknown GPU family 'a9'"):
        F.get_family("a9")


def test_machine_type_urls_and_unknown_types():
    url = "https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a/machineTypes/a3-megagpu-8g"
    assert F.family_for_machine_type(url) == "a3-mega"
    assert F.family_for_machine_type("n2-standard-8") is None
    assert F.family_for_machine_type(None) is None


def test_render_env_uses_real_interface_names():
    env, problems = F.render_nccl_env("a3-mega", ["enp0s12"], ["g%d" % i for i in range(8)])
    assert problems == []
    assert env["NCCL_FASTRAK_IFNAME"] == ",".join("g%d" % i for i in range(8))
    assert env["NCCL_FASTRAK_CTRL_DEV"] == env["NCCL_SOCKET_IFNAME"] == "enp0s12"
    assert env["NCCL_TUNER_CONFIG_PATH"] == "/var/lib/tcpxo/lib64/a3plus_tuner_config.textproto"
    assert env["LD_LIBRARY_PATH"] == "/var/lib/tcpxo/lib64"
    assert "NCCL_ALGO" not in env


def test_render_env_tcpx_bindings_and_count_mismatch():
    env, problems = F.render_nccl_env("a3-high", ["eth0"], ["eth1", "eth2", "eth3", "eth4"])
    assert problems == []
    assert env["NCCL_GPUDIRECTTCPX_TX_BINDINGS"].startswith("eth1:8-21,112-125;eth2:")
    _env, problems = F.render_nccl_env("a3-high", ["eth0"], ["eth1"])
    assert any("needs 4 GPU interfaces, got 1" in p for p in problems)


def test_render_env_refuses_forbidden_unless_allowed():
    _env, problems = F.render_nccl_env("a3-mega", ["e0"], ["e1"], overrides={"NCCL_ALGO": "Ring"})
    assert any("NCCL_ALGO" in p for p in problems)
    env, problems = F.render_nccl_env("a3-mega", ["e0"], ["e1"], overrides={"NCCL_ALGO": "Ring"},
                                      allow=["NCCL_ALGO"])
    assert problems == [] and env["NCCL_ALGO"] == "Ring"


def test_render_env_gib_sockets_on_both_host_nics():
    env, problems = F.render_nccl_env("a4", ["enp0s19", "enp192s20"], [])
    assert problems == []
    assert env["NCCL_SOCKET_IFNAME"] == "enp0s19,enp192s20"
    assert env["NCCL_TUNER_CONFIG_PATH"] == "/usr/local/gib/configs/tuner_config_a4.txtpb"


@pytest.mark.parametrize("name", ["a3-ultra", "a4", "a4x"])
def test_gib_table_holds_no_copy_of_the_scripts_values(name):
    # values such as NCCL_IB_GID_INDEX or NCCL_P2P_NVL_CHUNKSIZE change per gIB release: they come from
    # the installed set_nccl_env.sh at run time, never from this table
    table = F.FAMILIES[name]["nccl_env"]
    for key in ("NCCL_IB_GID_INDEX", "NCCL_P2P_NVL_CHUNKSIZE", "NCCL_IB_TC", "NCCL_CROSS_NIC"):
        assert key not in table
    base = {"NCCL_IB_GID_INDEX": "5", "NCCL_P2P_NVL_CHUNKSIZE": "262144", "NCCL_SOCKET_IFNAME": "eth0"}
    env, problems = F.render_nccl_env(name, ["c0", "c1"], [], base=base)
    assert problems == []
    assert env["NCCL_IB_GID_INDEX"] == "5" and env["NCCL_P2P_NVL_CHUNKSIZE"] == "262144"
    # our additions go on top of the script's: the node's real socket interfaces, the plugin first on the path
    assert env["NCCL_SOCKET_IFNAME"] == "c0,c1" and env["LD_LIBRARY_PATH"] == "/usr/local/gib/lib64"
    assert env["NCCL_NET"] == "gIB"


@pytest.mark.parametrize("name", sorted(F.FAMILIES))
def test_render_env_keeps_jobs_at_warn_unless_asked(name):
    env, _problems = F.render_nccl_env(name, ["c0", "c1"], ["g%d" % i for i in range(8)])
    assert env["NCCL_DEBUG"] == "WARN"
    env, _problems = F.render_nccl_env(name, ["c0", "c1"], ["g0"], overrides={"NCCL_DEBUG": "INFO"})
    assert env["NCCL_DEBUG"] == "INFO"


def test_os_flavour():
    assert F.os_flavour("Container-Optimized OS") == "cos"
    assert F.os_flavour("Debian") == "ubuntu"
    assert F.gpu_nic_names("a3-high", "ubuntu") == ["enp6s0", "enp12s0", "enp134s0", "enp140s0"]


def test_every_source_key_in_the_table_is_in_its_legend():
    with open(F.__file__) as fh:
        text = fh.read()
    legend_text, _sep, body = text.partition('"""\n\nfrom __future__')
    legend = set(re.findall(r"^\s+([A-Z][A-Z0-9]{1,5})\s", legend_text, re.M))
    used = set()
    # citations: [KEY detail; KEY, KEY] in comments, and "source": "KEY detail; KEY" values
    for citation in re.findall(r"\[([^\]]+)\]", body) + re.findall(r'"source": "([^"]+)"', body):
        for part in re.split(r"[;,]", citation):
            word = part.split()[0] if part.split() else ""
            if re.match(r"^[A-Z][A-Z0-9]{1,5}$", word):
                used.add(word)
    assert used and used <= legend, "source keys missing from the legend: %s" % sorted(used - legend)
    assert legend <= used, "legend keys no fact cites: %s" % sorted(legend - used)


# What A3 Edge and A4 resolved to when each was written out in full: the base family's facts with
# these differences and no others.
A3_EDGE_DIFFERS_FROM_A3_HIGH = {
    "machine_type": "a3-edgegpu-8g",
    "max_vm_gbps": 800,
    "baselines": [],
    "avg_busbw_floor": None,
    "faulty_host_report": False,
    "source": "DS, SP (treated as A3 High); GNB",
}
A4_DIFFERS_FROM_A3_ULTRA = {
    "machine_type": "a4-highgpu-8g",
    "gpu": {"model": "nvidia-b200", "count": 8, "cuda_arch": "100", "smi_name": "B200", "nvlinks": 18,
            "fabric_manager": True, "fabric": False, "nvlink_gpu_gbps": 1800.0},
    "nccl_env": {"NCCL_NET": "gIB", "NCCL_TUNER_CONFIG_PATH": "{install_dir}/configs/tuner_config_a4.txtpb"},
    "baselines": [
        {"collective": "all_gather", "bytes": 8589934592, "busbw_gbps": 375.0, "source": "NVM"},
        {"collective": "all_reduce", "bytes": 8589934592, "busbw_gbps": 683.0, "source": "DS gcp.md"},
    ],
    "avg_busbw_floor": {"collective": "all_gather", "gbps": 250.0, "minbytes": 2147483648, "maxbytes": 8589934592,
                        "source": "CHS a4.yaml"},
    "nccl_tests": {"collectives": ["all_gather", "all_reduce"], "minbytes": "256M", "maxbytes": "8G",
                   "stepfactor": 2, "warmup_iters": 5, "iters": 100},
    "source": "CT a4high blueprints; GNB; NVM; DS",
}


@pytest.mark.parametrize("name, base, differences", [("a3-edge", "a3-high", A3_EDGE_DIFFERS_FROM_A3_HIGH),
                                                     ("a4", "a3-ultra", A4_DIFFERS_FROM_A3_ULTRA)])
def test_a_family_declared_on_another_resolves_to_the_base_plus_its_differences(name, base, differences):
    assert F.FAMILIES[name] == dict(F.FAMILIES[base], **differences)
    # and the differences are real ones
    assert all(F.FAMILIES[base][key] != value for key, value in differences.items())


def test_a_derived_family_shares_the_base_objects_and_never_changes_the_base():
    edge, high = F.FAMILIES["a3-edge"], F.FAMILIES["a3-high"]
    assert edge["rxdm"] is high["rxdm"] and edge["nics"] is high["nics"]
    assert F.FAMILIES["a3-ultra"]["gpu"]["model"] == "nvidia-h200-141gb"
    assert F.FAMILIES["a3-ultra"]["nccl_env"]["NCCL_TUNER_CONFIG_PATH"].endswith("tuner_config_a3u.txtpb")


def test_the_family_table_loads_on_its_own_as_the_sandbox_and_doc_tools_load_it():
    # they load the file by path, with no collection on sys.path
    code = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('f', sys.argv[1]); "
            "mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); print(len(mod.FAMILIES))")
    out = subprocess.run([sys.executable, "-S", "-c", code, F.__file__], capture_output=True, text=True, check=False,
                         cwd="/")
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == len(F.FAMILIES)


def test_a_value_known_to_break_the_family_is_refused_unless_forced():
    gpu = ["gpu%drdma0" % i for i in range(4)]
    _env, problems = F.render_nccl_env("a4x", ["enp0s1", "enp192s1"], gpu, overrides={"NCCL_CUMEM_ENABLE": "0"})
    assert len(problems) == 1 and problems[0].startswith("NCCL_CUMEM_ENABLE=0 on a4x turns off CUDA's cuMem")
    env, problems = F.render_nccl_env("a4x", ["enp0s1", "enp192s1"], gpu, overrides={"NCCL_CUMEM_ENABLE": "0"},
                                      allow=["NCCL_CUMEM_ENABLE"])
    assert problems == [] and env["NCCL_CUMEM_ENABLE"] == "0"
    assert F.render_nccl_env("a4x", ["enp0s1", "enp192s1"], gpu, overrides={"NCCL_CUMEM_ENABLE": "1"})[1] == []


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_gib_families_name_googles_release_and_tcp_families_none(name):
    release = F.FAMILIES[name]["gib_release"]
    if F.FAMILIES[name]["transport"] != "gib" or name == "a4x-max":
        assert release is None
        return
    assert release["digest"].startswith("sha256:") and len(release["digest"]) == 7 + 64
    assert release["source"] == "GIBRN" and re.match(r"^\d{4}-\d{2}-\d{2}$", release["date"])
    # the image is the family's own architecture
    assert release["image"].endswith("-arm64:" + release["version"]) == (F.FAMILIES[name]["arch"] == "aarch64")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_nvlink_bandwidth_is_nvidias_figure_or_unknown(name):
    gbps = F.FAMILIES[name]["gpu"].get("nvlink_gpu_gbps", "missing")
    assert gbps is None or gbps in (900.0, 1800.0), (name, gbps)
