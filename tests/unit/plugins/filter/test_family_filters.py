# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.filter.family import FilterModule

FILTERS = FilterModule().filters()


def test_family_profile_adds_id():
    prof = FILTERS["family_profile"]("a3-mega")
    assert prof["family"] == "a3-mega" and prof["vpc_mtu"] == 8244


def test_family_profile_unknown_is_one_clear_error():
    with pytest.raises(AnsibleFilterError, match="family_profile: unknown GPU family 'h100'"):
        FILTERS["family_profile"]("h100")


def test_nccl_env_filter():
    out = FILTERS["nccl_env"]("a3-mega", ["eth0"], ["eth1"])
    assert out["env"]["NCCL_FASTRAK_IFNAME"] == "eth1"
    with pytest.raises(AnsibleFilterError, match="unknown GPU family"):
        FILTERS["nccl_env"]("nope", [], [])


INSPECTOR = {"library": "/usr/local/lib/libnccl-profiler-inspector.so", "dump_dir": "/var/lib/nccl-inspector",
             "interval_s": 10}


def test_inspector_goes_on_top_with_its_prometheus_dump_at_30_s_at_least():
    out = FILTERS["nccl_env"]("a4", ["eth0", "eth1"], ["gpu0rdma0"], inspector=INSPECTOR)
    assert out["problems"] == []
    assert {k: v for k, v in out["env"].items() if "PROFILER" in k or "INSPECTOR" in k} == {
        "NCCL_PROFILER_PLUGIN": "/usr/local/lib/libnccl-profiler-inspector.so", "NCCL_INSPECTOR_ENABLE": "1",
        "NCCL_INSPECTOR_PROM_DUMP": "1", "NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS": "30000000",
        "NCCL_INSPECTOR_DUMP_DIR": "/var/lib/nccl-inspector"}


def test_inspector_never_silently_displaces_a_profiler_the_plugin_environment_names():
    base = {"NCCL_PROFILER_PLUGIN": "/usr/local/gib/lib64/libnccl-profiler-comma.so", "NCCL_NET": "gIB"}
    out = FILTERS["nccl_env"]("a4", ["eth0", "eth1"], ["gpu0rdma0"], base=base, inspector=INSPECTOR)
    assert out["env"]["NCCL_PROFILER_PLUGIN"] == base["NCCL_PROFILER_PLUGIN"]
    assert "NCCL_INSPECTOR_ENABLE" not in out["env"]
    assert out["problems"] == [
        "NCCL_PROFILER_PLUGIN is already /usr/local/gib/lib64/libnccl-profiler-comma.so (on gIB images Google's "
        "CoMMA profiler, which feeds Google's straggler detection); NCCL loads one profiler, so Inspector would "
        "displace it: set the displace option to replace it"]
    told = FILTERS["nccl_env"]("a4", ["eth0", "eth1"], ["gpu0rdma0"], base=base,
                               inspector=dict(INSPECTOR, displace="true"))
    assert told["problems"] == [] and told["env"]["NCCL_PROFILER_PLUGIN"] == INSPECTOR["library"]
    kept = FILTERS["nccl_env"]("a4", ["eth0", "eth1"], ["gpu0rdma0"], base=base,
                               inspector=dict(INSPECTOR, displace="false"))
    assert kept["problems"] and "NCCL_INSPECTOR_ENABLE" not in kept["env"]


def test_inspector_without_its_library_or_directory_is_one_line():
    with pytest.raises(AnsibleFilterError, match="nccl_env: inspector needs library and dump_dir"):
        FILTERS["nccl_env"]("a4", ["eth0"], ["gpu0rdma0"], inspector={"library": "/x.so"})


def test_version_pair_error_filter():
    assert FILTERS["_version_pair_error"]("a3-mega", "v1.0.17", "v1.0.23") == ""
    assert "needs plugin v1.0.17" in FILTERS["_version_pair_error"]("a3-mega", "v1.0.14", "v1.0.23")


def test_version_pair_error_warns_about_an_unqualified_pair(monkeypatch):
    warned = []
    monkeypatch.setattr("ansible.utils.display.Display.warning", lambda self, msg, *a, **kw: warned.append(msg))
    assert FILTERS["_version_pair_error"]("a3-high", "v3.1.13", "v2.0.16") == ""
    assert len(warned) == 1 and "plugin v3.1.13 with RxDM v2.0.16" in warned[0] and "unqualified" in warned[0]
    # strict: refused, and no warning
    assert "strict" in FILTERS["_version_pair_error"]("a3-high", "v3.1.13", "v2.0.16", "true")
    assert len(warned) == 1
