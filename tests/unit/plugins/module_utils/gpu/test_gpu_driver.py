# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the NVIDIA driver is, on COS-style and Ubuntu-style nodes (fake roots)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import gpu_driver


def _node(root, libcuda_dirs=(), commands=()):
    for d in libcuda_dirs:
        os.makedirs(os.path.join(str(root), d.lstrip("/")), exist_ok=True)
        open(os.path.join(str(root), d.lstrip("/"), "libcuda.so.1"), "w").close()
    return lambda name: "/usr/bin/%s" % name if name in commands else None


def test_cos_mounts_its_driver_directory_and_passes_devices(tmp_path):
    which = _node(tmp_path, ["/var/lib/nvidia/lib64"])
    found = gpu_driver.find(which, root=str(tmp_path))
    assert found["source"] == gpu_driver.COS and found["mount"] == "/var/lib/nvidia/lib64"
    assert found["gpus_flag"] is False and "passed as devices" in found["summary"]


def test_ubuntu_with_the_toolkit_mounts_nothing(tmp_path):
    which = _node(tmp_path, ["/usr/lib/x86_64-linux-gnu"], ["nvidia-container-runtime-hook"])
    found = gpu_driver.find(which, root=str(tmp_path))
    assert found["source"] == gpu_driver.TOOLKIT and found["mount"] is None and found["gpus_flag"] is True
    assert found["host_lib_dir"] == "/usr/lib/x86_64-linux-gnu"
    assert "injected by the NVIDIA container toolkit (/usr/bin/nvidia-container-runtime-hook)" in found["summary"]


def test_cdi_spec_counts_as_the_toolkit(tmp_path):
    os.makedirs(str(tmp_path / "etc" / "cdi"))
    open(str(tmp_path / "etc" / "cdi" / "nvidia.yaml"), "w").close()
    found = gpu_driver.find(_node(tmp_path), root=str(tmp_path))
    assert found["source"] == gpu_driver.TOOLKIT and found["container_toolkit"] == "/etc/cdi/nvidia.yaml"


def test_packaged_driver_without_toolkit_is_mounted_from_its_directory(tmp_path):
    found = gpu_driver.find(_node(tmp_path, ["/usr/lib/aarch64-linux-gnu"]), root=str(tmp_path))
    assert found["source"] == gpu_driver.HOST and found["mount"] == "/usr/lib/aarch64-linux-gnu"
    assert found["gpus_flag"] is False


def test_no_driver_says_where_it_looked(tmp_path):
    found = gpu_driver.find(_node(tmp_path), root=str(tmp_path))
    assert found["source"] is None and found["mount"] is None
    assert "no libcuda.so.1 in /var/lib/nvidia/lib64, /usr/lib/x86_64-linux-gnu" in found["summary"]
