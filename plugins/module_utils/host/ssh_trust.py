# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The SSH trust mpirun needs between the nodes, as plain text: what each file must hold.

No I/O here: the module reads the files, asks these functions what they must become, and
writes only what differs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# an OpenSSH public key: its type and base64 body, then an optional comment
_KEY = re.compile(r"^(?:ssh-(?:ed25519|rsa|dss)|ecdsa-sha2-nistp(?:256|384|521)|sk-\S+)\s+[A-Za-z0-9+/=]+(?:\s|$)")


class TrustError(ValueError):
    """A key or file that cannot take part in the trust; the message names it."""


def key_line(text, what):
    """The one public key line of text (a .pub file or an option), stripped; TrustError otherwise."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip() and not line.strip().startswith("#")]
    if len(lines) != 1 or not _KEY.match(lines[0]):
        raise TrustError("%s does not hold one OpenSSH public key" % what)
    return lines[0]


def host_key(text, path):
    """A host key file's key as known_hosts takes it: its type and body, without the comment."""
    return " ".join(key_line(text, path).split()[:2])


# what the cluster key may do besides running a command: mpirun's SSH needs none of these
RESTRICTIONS = "no-agent-forwarding,no-X11-forwarding,no-port-forwarding,no-pty"


def restricted_line(line, addresses):
    """The key line limited to logins from addresses (sorted, once each) and to running commands."""
    for address in addresses:
        if not address or any(c.isspace() or c in '",' for c in address):
            raise TrustError("authorized_from: %r is not a host address" % (address,))
    return 'from="%s",%s %s' % (",".join(sorted(set(addresses))), RESTRICTIONS, line)


def split_line(line):
    """An authorized_keys line as (options, key type, body, comment); None for a blank or comment line.

    The options come first when the line does not start with a key type; they end at the first
    blank outside double quotes (from="a,b" or command="x y").
    """
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    options = ""
    if not _KEY.match(line):
        quoted, end = False, len(line)
        for i, c in enumerate(line):
            if c == '"':
                quoted = not quoted
            elif c.isspace() and not quoted:
                end = i
                break
        options, line = line[:end], line[end:].strip()
    fields = line.split(None, 2)
    fields += [""] * (3 - len(fields))
    return options, fields[0], fields[1], fields[2].strip()


def authorized_keys_with(text, line):
    """authorized_keys holding line and no other line of its key or its comment.

    A line of the same key (type and body) with the same options stays as it is, whatever its
    comment; one with other options (a from= list that grew, none at all) is replaced in place. A
    line with the wanted comment but another key (an older cluster key) is taken out. Every other
    line is kept as it is.
    """
    want = split_line(line)
    text = text or ""
    lines, placed = [], False
    for existing in text.splitlines():
        got = split_line(existing)
        same_key = got is not None and got[1:3] == want[1:3]
        if same_key and not placed:
            lines.append(existing if got[0] == want[0] else line)
            placed = True
        elif not same_key and not (got is not None and want[3] and got[3] == want[3]):
            lines.append(existing)
    if not placed:
        lines.append(line)
    out = "\n".join(lines) + "\n"
    return text if out == text else out


def authorized_keys_without(text, comment):
    """authorized_keys without the lines whose key carries comment (None stays None)."""
    if text is None:
        return None
    kept = [line for line in text.splitlines() if (split_line(line) or ("", "", "", None))[3] != comment]
    out = "\n".join(kept) + ("\n" if kept else "")
    return text if out == text else out


def probe_argv(ssh, key_path, known_hosts, user, address, timeout):
    """The ssh that proves user can log in to address with the key, host key checked: mpirun's own
    options (BatchMode: a refusal fails at once instead of asking for a password)."""
    return [ssh, "-o", "BatchMode=yes", "-i", key_path, "-o", "IdentitiesOnly=yes",
            "-o", "UserKnownHostsFile=%s" % known_hosts, "-o", "StrictHostKeyChecking=yes",
            "-o", "ConnectTimeout=%d" % timeout, "-l", user, address, "true"]


def login_failure(rc, stderr, known_hosts):
    """Why a probe failed, in one line; None when it succeeded."""
    if rc == 0:
        return None
    lines = [line.strip() for line in (stderr or "").splitlines()
             if line.strip() and not line.strip().startswith("Warning:")]
    last = lines[-1] if lines else "ssh exited %d" % rc
    if "Permission denied" in last:
        return ("sshd refuses the key (%s): check PubkeyAuthentication, AllowUsers/AllowGroups, "
                "PermitRootLogin for root, and that the login comes from an address in the key's from= list" % last)
    if "Host key verification failed" in last:
        return "its host key is not the one in %s (%s)" % (known_hosts, last)
    return last


def known_hosts_text(entries):
    """known_hosts for entries ({address: host key}), one line each, sorted, so a rerun writes nothing."""
    for address in entries:
        if not address or any(c.isspace() for c in address):
            raise TrustError("known_hosts: %r is not a host address" % (address,))
    return "".join("%s %s\n" % (address, entries[address]) for address in sorted(entries))
