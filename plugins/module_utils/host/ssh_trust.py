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


def authorized_keys_with(text, line):
    """authorized_keys holding line: text as it is when a line already holds the same key (type and body,
    whatever its comment), else text with line added at the end."""
    wanted = line.split()[:2]
    text = text or ""
    if any(existing.split()[:2] == wanted for existing in text.splitlines()):
        return text
    return text + ("" if not text or text.endswith("\n") else "\n") + line + "\n"


def known_hosts_text(entries):
    """known_hosts for entries ({address: host key}), one line each, sorted, so a rerun writes nothing."""
    for address in entries:
        if not address or any(c.isspace() for c in address):
            raise TrustError("known_hosts: %r is not a host address" % (address,))
    return "".join("%s %s\n" % (address, entries[address]) for address in sorted(entries))
