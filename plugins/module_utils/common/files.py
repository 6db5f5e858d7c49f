# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading a file that may be absent, and writing files so that a reader never sees half of one.

Plain Python (no ansible import): the node health agent runs it without ansible-core.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat
import tempfile


def read_or_none(path):
    """The file's whole content, or None when it is absent or cannot be read."""
    try:
        with open(path) as fh:
            return fh.read()
    except (IOError, OSError):
        return None


def read_at_most(descriptor, limit):
    """At most limit bytes read from an open descriptor, a chunk at a time (never one read of limit bytes:
    a bound of hundreds of MiB is not allocated up front)."""
    chunks, size = [], 0
    while size < limit:
        chunk = os.read(descriptor, min(limit - size, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def read_own(path):
    """The content of the regular file at path, or None when there is none. Never what a symbolic link
    points at: a diff of it would show another file (the write replaces the link with a file)."""
    if os.path.islink(path) or not os.path.isfile(path):
        return None
    return read_or_none(path)


def mode_of(path):
    """The permission bits of path (0o644), or None when it is absent or cannot be read."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None


def destination_problem(option, path):
    """Why path cannot take a file (one line naming the option), or None."""
    if os.path.isdir(path) and not os.path.islink(path):
        return "%s %s is a directory; it must name a file" % (option, path)
    return None


def write_atomic(path, text, mode, dir_mode=0o755):
    """Write text to path through a temporary file in the same directory and a rename, with mode;
    create the directory.

    Raises OSError/IOError; a reader never sees a half-written file.
    """
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        os.makedirs(directory, dir_mode)
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.rename(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
