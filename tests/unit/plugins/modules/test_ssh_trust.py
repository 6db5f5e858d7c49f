# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ssh_trust: one node's side of mpirun's SSH trust in one run, written only where it differs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

import pytest
from ansible.module_utils import basic

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


LIMITED = 'from="10.0.0.2,10.0.0.3",no-agent-forwarding,no-X11-forwarding,no-port-forwarding,no-pty ' + CLUSTER_PUB


def _me():
    import pwd
    return pwd.getpwuid(os.getuid()).pw_name


def test_the_key_is_authorized_from_the_cluster_only_and_a_new_node_widens_the_list(node, capsys):
    ssh_dir = node / "mpi" / ".ssh"
    args = {"ssh_dir": str(ssh_dir), "owner": _me(), "authorized_key": CLUSTER_PUB,
            "authorized_from": ["10.0.0.3", "10.0.0.2"]}
    out = run(ssh_trust, args, capsys, diff=True)
    assert (ssh_dir / "authorized_keys").read_text() == LIMITED + "\n"
    assert out["diff"][0]["after"] == LIMITED + "\n"
    assert run(ssh_trust, args, capsys)["changed"] is False
    grown = run(ssh_trust, dict(args, authorized_from=["10.0.0.2", "10.0.0.3", "10.0.0.4"]), capsys, diff=True)
    assert grown["written"] == [str(ssh_dir / "authorized_keys")]
    assert (ssh_dir / "authorized_keys").read_text() == LIMITED.replace("10.0.0.3", "10.0.0.3,10.0.0.4") + "\n"
    assert grown["diff"][0]["before"] == LIMITED + "\n"


def test_files_go_to_the_owner_and_a_wrong_owner_is_put_right(node, capsys, monkeypatch):
    import pwd
    chowned = []
    real = pwd.getpwnam(_me())
    fake = pwd.struct_passwd(("gpudirect-mpi", "*", 4242, 4243, "", str(node / "mpi"), "/bin/bash"))
    monkeypatch.setattr(pwd, "getpwnam", lambda name: fake if name == "gpudirect-mpi" else real)
    monkeypatch.setattr(os, "chown", lambda path, uid, gid: chowned.append((path, uid, gid)))
    ssh_dir = node / "mpi" / ".ssh"
    out = run(ssh_trust, {"ssh_dir": str(ssh_dir), "owner": "gpudirect-mpi", "authorized_key": CLUSTER_PUB,
                          "known_hosts_path": str(ssh_dir / "kh"), "known_hosts": {"10.0.0.2": "ssh-ed25519 AAAA"}},
              capsys)
    assert out["changed"]
    assert sorted(chowned) == sorted((str(p), 4242, 4243) for p in (ssh_dir, ssh_dir / "authorized_keys", ssh_dir / "kh"))
    # the files are still this user's, not 4242's: every one is put right again, its content untouched
    chowned[:] = []
    again = run(ssh_trust, {"ssh_dir": str(ssh_dir), "owner": "gpudirect-mpi", "authorized_key": CLUSTER_PUB}, capsys)
    assert again["written"] == [str(ssh_dir), str(ssh_dir / "authorized_keys")] and len(chowned) == 2


def test_an_unknown_owner_is_one_line(node, capsys):
    out = run(ssh_trust, {"ssh_dir": str(node / ".ssh"), "owner": "no-such-user-here", "authorized_key": CLUSTER_PUB},
              capsys)
    assert out["failed"] and out["msg"] == "ssh_trust: owner no-such-user-here: no such user on this node"
    assert not (node / ".ssh").exists()


def test_the_root_trust_of_an_earlier_release_is_removed(node, capsys):
    root_ssh = node / "root" / ".ssh"
    root_ssh.mkdir(parents=True)
    (root_ssh / "authorized_keys").write_text("ssh-rsa AAAAB3Other admin\n" + CLUSTER_PUB + "\n")
    for name in ("gpudirect_nccl_tests_ed25519", "gpudirect_nccl_tests_ed25519.pub", "gpudirect_nccl_tests_known_hosts"):
        (root_ssh / name).write_text("x\n")
    old = [str(root_ssh / n) for n in ("gpudirect_nccl_tests_ed25519", "gpudirect_nccl_tests_ed25519.pub",
                                       "gpudirect_nccl_tests_known_hosts")]
    args = {"ssh_dir": str(node / "mpi" / ".ssh"), "owner": _me(), "authorized_key": CLUSTER_PUB,
            "authorized_from": ["10.0.0.2"], "revoke_authorized_keys": str(root_ssh / "authorized_keys"),
            "revoke_comment": "gpudirect-nccl-tests", "absent": old}
    checked = run(ssh_trust, args, capsys, check_mode=True, diff=True)
    assert checked["removed"] == old and all(os.path.exists(p) for p in old)
    assert str(root_ssh / "authorized_keys") in checked["written"]
    out = run(ssh_trust, args, capsys, diff=True)
    assert (root_ssh / "authorized_keys").read_text() == "ssh-rsa AAAAB3Other admin\n"
    assert not any(os.path.exists(p) for p in old) and out["removed"] == old
    assert "c2VjcmV0" not in str(out)
    assert run(ssh_trust, args, capsys)["changed"] is False


def _ssh(monkeypatch, answers, euid=0):
    calls = []

    def fake(self, argv, **kw):
        calls.append(argv)
        return answers.get(argv[-2], (0, "", ""))
    monkeypatch.setattr(basic.AnsibleModule, "run_command", fake)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path",
                        lambda self, name, required=False, opt_dirs=None: "/usr/bin/" + name)
    monkeypatch.setattr(os, "geteuid", lambda: euid)
    return calls


def test_the_probe_logs_in_as_the_mpi_user_and_names_each_refusal(node, capsys, monkeypatch):
    calls = _ssh(monkeypatch, {"10.0.0.3": (255, "", "gpudirect-mpi@10.0.0.3: Permission denied (publickey).\n")})
    out = run(ssh_trust, {"ssh_dir": str(node / ".ssh"), "probe": ["10.0.0.2", "10.0.0.3"],
                          "probe_user": "gpudirect-mpi", "key_path": "/k", "known_hosts_path": "/kh"}, capsys)
    assert out["changed"] is False and not (node / ".ssh").exists()
    assert calls[0][:4] == ["/usr/bin/runuser", "-u", "gpudirect-mpi", "--"]
    assert calls[0][4:] == helper.probe_argv("/usr/bin/ssh", "/k", "/kh", "gpudirect-mpi", "10.0.0.2", 10)
    assert [(x["address"], x["ok"]) for x in out["logins"]] == [("10.0.0.2", True), ("10.0.0.3", False)]
    assert "sshd refuses the key" in out["logins"][1]["reason"] and out["logins"][0]["reason"] is None
    assert not out.get("warnings")


def test_a_root_probe_warns_what_root_trust_means(node, capsys, monkeypatch):
    calls = _ssh(monkeypatch, {})
    out = run(ssh_trust, {"ssh_dir": str(node / ".ssh"), "probe": ["10.0.0.2"], "probe_user": "root",
                          "key_path": "/k", "known_hosts_path": "/kh"}, capsys)
    assert calls[0][0] == "/usr/bin/ssh" and out["logins"][0]["ok"]
    assert any("root on any node" in w for w in out["warnings"])


def test_a_probe_as_another_user_without_root_is_one_line(node, capsys, monkeypatch):
    _ssh(monkeypatch, {}, euid=4242)
    out = run(ssh_trust, {"ssh_dir": str(node / ".ssh"), "probe": ["10.0.0.2"], "probe_user": "no-such-user-here",
                          "key_path": "/k", "known_hosts_path": "/kh"}, capsys)
    assert out["failed"] and out["msg"].startswith("ssh_trust: probe_user no-such-user-here: ")
