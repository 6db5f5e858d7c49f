# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Blame by placement: failing nodes that cluster in one sub-block or block point at that place.

Four failing nodes of one sub-block, while the other sub-blocks are healthy, are
most likely one fault of that sub-block (its switch, its uplink, its power)
rather than four bad nodes: the diagnosis names the suspect place with its
failing and total node counts instead of listing the nodes one by one.

A place of a level (LEVELS) is blamed when

  1. at least min_failing of its nodes fail,
  2. at least its level's share of its nodes fail (share; the run's setting, DEFAULT_SHARE unless
     given, where the row leaves it None),
  3. at least one other place of the same level has nodes, and every other place of that level is
     healthy: none reaches both counts (two sub-blocks that do are spread failures, not one place's;
     a stray bad node elsewhere is not), and
  4. at a wider level, the failing nodes of a narrower place already blamed are not counted again
     (a block is not blamed for its one bad sub-block).

A node counts at a level only where its place names that level's part: a node
without a known place is never blamed on a place, and a place record that cannot
be read leaves only that node out. Controller-side only, pure Python.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd

# the share of a place's nodes that must fail for it to be blamed, where neither the run nor the row sets one
DEFAULT_SHARE = 0.5
# the levels a place is blamed at, narrowest first. level: the place part (finding.PLACE_PARTS) of the level;
# parts: the place parts that name one place of it (sub-block names repeat across blocks); suspect: what the
# diagnosis suspects there, in words; min_failing: at least this many failing nodes; share: at least this share
# of the place's nodes failing (None: the run's setting)
LEVELS = (
    {"level": "subblock", "parts": ("cluster", "block", "subblock"), "suspect": "sub-block", "min_failing": 2,
     "share": None},
    {"level": "block", "parts": ("cluster", "block"), "suspect": "block switch", "min_failing": 2, "share": None},
)
# what a blame holds, for the reports
FIELDS = ("level", "suspect", "place", "where", "failing", "total", "share", "hosts", "line")
# a blame's line names this many of its failing nodes and counts the rest (its hosts hold them all)
MAX_NAMED = 8


def check_levels(levels=None):
    """ValueError naming a row of LEVELS whose level or parts are not place parts (a programming error)."""
    known = fd.place_parts()
    for row in LEVELS if levels is None else levels:
        if row["level"] not in known or not set(row["parts"]) <= set(known) or row["parts"][-1] != row["level"]:
            raise ValueError("place blame level %r: its parts must be place parts (%s) ending in the level"
                             % (row.get("level"), ", ".join(known)))


check_levels()


def _words(part):
    return next((row["words"] for row in fd.PLACE_PARTS if row["part"] == part), part)


def _place(raw):
    """One node's place as a finding holds it, or None where it is not known or cannot be read."""
    try:
        return fd.place(raw)
    except (ValueError, TypeError):
        return None


def _key(place, row):
    """The place of the row's level the node sits in, as a tuple of its parts; None where the level is unknown."""
    if not place or not place.get(row["level"]):
        return None
    return tuple(place.get(part) for part in row["parts"])


def _line(blame, others):
    named = ", ".join(blame["hosts"][:MAX_NAMED])
    rest = len(blame["hosts"]) - MAX_NAMED
    return "suspect %s: %s - %d of %d nodes fail while the other %ss are healthy (%s%s)" % (
        blame["suspect"], blame["where"], blame["failing"], blame["total"], others, named,
        " and %d more" % rest if rest > 0 else "")


def blame(failed, hosts, places, share=None, levels=None):
    """The places to blame: [{level, suspect, place {part: name}, where (words), failing, total, share (failing /
    total, two decimals), hosts (the failing nodes there, in hosts' order), line (one line for the play output)}],
    narrowest level first.

    failed: the failing nodes; hosts: every node diagnosed; places: {host: place} (what _diagnose_places
    gives; a record that cannot be read leaves that node unplaced); share: the run's share (DEFAULT_SHARE when
    None); levels: LEVELS unless given."""
    levels = LEVELS if levels is None else levels
    check_levels(levels)
    places = places if isinstance(places, dict) else {}
    share = DEFAULT_SHARE if share is None else float(share)
    hosts = list(dict.fromkeys(safe_text.to_text(h) for h in hosts or []))
    failing = set(safe_text.to_text(h) for h in failed or []) & set(hosts)
    where = dict((h, _place(places.get(h))) for h in hosts)
    out, explained = [], set()
    for row in levels:
        need = share if row.get("share") is None else float(row["share"])
        groups = {}
        for host in hosts:
            key = _key(where[host], row)
            if key is not None:
                groups.setdefault(key, []).append(host)
        if len(groups) < 2:
            continue  # one place alone compares with nothing
        sick = dict((key, [h for h in members if h in failing]) for key, members in groups.items())
        # what a narrower blame holds is named already: it neither counts here nor makes a place unhealthy
        left = dict((key, [h for h in bad if h not in explained]) for key, bad in sick.items())
        reached = [key for key in groups
                   if len(left[key]) >= max(row["min_failing"], 1) and len(left[key]) >= need * len(groups[key])]
        if len(reached) != 1:
            continue  # none, or spread over several places
        key = reached[0]
        bad = sick[key]
        place = dict((part, value) for part, value in zip(row["parts"], key) if value)
        item = {"level": row["level"], "suspect": row["suspect"], "place": place, "where": fd.place_words(place),
                "failing": len(bad), "total": len(groups[key]), "share": round(len(bad) / float(len(groups[key])), 2),
                "hosts": bad}
        item["line"] = _line(item, _words(row["level"]))
        out.append(item)
        explained.update(bad)
    return out


def lines(blames):
    """The blames' lines, for the play output: one per blamed place."""
    return [item["line"] for item in blames or [] if isinstance(item, dict) and item.get("line")]
