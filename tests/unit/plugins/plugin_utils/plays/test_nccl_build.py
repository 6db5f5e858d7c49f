# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The packages a node needs to build nccl-tests: MPI and the headers of the plugin's own NCCL."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import nccl_build


def test_tcpx_builds_against_the_installers_nccl_release():
    out = nccl_build.build_packages("a3-high", "apt", "v3.1.9")
    assert out["packages"] == ["openmpi-bin", "libopenmpi-dev", "libnccl-dev=2.19.3-*"] and out["warning"] is None
    # the current pair's NCCL is not published: unpinned, and said
    newest = nccl_build.build_packages("a3-high", "apt")
    assert newest["packages"][-1] == "libnccl-dev" and "plugin v3.1.12 is not published" in newest["warning"]


@pytest.mark.parametrize("family", ["a3-ultra", "a4", "a4x"])
def test_gib_builds_against_the_pinned_libnccl2(family):
    assert nccl_build.build_packages(family, "apt")["packages"][-1] == "libnccl-dev=2.27.5-1+cuda12.9"
    assert nccl_build.build_packages(family, "dnf")["packages"] == ["openmpi", "openmpi-devel", "libnccl-devel-2.27.5-1"]


def test_unknown_nccl_release_is_said():
    # TCPXO v1.0.16's NCCL is not published; v1.0.17's is
    out = nccl_build.build_packages("a3-mega", "apt", "v1.0.16")
    assert out["packages"][-1] == "libnccl-dev" and "is not published" in out["warning"]
    assert nccl_build.build_packages("a3-mega", "apt")["packages"][-1] == "libnccl-dev=2.28.7-*"


def test_bad_input_is_one_line():
    with pytest.raises(ValueError, match="unknown GPU family 'h100'"):
        nccl_build.build_packages("h100", "apt")
    with pytest.raises(ValueError, match="package manager 'zypper'"):
        nccl_build.build_packages("a4", "zypper")
