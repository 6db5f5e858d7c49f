# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The MPI trust's lines: a key limited to the cluster's addresses, old lines taken out, refusals in words."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import ssh_trust as st

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIClusterKey gpudirect-nccl-tests"
OLD = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOldKey gpudirect-nccl-tests"
ADMIN = "ssh-rsa AAAAB3Admin admin@laptop"
LIMITS = "no-agent-forwarding,no-X11-forwarding,no-port-forwarding,no-pty"


def test_the_key_is_limited_to_the_cluster_addresses_sorted():
    line = st.restricted_line(KEY, ["10.0.0.3", "10.0.0.2", "10.0.0.3"])
    assert line == 'from="10.0.0.2,10.0.0.3",%s %s' % (LIMITS, KEY)


@pytest.mark.parametrize("bad", ["10.0.0.2 x", '10.0.0.2"', "10.0.0.2,10.0.0.3", ""])
def test_an_address_that_would_break_the_from_list_is_named(bad):
    with pytest.raises(st.TrustError, match="authorized_from: .* is not a host address"):
        st.restricted_line(KEY, ["10.0.0.2", bad])


def test_a_restricted_line_splits_into_options_key_and_comment():
    line = 'from="10.0.0.2,10.0.0.3",command="echo a b" %s' % KEY
    assert st.split_line(line) == ('from="10.0.0.2,10.0.0.3",command="echo a b"', "ssh-ed25519",
                                   "AAAAC3NzaC1lZDI1NTE5AAAAIClusterKey", "gpudirect-nccl-tests")
    assert st.split_line(ADMIN) == ("", "ssh-rsa", "AAAAB3Admin", "admin@laptop")
    assert st.split_line("# a comment") is None and st.split_line("  ") is None


def test_a_growing_from_list_replaces_the_line_in_place():
    before = "%s\nfrom=\"10.0.0.2\",%s %s\n" % (ADMIN, LIMITS, KEY)
    wanted = st.restricted_line(KEY, ["10.0.0.2", "10.0.0.4"])
    assert st.authorized_keys_with(before, wanted) == "%s\n%s\n" % (ADMIN, wanted)


def test_an_unrestricted_line_of_the_same_key_is_restricted():
    wanted = st.restricted_line(KEY, ["10.0.0.2"])
    assert st.authorized_keys_with(KEY + "\n", wanted) == wanted + "\n"


def test_the_same_key_and_options_under_another_comment_is_left_alone():
    wanted = st.restricted_line(KEY, ["10.0.0.2"])
    text = wanted.replace("gpudirect-nccl-tests", "renamed") + "\n"
    assert st.authorized_keys_with(text, wanted) == text


def test_an_old_cluster_key_is_replaced_and_another_users_key_kept():
    wanted = st.restricted_line(KEY, ["10.0.0.2"])
    before = "%s\n%s\n" % (OLD, ADMIN)
    assert st.authorized_keys_with(before, wanted) == "%s\n%s\n" % (ADMIN, wanted)


def test_root_trust_of_an_earlier_release_is_taken_out_by_its_comment():
    before = "%s\n%s\n%s\n" % (ADMIN, OLD, 'from="10.0.0.2" ' + KEY)
    assert st.authorized_keys_without(before, "gpudirect-nccl-tests") == ADMIN + "\n"
    assert st.authorized_keys_without(ADMIN + "\n", "gpudirect-nccl-tests") == ADMIN + "\n"
    assert st.authorized_keys_without(None, "gpudirect-nccl-tests") is None


def test_the_login_probe_is_the_ssh_mpirun_runs():
    argv = st.probe_argv("/usr/bin/ssh", "/k", "/kh", "gpudirect-mpi", "10.0.0.2", 7)
    assert argv == ["/usr/bin/ssh", "-o", "BatchMode=yes", "-i", "/k", "-o", "IdentitiesOnly=yes",
                    "-o", "UserKnownHostsFile=/kh", "-o", "StrictHostKeyChecking=yes",
                    "-o", "ConnectTimeout=7", "-l", "gpudirect-mpi", "10.0.0.2", "true"]


@pytest.mark.parametrize("rc, err, why", [
    (0, "", None),
    (255, "gpudirect-mpi@10.0.0.2: Permission denied (publickey).\r\n", "sshd refuses the key"),
    (255, "Host key verification failed.\n", "host key is not the one in"),
    (255, "ssh: connect to host 10.0.0.2 port 22: Connection refused\n", "Connection refused"),
    (1, "This account is currently not available.\n", "This account is currently not available."),
    (255, "", "ssh exited 255"),
])
def test_a_refusal_is_one_line_saying_why(rc, err, why):
    reason = st.login_failure(rc, "Warning: Permanently added x\n" + err, "/kh")
    if why is None:
        assert reason is None
    else:
        assert why in reason and "\n" not in reason
