# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each missing prerequisite gives exactly its one line; a complete node gives none."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import host_prereqs as H


def which_of(*found):
    return lambda name: "/usr/bin/%s" % name if name in found else None


@pytest.fixture
def node(tmp_path):
    """A complete A3 Mega node under tmp_path: driver version and helper device as stand-in files."""
    (tmp_path / "nvidia-version").write_text("570.172.08\n")
    (tmp_path / "dmabuf").write_text("")
    (tmp_path / "nccl-tests").mkdir()
    (tmp_path / "nccl-tests" / "all_reduce_perf").write_text("")
    return {"path_sources": {H.DRIVER_VERSION_FILE: str(tmp_path / "nvidia-version"),
                             H.DMABUF_HELPER: str(tmp_path / "dmabuf")},
            "nccl_tests_binary_dir": str(tmp_path / "nccl-tests"), "root": str(tmp_path)}


def lines(result):
    return [p["line"] for p in result["problems"]]


def test_complete_node_has_no_problem(node):
    out = H.check("a3-mega", which_of("docker"), pkg_mgr="apt", **node)
    assert out == {"driver_version": "570.172.08", "problems": []}


def test_missing_driver_is_one_line(node, tmp_path):
    (tmp_path / "nvidia-version").unlink()
    out = H.check("a3-mega", which_of("docker"), **node)
    assert out["driver_version"] is None
    assert lines(out) == ["NVIDIA driver: not loaded (/sys/module/nvidia/version missing); use an image with the "
                          "driver (Google's accelerator images, or the cluster-toolkit A3/A4 images) or install it, "
                          "then reboot"]


def test_missing_dmabuf_helper_only_on_a3_mega(node, tmp_path):
    (tmp_path / "dmabuf").unlink()
    out = H.check("a3-mega", which_of("docker"), **node)
    assert [p["what"] for p in out["problems"]] == ["dmabuf import helper"]
    assert "dmabuf-import-helper DKMS package" in out["problems"][0]["fix"]
    assert H.check("a3-high", which_of("docker"), **node)["problems"] == []


def test_dmabuf_module_for_the_running_kernel_is_enough(node, tmp_path):
    (tmp_path / "dmabuf").unlink()
    (tmp_path / "proc" / "sys" / "kernel").mkdir(parents=True)
    (tmp_path / "proc" / "sys" / "kernel" / "osrelease").write_text("6.1.0-28-cloud-amd64\n")
    dkms = tmp_path / "lib" / "modules" / "6.1.0-28-cloud-amd64" / "updates" / "dkms"
    dkms.mkdir(parents=True)
    (dkms / "import-helper.ko").write_text("")
    assert H.check("a3-mega", which_of("docker"), **node)["problems"] == []


def test_no_container_engine_on_tcpx_and_tcpxo_only(node):
    for family in ("a3-high", "a3-mega"):
        assert [p["what"] for p in H.check(family, which_of(), **node)["problems"]] == ["container engine"]
    gib = H.check("a4", which_of(), pkg_mgr="apt", gib_repository_check=False, **node)
    assert gib["problems"] == []


def test_nccl_tests_programs_or_a_build_chain(node, tmp_path):
    (tmp_path / "nccl-tests" / "all_reduce_perf").unlink()
    missing = H.check("a3-mega", which_of("docker"), **node)
    assert [p["what"] for p in missing["problems"]] == ["nccl-tests"]
    assert "all_reduce_perf is missing" in missing["problems"][0]["message"]
    node["nccl_tests_binary_dir"] = None
    no_chain = H.check("a3-mega", which_of("docker"), **node)
    assert "nvcc (the CUDA toolkit), make missing" in no_chain["problems"][0]["message"]
    assert H.check("a3-mega", which_of("docker", "nvcc", "make"), **node)["problems"] == []


def test_gib_repository_apt_and_dnf(node, tmp_path):
    out = H.check("a3-ultra", which_of(), pkg_mgr="apt", **node)
    assert [p["what"] for p in out["problems"]] == ["gIB repository"]
    assert "no apt source names gpudirect-gib-apt" in out["problems"][0]["message"]
    sources = tmp_path / "etc" / "apt" / "sources.list.d"
    sources.mkdir(parents=True)
    (sources / "gib.list").write_text("# deb https://packages.cloud.google.com/apt gpudirect-gib-apt main\n")
    assert H.check("a3-ultra", which_of(), pkg_mgr="apt", **node)["problems"], "a commented line is no source"
    (sources / "gib.list").write_text("deb ar+https://us-apt.pkg.dev/projects/gce-ai-infra gpudirect-gib-apt main\n")
    assert H.check("a3-ultra", which_of(), pkg_mgr="apt", **node)["problems"] == []
    repos = tmp_path / "etc" / "yum.repos.d"
    repos.mkdir(parents=True)
    assert "gpudirect-gib-rpm" in lines(H.check("a4", which_of(), pkg_mgr="dnf", **node))[0]
    (repos / "gib.repo").write_text("[gib]\nbaseurl=https://packages.cloud.google.com/yum/repos/gpudirect-gib-rpm\n")
    assert H.check("a4", which_of(), pkg_mgr="dnf", **node)["problems"] == []
    assert "package manager zypper" in lines(H.check("a4", which_of(), pkg_mgr="zypper", **node))[0]


def test_every_problem_is_one_line(node, tmp_path):
    for name in ("nvidia-version", "dmabuf"):
        (tmp_path / name).unlink()
    node["nccl_tests_binary_dir"] = None
    out = H.check("a3-mega", which_of(), **node)
    assert [p["what"] for p in out["problems"]] == [
        "NVIDIA driver", "dmabuf import helper", "container engine", "nccl-tests"]
    assert all("\n" not in line for line in lines(out))


def test_container_optimized_os_is_refused_in_one_line(node, tmp_path):
    (tmp_path / "etc").mkdir(exist_ok=True)
    (tmp_path / "etc" / "os-release").write_text('NAME="Container-Optimized OS"\nID=cos\nVERSION_ID=121\n')
    out = H.check("a3-high", which_of(), **node)
    assert [p["what"] for p in out["problems"]] == ["guest OS"]
    assert "read-only root" in out["problems"][0]["message"] and "diagnose still reads" in out["problems"][0]["fix"]
    (tmp_path / "etc" / "os-release").write_text('NAME="Debian GNU/Linux"\nID=debian\n')
    assert H.check("a3-high", which_of("docker"), **node)["problems"] == []


@pytest.mark.parametrize("text, refused", [
    ('ID="cos"\n', True), ("ID='cos'\n", True), ("NAME=x\nID=cos\n", True), ("ID_LIKE=cos\nID=ubuntu\n", False),
    ("ID=debian\n", False), ("", False), (None, False), ("garbage without fields", False)])
def test_only_an_os_release_whose_id_is_cos_is_refused(text, refused):
    assert H.refuses_configuration(text) is refused


def test_a_registry_the_node_cannot_reach_is_one_line_naming_it():
    calls = []

    class Conn(object):
        def close(self):
            calls.append("closed")

    def connect(address, timeout):
        calls.append(address)
        if address[0] == "us-docker.pkg.dev":
            raise OSError(110, "Connection timed out")
        return Conn()

    found = H.registries(["us-docker.pkg.dev", "gpudirect-registry.sandbox:5000/x"], connect)
    assert calls == [("us-docker.pkg.dev", 443), ("gpudirect-registry.sandbox", 5000), "closed"]
    assert [p["what"] for p in found] == ["registry"]
    assert found[0]["message"].startswith("us-docker.pkg.dev:443 cannot be reached from the node (Connection timed out)")
    assert "Private Google Access" in found[0]["fix"] and "\n" not in found[0]["line"]


def test_a4x_max_needs_doca_ofed_openibd_and_asapd_lite_and_no_other_family_does(node, tmp_path):
    (tmp_path / "etc" / "apt" / "sources.list.d").mkdir(parents=True)
    (tmp_path / "etc" / "apt" / "sources.list.d" / "gib.list").write_text(
        "deb ar+https://us-apt.pkg.dev/projects/gce-ai-infra gpudirect-gib-apt main\n")
    out = H.check("a4x-max", which_of(), pkg_mgr="apt", **node)
    assert lines(out) == [
        "DOCA-OFED (the doca-ofed package): not installed (no ofed_info command); install it as the family's "
        "images do [CTX]; the phases do not",
        "openibd.service: not enabled; install and enable it as the family's images do [CTX]; the phases do not",
        "asapd-lite.service: not enabled; install and enable it as the family's images do [CTX]; the phases do not"]
    wants = tmp_path / "etc" / "systemd" / "system" / "multi-user.target.wants"
    wants.mkdir(parents=True)
    (wants / "openibd.service").write_text("")
    # a unit file that is there but not enabled is still not enough
    (tmp_path / "etc" / "systemd" / "system" / "asapd-lite.service").write_text("[Unit]\n")
    assert [p["what"] for p in H.check("a4x-max", which_of("ofed_info"), pkg_mgr="apt", **node)["problems"]] == [
        "asapd-lite.service"]
    (wants / "asapd-lite.service").write_text("")
    assert H.check("a4x-max", which_of("ofed_info"), pkg_mgr="apt", **node)["problems"] == []
    assert H.check("a4x", which_of(), pkg_mgr="apt", **node)["problems"] == []
