# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""rxdm_image and rxdm_container run as modules against a fake container engine."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.module_utils import basic

from ansible_collections.gpudirect.gcp.plugins.modules import rxdm_container, rxdm_image
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run

REF = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.23"


class Engine(object):
    """Knows images and containers by name; pull adds an image, rm removes a container."""

    def __init__(self, images=(), containers=(), pull_rc=0):
        self.images, self.containers, self.pull_rc = set(images), set(containers), pull_rc
        self.calls = []

    def __call__(self, argv):
        assert isinstance(argv, list)
        self.calls.append(argv[1:])
        if argv[1:3] == ["image", "inspect"]:
            return (0, "sha256:abc\n", "") if argv[-1] in self.images else (125, "", "image not known")
        if argv[1:3] == ["container", "inspect"]:
            return (0, "c0ffee\n", "") if argv[-1] in self.containers else (125, "", "no such container")
        if argv[1] == "pull":
            if self.pull_rc:
                return self.pull_rc, "", "denied: unauthorized\n"
            self.images.add(argv[2])
            return 0, "", ""
        if argv[1] == "rm":
            self.containers.discard(argv[-1])
            return 0, "", ""
        raise AssertionError(argv)


@pytest.fixture
def engine(monkeypatch):
    fake = Engine()
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kw: fake(argv))
    return fake


def test_image_check_mode_says_pull_and_pulls_nothing(engine, capsys):
    out = run(rxdm_image, {"engine": "/usr/bin/docker", "ref": REF}, capsys, check_mode=True, diff=True)
    assert out["changed"] is True and out["pulled"] is True and out["image_id"] is None
    assert "absent" in out["diff"]["before"] and "present" in out["diff"]["after"]
    assert ["pull", REF] not in engine.calls and REF not in engine.images


def test_image_pulled_once_then_unchanged(engine, capsys):
    first = run(rxdm_image, {"engine": "/usr/bin/docker", "ref": REF}, capsys)
    assert first["changed"] is True and first["image_id"] == "sha256:abc"
    second = run(rxdm_image, {"engine": "/usr/bin/docker", "ref": REF}, capsys)
    assert second["changed"] is False and second["pulled"] is False
    assert engine.calls.count(["pull", REF]) == 1


def test_image_pull_failure_is_one_line(monkeypatch, capsys):
    fake = Engine(pull_rc=1)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kw: fake(argv))
    out = run(rxdm_image, {"engine": "/usr/bin/docker", "ref": REF}, capsys)
    assert out["failed"] is True
    assert out["msg"] == "rxdm_image: pulling %s failed (rc=1): denied: unauthorized" % REF


def test_image_without_tag_is_refused(engine, capsys):
    out = run(rxdm_image, {"engine": "/usr/bin/docker", "ref": "img:"}, capsys)
    assert out["failed"] is True and "has no tag or digest" in out["msg"] and engine.calls == []


def test_container_removed_once_and_check_mode_removes_nothing(engine, capsys):
    engine.containers.add("receive-datapath-manager")
    args = {"engine": "/usr/bin/podman", "name": "receive-datapath-manager"}
    checked = run(rxdm_container, args, capsys, check_mode=True)
    assert checked["changed"] is True and "receive-datapath-manager" in engine.containers
    removed = run(rxdm_container, args, capsys)
    assert removed["changed"] is True and removed["container_id"] == "c0ffee"
    assert "receive-datapath-manager" not in engine.containers
    assert run(rxdm_container, args, capsys)["changed"] is False
