# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_versions_info: one call reads every version; a missing component is null and nothing changes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import versions
from ansible_collections.gpudirect.gcp.plugins.modules import gpu_versions_info
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run as run_module


def test_reads_each_component_and_nulls_the_missing(tmp_path, capsys, monkeypatch):
    (tmp_path / "osrelease").write_text("6.8.0-1015-gcp\n")
    (tmp_path / "version.json").write_text('{"cuda": {"version": "12.8.1"}}')
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "libnccl.so.2.27.7").write_text("")
    (tmp_path / "record").write_text('{"tag": "v1.0.15"}')
    (tmp_path / "rxdm.service").write_text("ExecStart=/usr/bin/docker run example/tcpgpudmarxd-dev:v1.0.21\n")
    monkeypatch.setattr(versions, "KERNEL_FILE", str(tmp_path / "osrelease"))
    monkeypatch.setattr(versions, "CUDA_FILE", str(tmp_path / "version.json"))
    out = run_module(gpu_versions_info, {"lib_dirs": [str(lib), str(tmp_path / "none")],
                                         "plugin_record": str(tmp_path / "record"),
                                         "rxdm_unit": str(tmp_path / "rxdm.service"),
                                         "rxdm_image": "example/tcpgpudmarxd-dev",
                                         "sys_dir": str(tmp_path / "no-sys")}, capsys, check_mode=True)
    assert out["changed"] is False
    assert out["versions"] == {"kernel": "6.8.0-1015-gcp", "driver": None, "cuda": "12.8.1", "nccl": "2.27.7",
                               "plugin": "v1.0.15", "rxdm": "v1.0.21"}
    out = run_module(gpu_versions_info, {"lib_dirs": [], "plugin_record": str(tmp_path / "none")}, capsys)
    assert out["versions"]["plugin"] is None and out["versions"]["rxdm"] is None and out["versions"]["nccl"] is None
    # the driver's version file under the sysfs root the shared setting names (a test bed's stand-in)
    (tmp_path / "sys" / "module" / "nvidia").mkdir(parents=True)
    (tmp_path / "sys" / "module" / "nvidia" / "version").write_text("595.71.05\n")
    out = run_module(gpu_versions_info, {"lib_dirs": [], "plugin_record": str(tmp_path / "none"),
                                         "sys_dir": str(tmp_path / "sys")}, capsys)
    assert out["versions"]["driver"] == "595.71.05"
