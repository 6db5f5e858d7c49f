# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""After converge and the side effect (refusal, v1.0.15 and back, a removed file): the
table's plugin files are in place and the record names the table's version."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gpudirect.gcp.plugins.module_utils import families

testinfra_hosts = ["ansible://gpu_nodes"]


def _plugin(host):
    return families.get_family(host.ansible.get_variables()["gpu_family"])["plugin"]


def test_every_expected_file_is_installed(host):
    plugin = _plugin(host)
    for name in plugin["files"]:
        f = host.file("%s/%s" % (plugin["lib_dir"], name))
        assert f.exists, name
        assert "STAND-IN" in f.content_string, name


def test_record_names_the_installed_version(host):
    plugin = _plugin(host)
    record = json.loads(host.file(plugin["install_dir"] + "/.gpudirect-installed").content_string)
    assert record["image"] == plugin["image"]
    assert record["tag"] == plugin["version"]
    assert record["digest"].startswith("sha256:")
    assert record["files"] == plugin["files"]


def test_profile_is_the_installers(host):
    plugin = _plugin(host)
    text = host.file("%s/nccl-env-profile.sh" % plugin["lib_dir"]).content_string
    assert "export NCCL_FASTRAK_IFNAME=eth1,eth2,eth3,eth4,eth5,eth6,eth7,eth8" in text


def test_no_installer_container_is_left(host):
    assert host.run("docker container exists nccl-installer").rc != 0
