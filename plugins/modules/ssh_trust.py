#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: ssh_trust
short_description: Set up one node's side of the SSH trust mpirun needs, in one call
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Makes sure O(ssh_dir) exists (mode C(0700)), that C(authorized_keys) in it holds O(authorized_key), and that
    the known-hosts file, the cluster key and its public half hold what they are given, each written only when it
    differs (mode C(0600), the public key C(0644)).
  - Reads the node's own SSH host key (O(host_key_file)) and returns it, so that the controller can build the
    known-hosts file every node checks the others against.
  - What one node needs of the trust in one module run; it replaces a directory, a line, a read and up to three
    copies, each a run of its own.
options:
  ssh_dir:
    description: The SSH directory of the user mpirun logs in as, for example C(/root/.ssh).
    type: path
    required: true
  authorized_key:
    description: A public key line to be in O(ssh_dir)C(/authorized_keys); a line with the same key is enough.
    type: str
  host_key_file:
    description: The node's SSH host public key, returned as RV(host_key).
    type: path
  known_hosts_path:
    description: Where the known-hosts file goes. Required with O(known_hosts).
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
extends_documentation_fragment:
  - gpudirect.gcp.attributes
attributes:
  check_mode:
    support: full
    details: Reports what would be written, and reads the host key; changes nothing.
  diff_mode:
    support: full
    details: The before and after of every file written, except the private key, whose diff says only that it changes.
  idempotent:
    support: full
notes:
  - Files are written through a temporary file and a rename, so sshd or mpirun never reads half of one.
"""

EXAMPLES = r"""
- name: Authorize the cluster key and read the node's host key
  gpudirect.gcp.ssh_trust:
    ssh_dir: /root/.ssh
    authorized_key: "ssh-ed25519 AAAAC3Nza... gpudirect-nccl-tests"
    host_key_file: /etc/ssh/ssh_host_ed25519_key.pub
  register: trust

- name: Give the launcher the known-hosts file of every node
  gpudirect.gcp.ssh_trust:
    ssh_dir: /root/.ssh
    known_hosts_path: /root/.ssh/gpudirect_nccl_tests_known_hosts
    known_hosts:
      10.0.0.2: ssh-ed25519 AAAAC3Nza...
      10.0.0.3: ssh-ed25519 AAAAC3Nzb...
"""

RETURN = r"""
host_key:
  description: The node's host key as known_hosts takes it (type and body), when O(host_key_file) is given.
  returned: success
  type: str
  sample: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG...
written:
  description: The files written (or, in check mode, that would be), the directory included when it was made.
  returned: success
  type: list
  elements: str
"""

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule
from ansible_collections.gpudirect.gcp.plugins.module_utils.common.files import destination_problem, mode_of, read_own
from ansible_collections.gpudirect.gcp.plugins.module_utils.host import ssh_trust


def _wanted_files(p):
    """[(path, text, mode, secret)] the options ask for; TrustError names a bad one."""
    wanted = []
    if p["authorized_key"]:
        path = os.path.join(p["ssh_dir"], "authorized_keys")
        line = ssh_trust.key_line(p["authorized_key"], "authorized_key")
        wanted.append((path, ssh_trust.authorized_keys_with(read_own(path), line), 0o600, False))
    if p["known_hosts"] is not None:
        wanted.append((p["known_hosts_path"], ssh_trust.known_hosts_text(p["known_hosts"]), 0o600, False))
    if p["private_key"]:
        text = p["private_key"] if p["private_key"].endswith("\n") else p["private_key"] + "\n"
        wanted.append((p["key_path"], text, 0o600, True))
    if p["public_key"]:
        wanted.append((p["key_path"] + ".pub", ssh_trust.key_line(p["public_key"], "public_key") + "\n", 0o644, False))
    return wanted


def main():
    gm = GpuModule(dict(ssh_dir=dict(type="path", required=True), authorized_key=dict(type="str", no_log=False),
                        host_key_file=dict(type="path"), known_hosts_path=dict(type="path"),
                        known_hosts=dict(type="dict"), key_path=dict(type="path", no_log=False),
                        private_key=dict(type="str", no_log=True), public_key=dict(type="str", no_log=False)),
                   required_by=dict(known_hosts=["known_hosts_path"], private_key=["key_path"],
                                    public_key=["key_path"]))
    p = gm.params
    result = dict(changed=False, written=[])
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
    if not os.path.isdir(p["ssh_dir"]) or mode_of(p["ssh_dir"]) != 0o700:
        result["written"].append(p["ssh_dir"])
        if not gm.check_mode:
            try:
                if not os.path.isdir(p["ssh_dir"]):
                    os.makedirs(p["ssh_dir"], 0o700)
                os.chmod(p["ssh_dir"], 0o700)
            except OSError as exc:
                gm.fail("ssh_trust: cannot make ssh_dir %s: %s" % (p["ssh_dir"], exc))
    for path, text, mode, secret in wanted:
        before = read_own(path)
        if before == text and mode_of(path) == mode:
            continue
        result["written"].append(path)
        if secret:
            diffs.append(dict(before_header=path, after_header=path, before="(private key, not shown)\n",
                              after="(private key, not shown%s)\n" % (", changed" if before != text else "")))
        else:
            diffs.append(gm.diff(before, text, path))
        if not gm.check_mode:
            error = gm.write_file(path, text, mode, dir_mode=0o700)
            if error:
                gm.fail("ssh_trust: %s" % error, **result)
    result["changed"] = bool(result["written"])
    if gm.diff_mode and diffs:
        result["diff"] = diffs
    gm.exit(**result)


if __name__ == "__main__":
    main()
