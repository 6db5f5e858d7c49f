# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A set of files written in one module run: what each must hold, and which ones differ.

No writing here: the module asks plan() what differs and writes only that.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os


class FileSetError(ValueError):
    """A file entry that cannot be written; the message names it."""


def parse_mode(value, what):
    """An octal mode given as '0644', '644' or an int (as YAML reads 0644); FileSetError otherwise."""
    if isinstance(value, int) and not isinstance(value, bool):
        mode = value
    else:
        text = str(value or "").strip()
        try:
            mode = int(text, 8)
        except ValueError:
            raise FileSetError("%s: mode %r is not an octal mode such as 0644" % (what, value))
    if not 0 <= mode <= 0o7777:
        raise FileSetError("%s: mode %r is not an octal mode such as 0644" % (what, value))
    return mode


def entries(files):
    """[(path, content, mode)] from the module's files option, each path absolute and named once."""
    seen, out = set(), []
    for number, item in enumerate(files or [], 1):
        path = item.get("path") or ""
        what = "files[%d] (%s)" % (number, path or "no path")
        if not os.path.isabs(path) or path.endswith("/"):
            raise FileSetError("%s: path must be an absolute file path" % what)
        path = os.path.normpath(path)
        if path in seen:
            raise FileSetError("%s: the path is given twice" % what)
        seen.add(path)
        content = item.get("content")
        if content is None:
            raise FileSetError("%s: content is required" % what)
        out.append((path, content, parse_mode(item.get("mode", "0644"), what)))
    return out


def plan(wanted, read, mode_of):
    """[(path, before, content, mode, reason)] for every file that differs: its content ('content'), or
    only its mode ('mode'). read(path) gives the content or None; mode_of(path) the mode or None."""
    changes = []
    for path, content, mode in wanted:
        before = read(path)
        if before != content:
            changes.append((path, before, content, mode, "content"))
        elif mode_of(path) != mode:
            changes.append((path, before, content, mode, "mode"))
    return changes
