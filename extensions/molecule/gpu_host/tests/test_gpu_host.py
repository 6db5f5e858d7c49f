# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_host on an a3-mega sandbox node: what applies is applied, the rest is reported."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

testinfra_hosts = ["ansible://gpu_nodes"]


def _result(host):
    path = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"],
                        "gpu_host_result-%s.json" % host.backend.get_hostname())
    with open(path) as handle:
        return json.load(handle)


def _skipped(host):
    return dict((s["step"], s["reason"]) for s in _result(host)["skipped"])


def test_limits_from_the_family_table(host):
    text = host.file("/etc/security/limits.d/90-gpudirect.conf").content_string
    assert "*    hard    memlock    unlimited" in text
    assert "*    soft    nofile    1048576" in text


def test_optmem_max_persisted_and_applied(host):
    assert "net.core.optmem_max = 131072" in host.file("/etc/sysctl.d/90-gpudirect.conf").content_string
    assert host.file("/proc/sys/net/core/optmem_max").content_string.strip() == "131072"
    assert "net.core.optmem_max=131072 persisted" in " ".join(_result(host)["done"])


def test_aperture_udev_rule_installed(host):
    text = host.file("/etc/udev/rules.d/00-a3-megagpu.rules").content_string
    assert 'ATTR{vendor}=="0x1ae0", ATTR{device}=="0x0084"' in text
    assert "/dev/aperture_devices/%k" in text


def test_missing_kernel_module_is_reported_not_pretended(host):
    assert not host.file("/etc/modules-load.d/import-helper.conf").exists
    reason = _skipped(host)["load kernel module import-helper"]
    assert "no import-helper module for kernel" in reason and "container" in reason


def test_udev_and_devices_reported(host):
    skipped = _skipped(host)
    assert "udev does not run here" in skipped["apply udev rule 00-a3-megagpu.rules now"]
    assert "no 0x1ae0:0x0084 PCI functions on this node" in skipped["aperture devices in /dev/aperture_devices"]


def test_no_driver_means_no_persistenced_override(host):
    assert not host.file("/etc/systemd/system/nvidia-persistenced.service.d/90-gpudirect.conf").exists
    assert "not installed" in _skipped(host)["nvidia-persistenced override"]


def test_installed_package_held_missing_ones_reported(host):
    # the table holds by pattern (nvidia-utils-*-server), as apt-mark does: the installed match is held
    assert host.check_output("dpkg-query -W -f='${Status}' nvidia-utils-580-server").startswith("hold ")
    assert "held package nvidia-utils-580-server" in _result(host)["done"]
    skipped = _skipped(host)
    assert skipped["hold package nvidia-fabricmanager-*"] == "nvidia-fabricmanager-* is not installed"
    assert "hold package nvidia-utils-*-server" not in skipped


def test_container_engine_present(host):
    assert any(d.startswith("container engine ") for d in _result(host)["done"])
