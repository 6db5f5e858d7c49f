# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The record a configuration phase leaves on a node, and the comparison that lets a re-run skip it.

A phase that finished on a node records what it left there: a digest of its inputs (the role's
resolved options and the collection's code, worked out on the controller), the state of every
path it manages or sets at run time (files by content, mode and owner; directories by their
entries and their regular files' sizes and times; /proc/sys and /sys values are files too) and of its systemd units, and the result it
reported. A later run compares the node with that record in one call: the same digest and the
same state mean the phase would change nothing, so its full path is not needed. Anything that
differs, or a record that is missing or unreadable, sends the phase down its full path; being
wrong in that direction only costs time.

Plain Python (no ansible import).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import re
import stat

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import systemd_show

RECORD_VERSION = 1
# a phase names its record file: nothing that could leave the records' directory
PHASE_NAME = re.compile(r"^[a-z0-9_]+$")
# larger files are fingerprinted by their first bytes, size and modification time
READ_LIMIT = 4 * 1024 * 1024
CHUNK = 64 * 1024
UNIT_PROPERTIES = ("LoadState", "ActiveState", "UnitFileState")


def record_path(directory, phase):
    return os.path.join(directory, "%s.json" % phase)


def _read_head(path):
    """Up to READ_LIMIT + 1 bytes, in small reads: procfs refuses one read of a large buffer (ENOMEM)."""
    chunks, size = [], 0
    with open(path, "rb") as fh:
        while size <= READ_LIMIT:
            chunk = fh.read(CHUNK)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    return b"".join(chunks)


def _dir_digest(path):
    """A directory's entry names, and each regular file's size and modification time (a file edited in
    place shows without reading device nodes or sysfs attributes)."""
    lines = []
    for name in sorted(os.listdir(path)):
        try:
            info = os.lstat(os.path.join(path, name))
        except OSError:
            lines.append(name)
            continue
        lines.append("%s %d %d" % (name, info.st_size, info.st_mtime_ns) if stat.S_ISREG(info.st_mode) else name)
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def fingerprint(path):
    """What a path holds now, as one comparable string."""
    try:
        info = os.stat(path)
    except OSError:
        return "absent"
    if stat.S_ISDIR(info.st_mode):
        try:
            return "dir " + _dir_digest(path)
        except OSError as err:
            return "unreadable dir (%s)" % (err.strerror or err)
    owner = "%o %d:%d" % (stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid)
    digest = hashlib.sha256()
    try:
        data = _read_head(path)
    except (IOError, OSError) as err:
        return "unreadable %s (%s)" % (owner, err.strerror or err)
    if len(data) > READ_LIMIT:
        digest.update(data[:READ_LIMIT])
        return "file %s %s size %d mtime %d" % (owner, digest.hexdigest(), info.st_size, int(info.st_mtime))
    digest.update(data)
    return "file %s %s" % (owner, digest.hexdigest())


def parse_unit_states(units, text):
    """`systemctl show -p LoadState -p ActiveState -p UnitFileState U1 U2 ...` (systemd_show.show_argv),
    each unit's states as one comparable line; a value not there is "?"."""
    found = systemd_show.parse_show(text, units, UNIT_PROPERTIES)
    return dict((unit, " ".join("%s=%s" % (key, found[unit].get(key, "?")) for key in UNIT_PROPERTIES))
                for unit in units)


def build_record(phase, digest, paths, units, result):
    return {
        "version": RECORD_VERSION,
        "phase": phase,
        "digest": digest,
        "paths": dict(paths),
        "units": dict(units),
        "result": result,
    }


def load_record(text, phase):
    """The record in text, or (None, why)."""
    if text is None:
        return None, "no record of a finished %s run on this node" % phase
    try:
        record = json.loads(text)
    except ValueError:
        return None, "the %s record is not JSON" % phase
    if not isinstance(record, dict) or record.get("version") != RECORD_VERSION or record.get("phase") != phase:
        return None, "the %s record is of another version or phase" % phase
    for key, kind in (("paths", dict), ("units", dict), ("digest", str)):
        if not isinstance(record.get(key), kind):
            return None, "the %s record has no %s" % (phase, key)
    return record, None


def differences(record, digest, paths_now, units_now):
    """Why the node is not as the record left it: one line each; empty when it is."""
    found = []
    if record["digest"] != digest:
        found.append("the phase's inputs or the collection's code changed since the recorded run")
    for path in sorted(set(record["paths"]) | set(paths_now)):
        before, now = record["paths"].get(path), paths_now.get(path)
        if before is None:
            found.append("%s: not in the record" % path)
        elif now is None:
            found.append("%s: no longer managed" % path)
        elif before != now:
            found.append("%s: %s" % (path, "removed" if now == "absent" else
                                     "created" if before == "absent" else "changed"))
    for unit in sorted(set(record["units"]) | set(units_now)):
        before, now = record["units"].get(unit), units_now.get(unit)
        if before != now:
            found.append("unit %s: %s, recorded %s" % (unit, now or "no longer managed", before or "nothing"))
    return found


def dump_record(record):
    return json.dumps(record, indent=1, sort_keys=True) + "\n"


def same_record(text, record):
    """Whether the record in text already says what record says (so nothing is written)."""
    old, _why = load_record(text, record["phase"])
    if old is None:
        return False
    old = dict(old)
    old.pop("recorded_at", None)
    return dump_record(old) == dump_record(record)
