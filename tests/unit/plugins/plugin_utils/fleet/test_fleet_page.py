# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet page: repeat offenders first, then the most failures; a day strip per host and per sub-block;
node text escaped, never markup; nothing that runs or loads; a new kind of record gets its count everywhere."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.fleet import fleet_page, ledger

DAY = ledger.DAY
NOW = 400 * DAY + 3600
HOSTILE = '<img src=x onerror="alert(1)"><script>document.title="owned"</script>'


def place(host, subblock="s1", block="b1"):
    return {"cluster": "c1", "block": block, "subblock": subblock, "host": host}


def finding(host, when, cause="Xid 79: fallen off the bus", **more):
    out = {"kind": "finding", "host": host, "time": when, "node": "vm-" + host, "component": "gpu",
           "subject": "GPU 3", "cause": cause, "place": place(host, **more)}
    return out


def outcome(host, when):
    return {"kind": "outcome", "host": host, "time": when, "outcome": "cleared", "rung": "reset_gpu",
            "node": "vm-" + host, "place": place(host)}


def records(raws):
    out, _new, problems = ledger.add([], raws)
    assert problems == []
    return out


def fleet():
    return records([
        # h-busy: three failures, no repair; h-repeat: failed, cleared, failed again (a repeat offender)
        finding("h-busy", NOW - 3 * DAY), finding("h-busy", NOW - 2 * DAY, cause="row remap pending"),
        finding("h-busy", NOW - 2 * DAY, cause="NVLink down"),
        finding("h-repeat", NOW - 5 * DAY, subblock="s2"), outcome("h-repeat", NOW - 4 * DAY),
        finding("h-repeat", NOW - DAY, cause=HOSTILE, subblock="s2"),
    ])


def rows(page, table):
    body = re.search(r'<table id="%s">.*?<tbody>(.*?)</tbody>' % table, page, re.S).group(1)
    return re.findall(r"<tr( class=\"repeat\")?>(.*?)</tr>", body, re.S)


def test_repeat_offenders_first_then_the_most_failures():
    page = fleet_page.render(fleet(), NOW)
    hosts = rows(page, "hosts")
    assert [re.search(r"<td>(h-[a-z]+)</td>", cells).group(1) for _c, cells in hosts] == ["h-repeat", "h-busy"]
    assert [bool(marked) for marked, _cells in hosts] == [True, False]
    subblocks = rows(page, "subblocks")
    assert [re.findall(r"<td>(s\d)</td>", cells) for _c, cells in subblocks] == [["s2"], ["s1"]]
    assert "2 physical host(s), 1 with a repeat failure" in page


def test_each_row_has_a_strip_of_the_last_days_with_a_bar_a_day_that_failed():
    page = fleet_page.render(fleet(), NOW)
    busy = [cells for _c, cells in rows(page, "hosts") if "<td>h-busy</td>" in cells][0]
    bars = re.findall(r'data-date="([0-9-]+)" data-failures="(\d+)"[^>]* height="(\d+)"', busy)
    days = fleet_page.day_list(NOW)
    assert [(d, int(n)) for d, n, _h in bars] == [(days[-4], 1), (days[-3], 2)]
    # the busiest day of the page is full height, the others in proportion
    assert [int(h) for _d, _n, h in bars] == [fleet_page.BAR_HEIGHT // 2, fleet_page.BAR_HEIGHT]
    assert busy.count('class="day"') == fleet_page.DAYS


def test_node_text_is_escaped_and_nothing_may_run_or_load():
    page = fleet_page.render(fleet(), NOW, title='Fleet <b>"x"</b>')
    assert "<script" not in page and "<img" not in page and "onerror=\"" not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
    assert "<title>Fleet &lt;b&gt;&quot;x&quot;&lt;/b&gt;</title>" in page
    assert "default-src &#x27;none&#x27;" in page


def test_an_empty_ledger_is_a_page_that_says_so():
    page = fleet_page.render([], NOW)
    assert "0 physical host(s)" in page and page.count("no records") == 3


def test_a_throwaway_kind_gets_its_count_column_on_both_tables(monkeypatch):
    row = {"kind": "probe", "required": ("note",), "optional": (), "says": lambda r: "probe %s" % r["note"],
           "failure": lambda r: False, "clears": lambda r: False, "reported": lambda r: False}
    monkeypatch.setattr(ledger, "KINDS", ledger.KINDS + (row,))
    page = fleet_page.render(records([{"kind": "probe", "host": "h-9", "time": NOW, "note": "n",
                                       "place": place("h-9")}]), NOW)
    assert "probe 1" in rows(page, "hosts")[0][1] and "probe 1" in rows(page, "subblocks")[0][1]
    assert "probe n" in page
