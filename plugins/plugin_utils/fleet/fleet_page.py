# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet page: the ledger drawn as one HTML file, per physical host and per sub-block, over time.

Repeat offenders come first (a host that failed again after a repair that cleared it), then the hosts with
the most failures. Each row has a strip of the last DAYS days, one bar a day, as tall as that day's failures.

The page is a file an engineer opens from a report directory, so it carries everything it shows: no script,
no style sheet, no image from elsewhere, and a content security policy that lets nothing run or load. Every
text in it may quote a node (a finding's cause, a drain reason) and is escaped, never markup.

COLUMNS is each table's columns, one row a column (its heading and how a summary fills its cell); the kinds
of record come from the ledger's own table (ledger.KINDS), so a new kind gets its count column everywhere.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import html
import time

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.fleet import ledger

DAYS = 30
# the latest records listed below the tables (all of them are in the ledger)
MAX_LISTED = 200
# a bar's height in pixels for the busiest day of the page, and each bar's width
BAR_HEIGHT = 24
BAR_WIDTH = 4
POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin-bottom: 2em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
tr.repeat td { background: #fde8e8; }
td.n { text-align: right; }
svg rect.bar { fill: #c0392b; }
svg rect.day { fill: #eee; }
"""


def _esc(value):
    return html.escape("" if value is None else str(value), quote=True)


def _day(seconds):
    return time.strftime("%Y-%m-%d", time.gmtime(seconds))


def day_list(now, days=DAYS):
    """The UTC dates of the last days up to now's, oldest first."""
    return [_day(now - ledger.DAY * back) for back in range(days - 1, -1, -1)]


def strip(counts, dates, peak):
    """An inline SVG of one bar a date, as tall as its failures against the page's peak; its title and
    aria-label say the figures in words, so the strip reads without the picture."""
    width = BAR_WIDTH * len(dates)
    said = ", ".join("%s: %d" % (d, counts.get(d, 0)) for d in dates if counts.get(d))
    bars = []
    for index, date in enumerate(dates):
        count = counts.get(date, 0)
        x = index * BAR_WIDTH
        bars.append('<rect class="day" x="%d" y="0" width="%d" height="%d"/>' % (x, BAR_WIDTH - 1, BAR_HEIGHT))
        if count:
            height = max(2, int(round(BAR_HEIGHT * count / float(peak or 1))))
            bars.append('<rect class="bar" data-date="%s" data-failures="%d" x="%d" y="%d" width="%d" height="%d"/>'
                        % (date, count, x, BAR_HEIGHT - height, BAR_WIDTH - 1, height))
    label = "failures a day, %s to %s: %s" % (dates[0], dates[-1], said or "none")
    return ('<svg class="strip" role="img" aria-label="%s" width="%d" height="%d"><title>%s</title>%s</svg>'
            % (_esc(label), width, BAR_HEIGHT, _esc(label), "".join(bars)))


def _place(summary):
    place = summary.get("place") or {}
    return " / ".join("%s %s" % (part, place[part]) for part in ("cluster", "block", "subblock") if place.get(part))


def _counts(summary):
    return ", ".join("%s %d" % (kind, summary["counts"].get(kind, 0)) for kind in ledger.kinds())


# The columns of each table: (heading, how a summary fills the cell: text, or ("svg", markup) for the strip).
# The strip's cell is filled by render(), which knows the page's dates and peak.
COLUMNS = {
    "hosts": (
        ("physical host", lambda s, ctx: s["host"]),
        ("place", lambda s, ctx: _place(s) or "not known"),
        ("failures", lambda s, ctx: s["failures"]),
        ("records", lambda s, ctx: _counts(s)),
        ("last %d days" % DAYS, lambda s, ctx: ("svg", strip(s["days"], ctx["dates"], ctx["peak"]))),
        ("first seen", lambda s, ctx: _day(s["first"])),
        ("last seen", lambda s, ctx: _day(s["last"])),
        ("GPUs named", lambda s, ctx: ", ".join(s["gpus"]) or "-"),
        ("repeat offender", lambda s, ctx: s["repeat"] or "-"),
    ),
    "subblocks": (
        ("block", lambda s, ctx: s["block"] or "not known"),
        ("sub-block", lambda s, ctx: s["subblock"] or "not known"),
        ("hosts", lambda s, ctx: len(s["hosts"])),
        ("failures", lambda s, ctx: s["failures"]),
        ("records", lambda s, ctx: _counts(s)),
        ("last %d days" % DAYS, lambda s, ctx: ("svg", strip(s["days"], ctx["dates"], ctx["peak"]))),
        ("repeat offenders", lambda s, ctx: ", ".join(s["repeat_hosts"]) or "-"),
    ),
}


def _table(name, summaries, ctx, repeat_of):
    head = "".join("<th>%s</th>" % _esc(heading) for heading, _fill in COLUMNS[name])
    rows = []
    for summary in summaries:
        cells = []
        for _heading, fill in COLUMNS[name]:
            value = fill(summary, ctx)
            if isinstance(value, tuple) and value[0] == "svg":
                cells.append("<td>%s</td>" % value[1])
            else:
                numeric = isinstance(value, int) and not isinstance(value, bool)
                cells.append('<td%s>%s</td>' % (' class="n"' if numeric else "", _esc(value)))
        rows.append('<tr%s>%s</tr>' % (' class="repeat"' if repeat_of(summary) else "", "".join(cells)))
    body = "".join(rows) or '<tr><td colspan="%d">no records</td></tr>' % len(COLUMNS[name])
    return '<table id="%s"><thead><tr>%s</tr></thead><tbody>%s</tbody></table>' % (name, head, body)


def render(records, now, title="Fleet", source="the fleet ledger"):
    """The page for the ledger's records (as ledger.load gives them) at now (seconds since the epoch)."""
    dates = day_list(now)
    hosts = ledger.by_host(records)
    subblocks = ledger.by_subblock(records, hosts)
    peak = max([s["days"].get(d, 0) for s in hosts + subblocks for d in dates] or [0])
    ctx = {"dates": dates, "peak": peak}
    latest = sorted(records, key=lambda r: r["time"], reverse=True)[:MAX_LISTED]
    listed = "".join("<li>%s</li>" % _esc(ledger.says(r)) for r in latest) or "<li>no records</li>"
    repeat = sum(1 for s in hosts if s["repeat"])
    # the latest record's time, not the drawing's: the same ledger on the same day draws the same page
    summary = ("%d physical host(s), %d with a repeat failure after a repair that cleared it; %d record(s) from "
               "%s, the latest %s UTC" % (len(hosts), repeat, len(records), source, time.strftime(
                   "%Y-%m-%d %H:%M", time.gmtime(latest[0]["time"])) if latest else "none"))
    return "\n".join((
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" content="%s">' % _esc(POLICY),
        "<title>%s</title><style>%s</style></head><body>" % (_esc(title), STYLE),
        "<h1>%s</h1>" % _esc(title),
        '<p id="summary">%s</p>' % _esc(summary),
        "<h2>Physical hosts, repeat offenders first</h2>",
        _table("hosts", hosts, ctx, lambda s: s["repeat"]),
        "<h2>Sub-blocks</h2>",
        _table("subblocks", subblocks, ctx, lambda s: s["repeat_hosts"]),
        "<h2>Latest records</h2>",
        '<ol id="records">%s</ol>' % listed,
        "</body></html>",
        "",
    ))
