# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Installer runs against a fake engine that writes real files into a temporary directory."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl import plugin_installer as pi

IMAGE = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev"
DIGEST = "sha256:" + "b" * 64


class FakeEngine(object):
    """Answers pull / image inspect / rm / run; `run` writes the given files."""

    def __init__(self, lib_dir, writes, digest=DIGEST, run_rc=0):
        self.lib_dir, self.writes, self.digest, self.run_rc = lib_dir, writes, digest, run_rc
        self.calls = []
        self.present = set()

    def __call__(self, argv):
        assert isinstance(argv, list)
        self.calls.append(argv)
        verb = argv[1]
        if verb == "pull":
            self.present.add(argv[2])
            return 0, "pulled\n", ""
        if verb == "image":
            if argv[-1] not in self.present:
                return 125, "", "Error: %s: image not known" % argv[-1]
            return 0, json.dumps(["%s@%s" % (IMAGE, self.digest)]), ""
        if verb == "rm":
            return 1, "", "no such container"
        if verb == "run":
            if self.run_rc:
                return self.run_rc, "", "installer exploded\n"
            os.makedirs(self.lib_dir, exist_ok=True)
            for name in self.writes:
                with open(os.path.join(self.lib_dir, name), "w") as fh:
                    fh.write("x")
            return 0, "installed\n", ""
        raise AssertionError(argv)


def test_install_runs_documented_command_and_returns_record(tmp_path):
    lib = str(tmp_path / "lib64")
    eng = FakeEngine(lib, ["libnccl-net.so", "nccl-env-profile.sh"])
    record, out = pi.install(eng, "docker", IMAGE, "v1.0.17", None, ["install", "--install-nccl"],
                             {"/var/lib": "/var/lib"}, lib, ["libnccl-net.so", "nccl-env-profile.sh"])
    manifest = record.pop("manifest")
    assert record == {"image": IMAGE, "tag": "v1.0.17", "digest": DIGEST,
                      "files": ["libnccl-net.so", "nccl-env-profile.sh"]}
    assert [m["path"] for m in manifest] == ["libnccl-net.so", "nccl-env-profile.sh"]
    assert manifest[0]["sha256"] == pi.sha256(os.path.join(lib, "libnccl-net.so"))
    assert eng.calls[1] == ["docker", "pull", IMAGE + ":v1.0.17"]
    assert eng.calls[-1] == ["docker", "run", "--rm", "--name", "nccl-installer", "--network=host",
                             "-v", "/var/lib:/var/lib", IMAGE + ":v1.0.17", "install", "--install-nccl"]
    assert "installed" in out


def test_missing_files_fail_naming_them(tmp_path):
    lib = str(tmp_path / "lib64")
    eng = FakeEngine(lib, ["libnccl-net.so"])
    with pytest.raises(pi.InstallError, match="lacks libnccl.so.2"):
        pi.install(eng, "docker", IMAGE, "v1.0.17", None, ["install"], {}, lib, ["libnccl-net.so", "libnccl.so.2"])


def test_installer_failure_shows_its_output(tmp_path):
    eng = FakeEngine(str(tmp_path), [], run_rc=3)
    with pytest.raises(pi.InstallError, match="exited 3; last output:\ninstaller exploded"):
        pi.install(eng, "docker", IMAGE, "v1.0.17", None, ["install"], {}, str(tmp_path), [])


def test_pinned_digest_is_pulled_and_enforced(tmp_path):
    eng = FakeEngine(str(tmp_path), ["a"], digest="sha256:" + "c" * 64)
    with pytest.raises(pi.InstallError, match="not the pinned sha256:bbbb"):
        pi.install(eng, "docker", IMAGE, "v1.0.17", DIGEST, ["install"], {}, str(tmp_path), ["a"])
    assert ["docker", "pull", IMAGE + "@" + DIGEST] in eng.calls


def test_record_round_trip_and_up_to_date(tmp_path):
    path = str(tmp_path / ".gpudirect-installed")
    assert pi.read_record(path) is None
    pi.write_record(path, {"image": IMAGE, "tag": "v1.0.17", "digest": DIGEST})
    rec = pi.read_record(path)
    assert pi.up_to_date(rec, IMAGE, "v1.0.17", None)
    assert pi.up_to_date(rec, IMAGE, "v1.0.17", DIGEST)
    assert not pi.up_to_date(rec, IMAGE, "v1.0.15", None)
    assert not pi.up_to_date(rec, IMAGE, "v1.0.17", "sha256:" + "d" * 64)
    assert not pi.up_to_date(None, IMAGE, "v1.0.17", None)
    (tmp_path / "bad").write_text("{not json")
    assert pi.read_record(str(tmp_path / "bad")) is None


def test_image_already_on_the_node_is_not_pulled(tmp_path):
    eng = FakeEngine(str(tmp_path), ["a"])
    eng.present.add(IMAGE + ":v1.0.17")
    pi.install(eng, "docker", IMAGE, "v1.0.17", None, ["install"], {}, str(tmp_path), ["a"])
    assert not [c for c in eng.calls if c[1] == "pull"]


def test_missing_host_side_of_a_mount_is_created_first(tmp_path):
    # podman refuses `-v /usr/local/gib:/var/lib/gib` while /usr/local/gib does not exist; docker would create it
    gib = tmp_path / "usr" / "local" / "gib"
    eng = FakeEngine(str(gib / "lib64"), ["libnccl-net.so"])
    seen = []

    def run(argv):
        if argv[1] == "run":
            seen.append(gib.is_dir())
        return eng(argv)

    pi.install(run, "docker", IMAGE, "v1.1.1", None, ["install", "--install-nccl"], {str(gib): "/var/lib/gib"},
               str(gib / "lib64"), ["libnccl-net.so"])
    assert seen == [True]
