# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""link_mtu's logic: links' MTU and admin state from sysfs, and the ip commands that change them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils.common.sysfs import read_text_strict

SYSFS_NET = "/sys/class/net"
IFF_UP = 0x1
MIN_MTU = 68


class LinkError(ValueError):
    """A link that is missing or cannot be read (one line)."""


def _read(path):
    try:
        return read_text_strict(path)
    except (IOError, OSError) as exc:
        raise LinkError("cannot read %s: %s" % (path, exc))


def read_link(name, sysfs=SYSFS_NET):
    """{'mtu': int, 'admin_up': bool} of the link, from sysfs."""
    base = os.path.join(sysfs, name)
    if not os.path.isdir(base):
        raise LinkError("no interface %s (%s does not exist)" % (name, base))
    mtu, flags = _read(os.path.join(base, "mtu")), _read(os.path.join(base, "flags"))
    try:
        return {"mtu": int(mtu), "admin_up": bool(int(flags, 16) & IFF_UP)}
    except ValueError:
        raise LinkError("%s: unreadable mtu %r or flags %r" % (base, mtu, flags))


def check_input(name, mtu):
    """One line naming the bad argument, or None."""
    if not name or "/" in name or name in (".", "..") or name.strip() != name:
        return "name must be an interface name, got %r" % (name,)
    if mtu is not None and mtu < MIN_MTU:
        return "mtu must be at least %d, got %d" % (MIN_MTU, mtu)
    return None


def desired(before, mtu, state):
    """The link's state after the run: mtu None or state 'present' keeps that part as it is."""
    after = dict(before)
    if mtu is not None:
        after["mtu"] = mtu
    if state in ("up", "down"):
        after["admin_up"] = state == "up"
    return after


def commands(ip_bin, name, before, after):
    """The ip commands (argument lists) that turn before into after: MTU first, then the admin state."""
    argv = []
    if after["mtu"] != before["mtu"]:
        argv.append([ip_bin, "link", "set", "dev", name, "mtu", str(after["mtu"])])
    if after["admin_up"] != before["admin_up"]:
        argv.append([ip_bin, "link", "set", "dev", name, "up" if after["admin_up"] else "down"])
    return argv


def plan_links(links, ip_bin, read=None):
    """For each requested link ({name, mtu, state}): its state before and after and the commands
    between them, or `msg`, one line on why it cannot be changed. One bad link leaves the others
    planned."""
    read = read or read_link
    out = []
    for link in links:
        name, mtu = link["name"], link.get("mtu")
        entry = {"name": name}
        bad = check_input(name, mtu)
        if bad:
            entry["msg"] = bad
            out.append(entry)
            continue
        try:
            before = read(name)
        except LinkError as exc:
            entry["msg"] = str(exc)
            out.append(entry)
            continue
        after = desired(before, mtu, link.get("state") or "present")
        entry.update(before=before, after=after, commands=commands(ip_bin, name, before, after))
        out.append(entry)
    return out


def render(name, state):
    """A link's state as diff text."""
    return "%s: mtu %d, %s\n" % (name, state["mtu"], "up" if state["admin_up"] else "down")
