# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ssh_trust: one node's side of mpirun's SSH trust in one run, written only where it differs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import ssh_trust as helper
from ansible_collections.gpudirect.gcp.plugins.modules import ssh_trust
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run

CLUSTER_PUB = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIClusterKey gpudirect-nccl-tests"
HOST_PUB = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHostKey root@node1\n"
PRIVATE = "-----BEGIN OPENSSH PRIVATE KEY-----\nc2VjcmV0LWtleS1ib2R5\n-----END OPENSSH PRIVATE KEY-----\n"


def _mode(path):
    return stat.S_IMODE(os.stat(str(path)).st_mode)


@pytest.fixture
def node(tmp_path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "ssh_host_ed25519_key.pub").write_text(HOST_PUB)
    return tmp_path


def test_authorize_and_read_the_host_key_then_nothing_changes(node, capsys):
    args = {"ssh_dir": str(node / "root" / ".ssh"), "authorized_key": CLUSTER_PUB,
            "host_key_file": str(node / "etc" / "ssh_host_ed25519_key.pub")}
    checked = run(ssh_trust, args, capsys, check_mode=True, diff=True)
    assert checked["changed"] and not (node / "root").exists()
    assert checked["host_key"] == "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHostKey"
    assert checked["diff"][0]["after"] == CLUSTER_PUB + "\n"
    done = run(ssh_trust, args, capsys)
    assert done["written"] == [args["ssh_dir"], args["ssh_dir"] + "/authorized_keys"]
    assert _mode(args["ssh_dir"]) == 0o700 and _mode(args["ssh_dir"] + "/authorized_keys") == 0o600
    again = run(ssh_trust, args, capsys)
    assert again["changed"] is False and again["written"] == [] and again["host_key"] == checked["host_key"]


def test_a_key_already_authorized_with_another_comment_is_left_alone(node, capsys):
    ssh_dir = node / ".ssh"
    ssh_dir.mkdir(mode=0o700)
    os.chmod(str(ssh_dir), 0o700)
    existing = "ssh-rsa AAAAB3Other admin\n" + CLUSTER_PUB.replace("gpudirect-nccl-tests", "renamed") + "\n"
    (ssh_dir / "authorized_keys").write_text(existing)
    os.chmod(str(ssh_dir / "authorized_keys"), 0o600)
    out = run(ssh_trust, {"ssh_dir": str(ssh_dir), "authorized_key": CLUSTER_PUB}, capsys)
    assert out["changed"] is False and (ssh_dir / "authorized_keys").read_text() == existing


def test_known_hosts_and_the_key_are_written_and_the_private_key_never_shown(node, capsys):
    ssh_dir = node / ".ssh"
    args = {"ssh_dir": str(ssh_dir), "known_hosts_path": str(ssh_dir / "known"),
            "known_hosts": {"10.0.0.3": "ssh-ed25519 AAAAB", "10.0.0.2": "ssh-ed25519 AAAAA"},
            "key_path": str(ssh_dir / "id"), "private_key": PRIVATE, "public_key": CLUSTER_PUB}
    out = run(ssh_trust, args, capsys, diff=True)
    assert (ssh_dir / "known").read_text() == "10.0.0.2 ssh-ed25519 AAAAA\n10.0.0.3 ssh-ed25519 AAAAB\n"
    assert (ssh_dir / "id").read_text() == PRIVATE and _mode(ssh_dir / "id") == 0o600
    assert (ssh_dir / "id.pub").read_text() == CLUSTER_PUB + "\n" and _mode(ssh_dir / "id.pub") == 0o644
    assert "c2VjcmV0LWtleS1ib2R5" not in capsys.readouterr().out + str(out)
    assert [d["after_header"] for d in out["diff"]] == [str(ssh_dir / n) for n in ("known", "id", "id.pub")]
    # a mode put right is a change; the same content is not written again
    os.chmod(str(ssh_dir / "id"), 0o644)
    out = run(ssh_trust, args, capsys)
    assert out["written"] == [str(ssh_dir / "id")] and _mode(ssh_dir / "id") == 0o600
    assert run(ssh_trust, args, capsys)["changed"] is False


@pytest.mark.parametrize("args, message", [
    ({"authorized_key": "not a key"}, "ssh_trust: authorized_key does not hold one OpenSSH public key"),
    ({"host_key_file": "/nonexistent/host.pub"}, "ssh_trust: host_key_file /nonexistent/host.pub cannot be read"),
    ({"known_hosts_path": "K", "known_hosts": {"10.0.0.2 x": "ssh-ed25519 AAAA"}},
     "ssh_trust: known_hosts: '10.0.0.2 x' is not a host address"),
])
def test_bad_input_is_one_line_and_writes_nothing(node, capsys, args, message):
    args = dict(args, ssh_dir=str(node / ".ssh"))
    out = run(ssh_trust, args, capsys)
    assert out["failed"] and out["msg"] == message and not (node / ".ssh").exists()


def test_a_directory_where_a_file_goes_is_named(node, capsys):
    (node / ".ssh" / "authorized_keys").mkdir(parents=True)
    out = run(ssh_trust, {"ssh_dir": str(node / ".ssh"), "authorized_key": CLUSTER_PUB}, capsys)
    assert out["failed"] and "authorized_keys is a directory" in out["msg"]


def test_the_helpers():
    assert helper.host_key("# comment\n" + HOST_PUB, "f") == "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHostKey"
    with pytest.raises(helper.TrustError, match="f does not hold one"):
        helper.host_key(HOST_PUB + HOST_PUB, "f")
    assert helper.authorized_keys_with("ssh-rsa AAAA x", CLUSTER_PUB) == "ssh-rsa AAAA x\n" + CLUSTER_PUB + "\n"
    assert helper.authorized_keys_with(None, CLUSTER_PUB) == CLUSTER_PUB + "\n"
    assert helper.known_hosts_text({}) == ""
