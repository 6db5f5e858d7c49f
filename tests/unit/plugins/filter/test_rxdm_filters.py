# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.filter.rxdm import FilterModule

FILTERS = FilterModule().filters()


def command(family, **spec):
    return FILTERS["_rxdm_command"](family, dict(spec, engine="docker", ref="img:v2.0.12"))


def argv(family, **spec):
    return command(family, **spec)["argv"]


def test_flavour_auto_follows_the_distribution():
    cos = argv("a3-high", distribution="Container-Optimized OS")
    deb = argv("a3-high", distribution="Debian")
    assert "a3vm" in cos and "--gpus" not in cos
    assert "manual" in deb and "--gpus" in deb


def test_errors_are_one_line_filter_errors():
    with pytest.raises(AnsibleFilterError, match=r"_rxdm_command \(a4\): this family runs no RxDM"):
        argv("a4")
    with pytest.raises(AnsibleFilterError, match="unknown GPU family"):
        argv("h100")
    with pytest.raises(AnsibleFilterError, match="OS flavour 'windows' unknown"):
        argv("a3-mega", flavour="windows")
    with pytest.raises(AnsibleFilterError, match=r"_rxdm_command \(a3-mega\): unknown key\(s\) gpu;"):
        argv("a3-mega", gpu=True)
    with pytest.raises(AnsibleFilterError, match="the spec must be a mapping"):
        FILTERS["_rxdm_command"]("a3-mega", ["docker"])
    with pytest.raises(AnsibleFilterError, match="non-empty list"):
        FILTERS["_systemd_exec_line"]("docker run")


def test_host_paths_filter():
    assert command("a3-high", distribution="Ubuntu")["host_paths"] == ["/opt/tcpdirect_benchmark", "/run/tcpx"]
    assert command("a3-high", flavour="cos", driver_lib_dir="/var/lib/nvidia/lib64")["host_paths"] == [
        "/run/tcpx", "/var/lib/nvidia/lib64"]
    # an empty driver directory (the role's "" when the toolkit injects the libraries) mounts nothing
    assert command("a3-high", distribution="Ubuntu", driver_lib_dir="")["host_paths"] == [
        "/opt/tcpdirect_benchmark", "/run/tcpx"]
