#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: ssh_trust
short_description: Set up, take out or prove one node's side of the SSH trust mpirun needs, in one call
version_added: 1.1.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Makes sure O(ssh_dir) exists (mode C(0700)), that C(authorized_keys) in it holds O(authorized_key), and that
    the known-hosts file, the cluster key and its public half hold what they are given, each written only when it
    differs (mode C(0600), the public key C(0644)), and, with O(owner), owned by that user.
  - With O(authorized_from), the key is authorized only for logins from those addresses (C(from=)) and for running
    commands (no agent, X11 or port forwarding, no terminal). A line of the same key with other options (a shorter
    C(from=) list) is replaced in place; a line with the same comment but another key (an older cluster key) is
    taken out.
  - Takes out what an earlier trust left elsewhere (O(revoke_authorized_keys), O(absent)), such as root's.
  - Reads the node's own SSH host key (O(host_key_file)) and returns it, so that the controller can build the
    known-hosts file every node checks the others against.
  - With O(probe), logs in as O(probe_user) to each address with O(key_path) and O(known_hosts_path), as mpirun
    will, and returns whether and why each login failed; it changes nothing. Run as root, it runs ssh as that user
    (C(runuser)). A probe as C(root) warns what root trust means.
options:
  ssh_dir:
    description: The SSH directory of the user mpirun logs in as, for example C(/var/lib/gpudirect-mpi/.ssh).
    type: path
    required: true
  owner:
    description:
      - The user that owns O(ssh_dir) and every file written in it (with that user's group); one that is not owned
        so is given to it. A user that does not exist fails the module naming it.
      - Without it, the files keep the owner they have, or get the module's own.
    type: str
  authorized_key:
    description: A public key line to be in O(ssh_dir)C(/authorized_keys); a line with the same key is enough.
    type: str
  authorized_from:
    description:
      - The addresses O(authorized_key) may log in from (sshd's C(from=)), in any order; the line also carries
        C(no-agent-forwarding), C(no-X11-forwarding), C(no-port-forwarding) and C(no-pty).
    type: list
    elements: str
  host_key_file:
    description: The node's SSH host public key, returned as RV(host_key).
    type: path
  known_hosts_path:
    description: Where the known-hosts file goes (and what O(probe) checks host keys against). Required with
      O(known_hosts).
    type: path
  known_hosts:
    description: The known-hosts entries, the host address to its key (type and body), one line each in the file.
    type: dict
  key_path:
    description: Where the cluster's private key goes; its public half goes to the same path with C(.pub).
    type: path
  private_key:
    description: The cluster's private key. Never shown in the output or a diff.
    type: str
  public_key:
    description: The cluster's public key line, for O(key_path)C(.pub).
    type: str
  revoke_authorized_keys:
    description: An C(authorized_keys) file from which every line whose key carries O(revoke_comment) is taken out,
      for example root's, trusted by an earlier release.
    type: path
  revoke_comment:
    description: The key comment O(revoke_authorized_keys) loses.
    type: str
    default: gpudirect-nccl-tests
  absent:
    description: Files to remove (an earlier key pair and known-hosts file); listed in RV(removed).
    type: list
    elements: path
    default: []
  probe:
    description: Addresses to log in to as O(probe_user) with O(key_path), host keys checked against
      O(known_hosts_path); the results are RV(logins).
    type: list
    elements: str
  probe_user:
    description: The user the probe runs ssh as and logs in as; needed with O(probe).
    type: str
  probe_timeout:
    description: Seconds each probe waits for the connection (ssh's C(ConnectTimeout)).
    type: int
    default: 10
extends_documentation_fragment:
  - gpudirect.gcp.attributes
attributes:
  check_mode:
    support: full
    details: Reports what would be written and removed, reads the host key and runs the probe; changes nothing.
  diff_mode:
    support: full
    details: The before and after of every file written, except the private key, whose diff says only that it
      changes, and of every file removed, that it goes.
  idempotent:
    support: full
notes:
  - Files are written through a temporary file and a rename, so sshd or mpirun never reads half of one.
  - sshd must accept key logins for the user (C(PubkeyAuthentication), C(AllowUsers)/C(AllowGroups), and
    C(PermitRootLogin) for root); O(probe) names a node where it does not.
"""

EXAMPLES = r"""
- name: Authorize the cluster key for the MPI user, from the cluster's nodes only, and read the host key
  gpudirect.gcp.ssh_trust:
    ssh_dir: /var/lib/gpudirect-mpi/.ssh
    owner: gpudirect-mpi
    authorized_key: "ssh-ed25519 AAAAC3Nza... gpudirect-nccl-tests"
    authorized_from: [10.0.0.2, 10.0.0.3]
    host_key_file: /etc/ssh/ssh_host_ed25519_key.pub
    # what an earlier release trusted root with
    revoke_authorized_keys: /root/.ssh/authorized_keys
    absent:
      - /root/.ssh/gpudirect_nccl_tests_ed25519
      - /root/.ssh/gpudirect_nccl_tests_ed25519.pub
      - /root/.ssh/gpudirect_nccl_tests_known_hosts
  register: trust

- name: Give the launcher the known-hosts file of every node
  gpudirect.gcp.ssh_trust:
    ssh_dir: /var/lib/gpudirect-mpi/.ssh
    owner: gpudirect-mpi
    known_hosts_path: /var/lib/gpudirect-mpi/.ssh/gpudirect_nccl_tests_known_hosts
    known_hosts:
      10.0.0.2: ssh-ed25519 AAAAC3Nza...
      10.0.0.3: ssh-ed25519 AAAAC3Nzb...

- name: Prove every node lets the MPI user in with the key
  gpudirect.gcp.ssh_trust:
    ssh_dir: /var/lib/gpudirect-mpi/.ssh
    probe: [10.0.0.2, 10.0.0.3]
    probe_user: gpudirect-mpi
    key_path: /var/lib/gpudirect-mpi/.ssh/gpudirect_nccl_tests_ed25519
    known_hosts_path: /var/lib/gpudirect-mpi/.ssh/gpudirect_nccl_tests_known_hosts
  register: logins
"""

RETURN = r"""
host_key:
  description: The node's host key as known_hosts takes it (type and body), when O(host_key_file) is given.
  returned: success
  type: str
  sample: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG...
written:
  description: The files written (or, in check mode, that would be), the directory included when it was made or
    given to O(owner).
  returned: success
  type: list
  elements: str
removed:
  description: The files of O(absent) that were there and are removed (or, in check mode, would be).
  returned: success
  type: list
  elements: str
logins:
  description: One entry per O(probe) address, in order.
  returned: when O(probe) is given
  type: list
  elements: dict
  contains:
    address:
      description: The address logged in to.
      type: str
    ok:
      description: Whether the login ran C(true) there.
      type: bool
    reason:
      description: Why it failed, in one line (sshd refused the key, host key mismatch, unreachable); null when it
        did not.
      type: str
"""

import os
import pwd

from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule
from ansible_collections.gpudirect.gcp.plugins.module_utils.common.files import destination_problem, mode_of, read_own
from ansible_collections.gpudirect.gcp.plugins.module_utils.host import ssh_trust


def _wanted_files(p):
    """[(path, text, mode, secret)] the options ask for; TrustError names a bad one."""
    wanted = []
    if p["authorized_key"]:
        path = os.path.join(p["ssh_dir"], "authorized_keys")
        line = ssh_trust.key_line(p["authorized_key"], "authorized_key")
        if p["authorized_from"]:
            line = ssh_trust.restricted_line(line, p["authorized_from"])
        wanted.append((path, ssh_trust.authorized_keys_with(read_own(path), line), 0o600, False))
    if p["known_hosts"] is not None:
        wanted.append((p["known_hosts_path"], ssh_trust.known_hosts_text(p["known_hosts"]), 0o600, False))
    if p["private_key"]:
        text = p["private_key"] if p["private_key"].endswith("\n") else p["private_key"] + "\n"
        wanted.append((p["key_path"], text, 0o600, True))
    if p["public_key"]:
        wanted.append((p["key_path"] + ".pub", ssh_trust.key_line(p["public_key"], "public_key") + "\n", 0o644, False))
    return wanted


def _ids(path):
    """(uid, gid) of path, or None when it is absent."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_uid, st.st_gid


def _revoked(p):
    """(path, text) of the authorized_keys file without the revoked lines, when it changes."""
    path = p["revoke_authorized_keys"]
    if not path:
        return None
    before = read_own(path)
    after = ssh_trust.authorized_keys_without(before, p["revoke_comment"])
    return None if after == before else (path, before, after)


def _probe(gm, p):
    """[{address, ok, reason}]: one ssh login as probe_user to each address, with the key and known hosts."""
    user = p["probe_user"]
    prefix = []
    if os.geteuid() == 0 and user != "root":
        prefix = [gm.which("runuser", required=True), "-u", user, "--"]
    elif os.geteuid() != 0:
        try:
            me = pwd.getpwuid(os.geteuid()).pw_name
        except KeyError:
            me = "uid %d" % os.geteuid()
        if me != user:
            gm.fail("ssh_trust: probe_user %s: the probe runs as %s and can log in as another user only as root"
                    % (user, me))
    if user == "root":
        gm.warn("mpirun logs in as root with one key that every node authorizes: root on any node of the cluster "
                "is root on all of them")
    ssh = gm.which("ssh", required=True)
    logins = []
    for address in p["probe"]:
        rc, _out, err = gm.run(prefix + ssh_trust.probe_argv(ssh, p["key_path"], p["known_hosts_path"], user, address,
                                                             p["probe_timeout"]))
        reason = ssh_trust.login_failure(rc, err, p["known_hosts_path"])
        logins.append(dict(address=address, ok=reason is None, reason=reason))
    return logins


def main():
    gm = GpuModule(dict(ssh_dir=dict(type="path", required=True), authorized_key=dict(type="str", no_log=False),
                        authorized_from=dict(type="list", elements="str"), owner=dict(type="str"),
                        host_key_file=dict(type="path"), known_hosts_path=dict(type="path"),
                        known_hosts=dict(type="dict"), key_path=dict(type="path", no_log=False),
                        private_key=dict(type="str", no_log=True), public_key=dict(type="str", no_log=False),
                        revoke_authorized_keys=dict(type="path"),
                        revoke_comment=dict(type="str", default="gpudirect-nccl-tests"),
                        absent=dict(type="list", elements="path", default=[]),
                        probe=dict(type="list", elements="str"), probe_user=dict(type="str"),
                        probe_timeout=dict(type="int", default=10)),
                   required_by=dict(known_hosts=["known_hosts_path"], private_key=["key_path"],
                                    public_key=["key_path"], authorized_from=["authorized_key"],
                                    probe=["probe_user", "key_path", "known_hosts_path"]))
    p = gm.params
    result = dict(changed=False, written=[], removed=[])
    ids = None
    if p["owner"]:
        try:
            entry = pwd.getpwnam(p["owner"])
        except KeyError:
            gm.fail("ssh_trust: owner %s: no such user on this node" % p["owner"])
        ids = (entry.pw_uid, entry.pw_gid)
    try:
        if p["host_key_file"]:
            text = read_own(p["host_key_file"])
            if text is None:
                gm.fail("ssh_trust: host_key_file %s cannot be read" % p["host_key_file"])
            result["host_key"] = ssh_trust.host_key(text, "host_key_file %s" % p["host_key_file"])
        wanted = _wanted_files(p)
    except ssh_trust.TrustError as exc:
        gm.fail("ssh_trust: %s" % exc)
    for path, _text, _mode, _secret in wanted:
        problem = destination_problem("file", path)
        if problem:
            gm.fail("ssh_trust: %s" % problem)

    diffs = []
    writes = bool(wanted) or p["authorized_key"]
    if writes and (not os.path.isdir(p["ssh_dir"]) or mode_of(p["ssh_dir"]) != 0o700
                   or (ids and _ids(p["ssh_dir"]) != ids)):
        result["written"].append(p["ssh_dir"])
        if not gm.check_mode:
            try:
                if not os.path.isdir(p["ssh_dir"]):
                    os.makedirs(p["ssh_dir"], 0o700)
                os.chmod(p["ssh_dir"], 0o700)
                if ids:
                    os.chown(p["ssh_dir"], *ids)
            except OSError as exc:
                gm.fail("ssh_trust: cannot make ssh_dir %s: %s" % (p["ssh_dir"], exc))
    for path, text, mode, secret in wanted:
        before = read_own(path)
        if before == text and mode_of(path) == mode and (not ids or _ids(path) == ids):
            continue
        result["written"].append(path)
        if secret:
            diffs.append(dict(before_header=path, after_header=path, before="(private key, not shown)\n",
                              after="(private key, not shown%s)\n" % (", changed" if before != text else "")))
        else:
            diffs.append(gm.diff(before, text, path))
        if not gm.check_mode:
            error = None
            if before != text or mode_of(path) != mode:
                error = gm.write_file(path, text, mode, dir_mode=0o700)
            if not error and ids:
                try:
                    os.chown(path, *ids)
                except OSError as exc:
                    error = "cannot give %s to %s: %s" % (path, p["owner"], exc)
            if error:
                gm.fail("ssh_trust: %s" % error, **result)

    revoked = _revoked(p)
    if revoked:
        path, before, after = revoked
        result["written"].append(path)
        diffs.append(gm.diff(before, after, path))
        if not gm.check_mode:
            # the file's own mode: it is the user's, not ours to change
            error = gm.write_file(path, after, mode_of(path) or 0o600, dir_mode=0o700)
            if error:
                gm.fail("ssh_trust: %s" % error, **result)
    for path in p["absent"]:
        if os.path.lexists(path):
            result["removed"].append(path)
            diffs.append(dict(before_header=path, after_header=path, before="(present)\n", after="(absent)\n"))
            if not gm.check_mode:
                try:
                    os.unlink(path)
                except OSError as exc:
                    gm.fail("ssh_trust: cannot remove %s: %s" % (path, exc), **result)

    if p["probe"]:
        result["logins"] = _probe(gm, p)
    result["changed"] = bool(result["written"] or result["removed"])
    if gm.diff_mode and diffs:
        result["diff"] = diffs
    gm.exit(**result)


if __name__ == "__main__":
    main()
