# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""After converge and the side effect: the profile and the env file carry the family's NCCL
settings with the node's real interface names (two GPU NICs renamed enp6s0/enp7s0)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gpudirect.gcp.plugins.module_utils import families

testinfra_hosts = ["ansible://gpu_nodes"]


def _names_by_ip(host):
    out = {}
    for link in json.loads(host.check_output("ip -j -4 addr show")):
        for addr in link.get("addr_info", []):
            out[addr["local"]] = link["ifname"]
    return out


def _env_file(host):
    env = {}
    for line in host.file("/etc/nccl/nccl.env").content_string.splitlines():
        if line and not line.startswith("#"):
            key, _sep, value = line.partition("=")
            env[key] = value
    return env


def _shell_env(host):
    out = host.check_output("env -i bash -c '. /etc/profile.d/nccl-gpudirect.sh && env -0'")
    return dict(item.split("=", 1) for item in out.split("\0") if "=" in item)


def test_interface_names_are_the_nodes(host):
    hv = host.ansible.get_variables()
    by_ip = _names_by_ip(host)
    gpu = [by_ip[nic["ip"]] for nic in hv["gpu_nics"]]
    control = by_ip[hv["gce_nics"][0]["ip"]]
    assert gpu[:2] == ["enp6s0", "enp7s0"]
    env = _env_file(host)
    assert env["NCCL_FASTRAK_IFNAME"] == ",".join(gpu)
    assert env["NCCL_FASTRAK_CTRL_DEV"] == control
    assert env["NCCL_SOCKET_IFNAME"] == control


def test_env_file_has_the_family_settings_and_no_forbidden_var(host):
    fam = families.get_family(host.ansible.get_variables()["gpu_family"])
    env = _env_file(host)
    lib = fam["plugin"]["lib_dir"]
    for key, value in fam["nccl_env"].items():
        assert env[key] == value.format(lib_dir=lib, install_dir=fam["plugin"]["install_dir"]), key
    assert env["LD_LIBRARY_PATH"] == lib
    assert "NCCL_ALGO" not in env
    assert env["NCCL_DEBUG"] == "WARN"


def test_shell_profile_matches_the_env_file(host):
    shell = _shell_env(host)
    env = _env_file(host)
    for key, value in env.items():
        if key != "LD_LIBRARY_PATH":
            assert shell[key] == value, key
    assert shell["LD_LIBRARY_PATH"].split(":")[0] == env["LD_LIBRARY_PATH"]


def test_docker_reads_the_env_file(host):
    fam = families.get_family(host.ansible.get_variables()["gpu_family"])
    image = "%s:%s" % (fam["plugin"]["image"], fam["plugin"]["version"])
    out = host.check_output("docker run --rm --env-file /etc/nccl/nccl.env --entrypoint env %s" % image)
    assert "NCCL_FASTRAK_IFNAME=%s" % _env_file(host)["NCCL_FASTRAK_IFNAME"] in out.splitlines()
