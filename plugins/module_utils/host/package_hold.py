# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""package_hold's logic: which installed packages a name or pattern matches and which of them are held.

dpkg: a hold is the selection "hold"; dpkg-query's db:Status-Abbrev is
<wanted><state><error>, so "hi" is held and installed, "ii" installed.
rpm: a hold is a dnf versionlock entry, listed as <name>-<[epoch:]version>...
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DPKG_FORMAT = "${Package} ${db:Status-Abbrev}\n"


def parse_dpkg_query(text):
    """{name: held} of the installed packages in dpkg-query -W -f=DPKG_FORMAT output."""
    found = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and len(parts[1]) >= 2 and parts[1][1] == "i":
            found[parts[0]] = parts[1][0] == "h"
    return found


def parse_rpm_names(text):
    """The package names rpm -qa --qf '%{NAME}\\n' printed."""
    return sorted(set(line.strip() for line in text.splitlines() if line.strip()))


def locked_names(versionlock_list, names):
    """Which of names dnf versionlock list locks (an entry is <name>-<[epoch:]version>...)."""
    locked = set()
    for line in versionlock_list.splitlines():
        entry = line.strip()
        if entry.startswith("!"):  # an exclude, not a lock
            continue
        for name in names:
            rest = entry[len(name) + 1:] if entry.startswith(name + "-") else ""
            if rest[:1].isdigit():
                locked.add(name)
    return locked


def plan(matched, held, state):
    """The names whose hold must change: matched {pattern: [names]}, held {name: bool}."""
    names = sorted(set(n for found in matched.values() for n in found))
    want = state == "held"
    return [n for n in names if held.get(n, False) != want]


def render(held):
    """{name: held} as diff text, one package a line."""
    return "".join("%s %s\n" % (name, "hold" if held[name] else "install") for name in sorted(held))


def check_patterns(patterns):
    """One line naming the bad patterns, or None."""
    bad = [p for p in patterns if not p or p.strip() != p or p.startswith("-") or any(c.isspace() for c in p)]
    if bad:
        return "name must be package names or patterns, got %s" % ", ".join(repr(b) for b in bad)
    return None


def parse_record(text, path):
    """The package names a hold record lists (a JSON list); ValueError names the file."""
    import json
    if not text.strip():
        return []
    try:
        names = json.loads(text)
    except ValueError as exc:
        raise ValueError("%s is not a hold record (a JSON list of package names): %s" % (path, exc))
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise ValueError("%s is not a hold record (a JSON list of package names)" % path)
    return sorted(set(names))


def record_after(recorded, change, state):
    """What the record lists after a run: holding adds the packages this run held (never those held
    before, which are someone else's); releasing from the record empties it."""
    if state == "held":
        return sorted(set(recorded) | set(change))
    return []


def dump_record(names):
    import json
    return json.dumps(sorted(names)) + "\n"
