# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import container_engine as ce


def finder(paths, versions):
    return paths.get, (lambda argv: (0, versions[argv[0]], ""))


def test_docker_preferred_and_daemon_unit():
    get, run = finder({"docker": "/usr/bin/docker", "podman": "/usr/bin/podman"},
                      {"/usr/bin/docker": "Docker version 27.3.1, build ce12230\n", "/usr/bin/podman": "podman version 4.3.1"})
    found = ce.find_engine(get, run)
    assert found == {"name": "docker", "path": "/usr/bin/docker", "podman": False,
                     "version": "Docker version 27.3.1, build ce12230", "daemon_unit": "docker.service"}


def test_docker_command_provided_by_podman_has_no_daemon():
    get, run = finder({"docker": "/usr/bin/docker"}, {"/usr/bin/docker": "podman version 4.3.1\n"})
    found = ce.find_engine(get, run)
    assert found["podman"] is True and found["daemon_unit"] is None


def test_podman_fallback_and_missing_engine():
    get, run = finder({"podman": "/usr/bin/podman"}, {"/usr/bin/podman": "podman version 4.3.1"})
    assert ce.find_engine(get, run)["name"] == "podman"
    with pytest.raises(ce.EngineError, match="no container engine found on the node .looked for docker."):
        ce.find_engine(get, run, "docker")
    with pytest.raises(ce.EngineError, match="'lxc' is not supported"):
        ce.find_engine(get, run, "lxc")


def test_image_ref_and_digest():
    assert ce.image_ref("r/i", "v1") == "r/i:v1"
    digest = "sha256:" + "a" * 64
    assert ce.image_ref("r/i", "v1", digest) == "r/i@" + digest
    with pytest.raises(ce.EngineError, match="must look like sha256"):
        ce.image_ref("r/i", "v1", "abc")
    with pytest.raises(ce.EngineError, match="has no tag"):
        ce.image_ref("r/i", "")


def test_repo_digest_parsing():
    out = '["other/x@sha256:111","r/i@sha256:222"]'
    assert ce.parse_repo_digest(out, "r/i") == "sha256:222"
    assert ce.parse_repo_digest(out, "missing/z") == "sha256:111"
    assert ce.parse_repo_digest("null", "r/i") is None
    assert ce.parse_repo_digest("garbage", "r/i") is None


def test_installer_argv_is_the_documented_form():
    argv = ce.installer_argv("docker", "nccl-installer", "img:v1.0.17", {"/var/lib": "/var/lib"},
                             ["install", "--install-nccl"])
    assert argv == ["docker", "run", "--rm", "--name", "nccl-installer", "--network=host", "-v",
                    "/var/lib:/var/lib", "img:v1.0.17", "install", "--install-nccl"]


def test_parse_state():
    assert ce.parse_state("true abc 2026-11-22T15:00:00Z\n") == (True, "abc", "2026-11-22T15:00:00Z")
    assert ce.parse_state("false abc x") == (False, "abc", "x")
    assert ce.parse_state("") == (False, None, None)
