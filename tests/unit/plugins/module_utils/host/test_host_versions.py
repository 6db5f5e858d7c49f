# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading a node's GPU software versions from its files: absent or unusable is None, never an error."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import versions


def test_plain_files_are_their_first_line_or_none():
    assert versions.first_line("6.8.0-1015-gcp\n") == "6.8.0-1015-gcp"
    assert versions.first_line("\n") is None and versions.first_line(None) is None


def test_cuda_and_plugin_records_are_json():
    assert versions.cuda('{"cuda": {"name": "CUDA SDK", "version": "12.8.1"}}') == "12.8.1"
    assert versions.cuda("{not json") is None and versions.cuda('{"nvcc": {}}') is None and versions.cuda(None) is None
    assert versions.plugin('{"image": "x", "tag": "v1.0.15"}') == "v1.0.15"
    assert versions.plugin("[]") is None and versions.plugin("{") is None and versions.plugin('{"tag": ""}') is None


def test_rxdm_tag_or_digest_from_the_unit():
    image = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev"
    unit = "ExecStart=/usr/bin/docker run --name receive-datapath-manager %s:v1.0.21 --num_hops=2\n" % image
    assert versions.rxdm(unit, image) == "v1.0.21"
    assert versions.rxdm(unit.replace(":v1.0.21", "@sha256:abc"), image) == "sha256:abc"
    assert versions.rxdm(unit, "other/image") is None and versions.rxdm(None, image) is None


def test_nccl_releases_from_library_names(tmp_path):
    (tmp_path / "a").mkdir()
    for name in ["libnccl.so.2.27.7", "libnccl.so.2", "libnccl-net.so", "libnccl.so.2.21.5"]:
        (tmp_path / "a" / name).write_text("")
    names = versions.nccl_names([str(tmp_path / "a"), str(tmp_path / "absent")])
    assert versions.nccl(names) == "2.21.5,2.27.7"
    assert versions.nccl(["libcuda.so.1"]) is None
