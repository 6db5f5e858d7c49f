# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.filter.rxdm import FilterModule

FILTERS = FilterModule().filters()


def test_flavour_auto_follows_the_distribution():
    cos = FILTERS["_rxdm_run_argv"]("a3-high", "docker", "img:v2.0.12", distribution="Container-Optimized OS")
    deb = FILTERS["_rxdm_run_argv"]("a3-high", "docker", "img:v2.0.12", distribution="Debian")
    assert "a3vm" in cos and "--gpus" not in cos
    assert "manual" in deb and "--gpus" in deb


def test_errors_are_one_line_filter_errors():
    with pytest.raises(AnsibleFilterError, match=r"rxdm_run_argv \(a4\): this family runs no RxDM"):
        FILTERS["_rxdm_run_argv"]("a4", "docker", "img:v1")
    with pytest.raises(AnsibleFilterError, match="unknown GPU family"):
        FILTERS["_rxdm_run_argv"]("h100", "docker", "img:v1")
    with pytest.raises(AnsibleFilterError, match="OS flavour 'windows' unknown"):
        FILTERS["_rxdm_run_argv"]("a3-mega", "docker", "img:v1", flavour="windows")
    with pytest.raises(AnsibleFilterError, match="non-empty list"):
        FILTERS["_systemd_exec_line"]("docker run")


def test_host_paths_filter():
    assert FILTERS["_rxdm_host_paths"]("a3-high", distribution="Ubuntu") == ["/opt/tcpdirect_benchmark", "/run/tcpx"]
    assert FILTERS["_rxdm_host_paths"]("a3-high", flavour="cos", driver_lib_dir="/var/lib/nvidia/lib64") == [
        "/run/tcpx", "/var/lib/nvidia/lib64"]
