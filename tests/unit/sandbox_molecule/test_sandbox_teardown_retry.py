# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Teardown: a container podman refuses to remove while it stops is tried again."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import sys
import types

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "sandbox"))
from sandboxlib import cluster, common  # noqa: E402  pylint: disable=wrong-import-position
sys.path.pop(0)


class _Podman:
    """Answers `ps` with what is left and refuses the first `refusals` removals."""

    def __init__(self, ids, refusals):
        self.left = list(ids)
        self.refusals = refusals
        self.calls = []

    def __call__(self, *args, **kwargs):
        self.calls.append(args[0])
        if args[0] == "ps":
            return types.SimpleNamespace(stdout=("\n".join(self.left)).encode())
        if self.refusals:
            self.refusals -= 1
            self.left = self.left[1:]  # one went, the other was still stopping
            raise common.SandboxError("podman rm -f failed: Error: cannot remove container")
        self.left = []
        return types.SimpleNamespace(stdout=b"")


@pytest.fixture(autouse=True)
def _no_sleep(monkeypatch):
    monkeypatch.setattr(cluster.time, "sleep", lambda s: None)


def test_a_refused_removal_is_tried_again_with_what_is_left(monkeypatch):
    fake = _Podman(["aaa", "bbb"], refusals=1)
    monkeypatch.setattr(common, "podman", fake)

    assert cluster._remove_containers("unit") == ["aaa", "bbb"]
    assert fake.calls == ["ps", "rm", "ps", "rm"]
    assert fake.left == []


def test_a_removal_refused_every_time_is_one_error(monkeypatch):
    fake = _Podman(["aaa", "bbb", "ccc", "ddd", "eee"], refusals=9)
    monkeypatch.setattr(common, "podman", fake)

    with pytest.raises(common.SandboxError, match="cannot remove container"):
        cluster._remove_containers("unit", attempts=3)
    assert fake.calls.count("rm") == 3


def test_nothing_there_is_nothing_to_remove(monkeypatch):
    fake = _Podman([], refusals=0)
    monkeypatch.setattr(common, "podman", fake)

    assert cluster._remove_containers("unit") == []
    assert fake.calls == ["ps"]


def test_removal_takes_the_nodes_storage_volume_with_it(monkeypatch):
    fake = _Podman(["aaa"], refusals=0)
    seen = []
    monkeypatch.setattr(common, "podman", lambda *a, **k: seen.append(a) or fake(*a, **k))

    cluster._remove_containers("unit")
    assert [a for a in seen if a[0] == "rm"] == [("rm", "-f", "-v", "-t", "0", "aaa")]
