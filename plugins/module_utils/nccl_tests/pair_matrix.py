# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pairwise busbw as a matrix: nodes in topological order, grouped by block and sub-block.

Input is the result of the ``gpudirect.gcp.nccl_tests`` module, or the report
built from it (same keys): ``pairwise.rounds`` and ``pairwise.single_node``,
``collectives``, ``nodes``, ``runs`` and ``topology`` (node -> cluster, block,
subblock, host).  Pure Python, stdlib only.

A pair tested in several rounds keeps its last result.  A pair's ``ok`` is its
verdict; the bar (``required_gbps``) is the one its own runs were judged
against (an A4X pair inside one NVLink domain has a higher one), else the
collective's, and serves only to colour and to name pairs below it.

The SVG heat map stays bounded: the grid is at most GRID_MAX_PX wide (cells of
at most CELL_MAX_PX), only tested cells are drawn on an untested background,
per-node axis labels are drawn up to NODE_LABELS_MAX nodes and left out above
(every cell's tooltip names its pair), and block and sub-block labels are kept
wherever their band is tall enough to hold one (GROUP_LABEL_MIN_PX).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import topology
from ansible_collections.gpudirect.gcp.plugins.module_utils.common.safe_text import html as esc

GRID_MAX_PX = 576
CELL_MAX_PX = 18
NODE_LABELS_MAX = 48
GROUP_LABEL_MIN_PX = 11
BAND_PX = 72
NODE_LABEL_PX = 120
NODE_LABEL_CHARS = 18

SLOW_COLOUR = "#d62728"
UNTESTED_COLOUR = "#e6e6e6"
NO_FIGURE_COLOUR = "#9e9e9e"
ALONE_COLOUR = "#6baed6"
GREEN_LIGHT = (199, 233, 192)
GREEN_DARK = (0, 109, 44)
# the green is at its darkest from this many times the bar up
GOOD_RATIO = 1.25

_NOT_XML = re.compile(u"[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd]")
_FONT = 'font-family="sans-serif"'


def _text(value):
    """Text for the SVG: escaped, without the characters XML cannot hold."""
    return esc(_NOT_XML.sub(u"\ufffd", u"" if value is None else u"%s" % (value,)))


def _number(value):
    """A finite float, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def short_path(ident):
    """A block or sub-block id (cluster/block/sub-block of 32-hex hashes) with every part shortened."""
    if not ident:
        return None
    return "/".join(topology.short(part) for part in str(ident).split("/"))


def _placements(result):
    raw = result.get("topology") or {}
    if not isinstance(raw, dict):
        return {}
    return dict((str(name), topology.normalize(topo)) for name, topo in raw.items())


def _rounds(result):
    pairwise = result.get("pairwise") or {}
    if not isinstance(pairwise, dict):
        return []
    return [rnd for rnd in pairwise.get("rounds") or [] if isinstance(rnd, list)]


def _singles(result):
    pairwise = result.get("pairwise") or {}
    singles = pairwise.get("single_node") if isinstance(pairwise, dict) else None
    return singles if isinstance(singles, dict) else {}


def _pair(entry):
    pair = entry.get("pair") if isinstance(entry, dict) else None
    if not isinstance(pair, (list, tuple)) or len(pair) != 2 or pair[0] == pair[1]:
        return None
    return [str(pair[0]), str(pair[1])]


def collectives(result):
    """The collectives of a run: result["collectives"] order, then any only the pair entries name."""
    out = []
    for verdict in result.get("collectives") or []:
        name = verdict.get("collective") if isinstance(verdict, dict) else None
        if name and name not in out:
            out.append(name)
    for rnd in _rounds(result):
        for entry in rnd:
            figures = entry.get("busbw_gbps") if isinstance(entry, dict) else None
            for name in sorted(figures or {}, key=str):
                if name not in out:
                    out.append(name)
    return out


def _collective_bar(result, coll):
    for verdict in result.get("collectives") or []:
        if isinstance(verdict, dict) and verdict.get("collective") == coll:
            return _number(verdict.get("required_gbps"))
    return None


def _pair_bars(result, coll):
    """{frozenset(pair): bar} from the pair runs of the collective (the last run of a pair wins)."""
    bars = {}
    for run in result.get("runs") or []:
        if not isinstance(run, dict) or run.get("kind") != "pair" or run.get("collective") != coll:
            continue
        required = _number((run.get("verdict") or {}).get("required_gbps"))
        hosts = run.get("hosts") or []
        if len(hosts) == 2:
            bars[frozenset(str(h) for h in hosts)] = required
    return bars


def _pair_cells(result, coll, placed):
    """{frozenset(pair): cell} holding the last result of every pair tested."""
    bars = _pair_bars(result, coll)
    default_bar = _collective_bar(result, coll)
    cells = {}
    for number, rnd in enumerate(_rounds(result), 1):
        for entry in rnd:
            pair = _pair(entry)
            if not pair:
                continue
            key = frozenset(pair)
            required = bars.get(key)
            place = entry.get("locality") or topology.locality(placed.get(pair[0]), placed.get(pair[1]))
            cells[key] = {"pair": pair, "busbw": _number((entry.get("busbw_gbps") or {}).get(coll)),
                          "ok": bool(entry.get("ok")), "round": number,
                          "reasons": [str(r) for r in entry.get("reasons") or []],
                          "required_gbps": default_bar if required is None else required, "locality": str(place)}
    return cells


def _single_cells(result, coll):
    cells = {}
    for name, entry in _singles(result).items():
        if not isinstance(entry, dict):
            continue
        cells[str(name)] = {"pair": [str(name), str(name)],
                            "busbw": _number((entry.get("busbw_gbps") or {}).get(coll)),
                            "ok": entry.get("status") != "fail", "round": 0,
                            "reasons": [str(r) for r in entry.get("reasons") or []],
                            "required_gbps": None, "locality": None}
    return cells


def _ordered(result, pairs, singles, placed):
    names = []
    seen = set()
    for name in ([str(n) for n in result.get("nodes") or []] + [n for c in pairs.values() for n in c["pair"]]
                 + sorted(singles)):
        if name not in seen:
            seen.add(name)
            names.append(name)
    return sorted(names, key=lambda n: topology.sort_key(placed.get(n), n))


def _block_label(topo, many_clusters):
    if not topo:
        return "unplaced"
    if not topo.get("block"):
        return "no block"
    if many_clusters and topo.get("cluster"):
        return "%s/%s" % (topology.short(topo["cluster"]), topology.short(topo["block"]))
    return topology.short(topo["block"])


def _subblock_label(topo):
    if not topo:
        return "unplaced"
    if not topo.get("subblock") or not topo.get("block"):
        return "no sub-block"
    return topology.short(topo["subblock"])


def groups(names, placed):
    """(blocks, subblocks) of nodes already in topological order: runs of consecutive nodes.

    Each group is {id, label, start, end} (end exclusive; id None for nodes without that level);
    a sub-block also names its block.  Every node is in exactly one of each."""
    many = len(set(placed.get(n, {}).get("cluster") for n in names if placed.get(n))) > 1
    blocks, subblocks = [], []
    last_block = last_sub = None
    for index, name in enumerate(names):
        topo = placed.get(name) or {}
        bid, sid = topology.block_id(topo), topology.subblock_id(topo)
        block_key, sub_key = (bool(topo), bid), (bool(topo), bid, sid)
        if not blocks or block_key != last_block:
            blocks.append({"id": bid, "label": _block_label(topo, many), "start": index, "end": index})
            last_sub = None
        if not subblocks or sub_key != last_sub:
            subblocks.append({"id": sid, "label": _subblock_label(topo), "block": bid, "start": index,
                              "end": index})
        last_block, last_sub = block_key, sub_key
        blocks[-1]["end"] = subblocks[-1]["end"] = index + 1
    return blocks, subblocks


def _setup(result, collective):
    result = result if isinstance(result, dict) else {}
    if collective is None:
        names = collectives(result)
        collective = names[0] if names else None
    return result, collective, _placements(result)


def matrix(result, collective=None):
    """The busbw matrix of the pairs tested, for one collective (default: the run's first).

    Returns {collective, required_gbps (the collective's bar), nodes (topological order), blocks,
    subblocks (see groups()), cells}: cells is a nodes x nodes grid, symmetric, None where untested,
    else {pair, busbw, ok, round, reasons, required_gbps, locality}.  The diagonal holds the node's
    single-node run (round 0, no bar, no locality) when there was one."""
    result, coll, placed = _setup(result, collective)
    pairs = _pair_cells(result, coll, placed)
    singles = _single_cells(result, coll)
    names = _ordered(result, pairs, singles, placed)
    index = dict((name, i) for i, name in enumerate(names))
    grid = [[None] * len(names) for name in names]
    for cell in pairs.values():
        row, col = index[cell["pair"][0]], index[cell["pair"][1]]
        grid[row][col] = grid[col][row] = cell
    for name, cell in singles.items():
        grid[index[name]][index[name]] = cell
    blocks, subblocks = groups(names, placed)
    return {"collective": coll, "required_gbps": _collective_bar(result, coll), "nodes": names,
            "blocks": blocks, "subblocks": subblocks, "cells": grid}


def is_slow(cell):
    """A pair cell that failed, or whose busbw is below its bar."""
    busbw, limit = cell.get("busbw"), cell.get("required_gbps")
    return not cell.get("ok") or (busbw is not None and limit is not None and busbw < limit)


def slow_cells(result, collective=None):
    """The pairs that failed or are below the bar, worst first.

    Each is {pair, collective, busbw_gbps, required_gbps, locality, subblocks: [id_a, id_b], ok, round,
    reasons}.  Worst first: no figure, then the lowest share of its bar (of the best pair without a bar),
    a failure before a pass, then by names.  Single-node runs are not pairs and are left out."""
    result, coll, placed = _setup(result, collective)
    cells = list(_pair_cells(result, coll, placed).values())
    best = max([c["busbw"] for c in cells if c["busbw"] is not None] or [0.0])
    out = []
    for cell in cells:
        if not is_slow(cell):
            continue
        first, second = cell["pair"]
        out.append({"pair": list(cell["pair"]), "collective": coll, "busbw_gbps": cell["busbw"],
                    "required_gbps": cell["required_gbps"], "locality": cell["locality"],
                    "subblocks": [topology.subblock_id(placed.get(first)), topology.subblock_id(placed.get(second))],
                    "ok": cell["ok"], "round": cell["round"], "reasons": list(cell["reasons"])})

    def worst(item):
        busbw, limit = item["busbw_gbps"], item["required_gbps"]
        if busbw is None:
            share = 0.0
        else:
            share = busbw / limit if limit else (busbw / best if best else 0.0)
        return (busbw is not None, share, item["ok"], sorted(item["pair"]))

    return sorted(out, key=worst)


def compact(result):
    """Every collective's matrix in a small JSON-ready form; None without pair rounds.

    {nodes, blocks, subblocks, collectives: {collective: {required_gbps, cells, slow}}}: cells lists
    the tested cells of the upper triangle as [row, column, busbw_gbps, ok, round, required_gbps]
    (row == column: the node's single-node run, round 0), slow is slow_cells()."""
    result = result if isinstance(result, dict) else {}
    if not _rounds(result):
        return None
    placed = _placements(result)
    out = {"collectives": {}}
    for coll in collectives(result) or [None]:
        pairs = _pair_cells(result, coll, placed)
        singles = _single_cells(result, coll)
        if "nodes" not in out:
            out["nodes"] = _ordered(result, pairs, singles, placed)
            out["blocks"], out["subblocks"] = groups(out["nodes"], placed)
        index = dict((name, i) for i, name in enumerate(out["nodes"]))
        cells = []
        for cell in list(pairs.values()) + list(singles.values()):
            row, col = sorted((index[cell["pair"][0]], index[cell["pair"][1]]))
            cells.append([row, col, cell["busbw"], cell["ok"], cell["round"], cell["required_gbps"]])
        out["collectives"][str(coll)] = {"required_gbps": _collective_bar(result, coll), "cells": sorted(cells),
                                         "slow": slow_cells(result, coll)}
    return out


# --- SVG ----------------------------------------------------------------------

def _green(share):
    share = min(1.0, max(0.0, share))
    return "#%02x%02x%02x" % tuple(int(round(lo + (hi - lo) * share)) for lo, hi in zip(GREEN_LIGHT, GREEN_DARK))


def colour(cell, best=None):
    """A cell's fill: red when failed or below its bar, a green that darkens with busbw over the bar
    (over the best pair's busbw when there is no bar), blue for a passed single-node run."""
    if cell["pair"][0] == cell["pair"][1]:
        return ALONE_COLOUR if cell["ok"] else SLOW_COLOUR
    if is_slow(cell):
        return SLOW_COLOUR
    busbw, limit = cell["busbw"], cell["required_gbps"]
    if busbw is None:
        return NO_FIGURE_COLOUR
    if limit:
        return _green((busbw / limit - 1.0) / (GOOD_RATIO - 1.0))
    return _green(busbw / best if best else 1.0)


def _tooltip(cell):
    first, second = cell["pair"]
    figure = "no figure" if cell["busbw"] is None else "%.1f GB/s" % cell["busbw"]
    if first == second:
        text = "%s alone: %s, %s (single-node run)" % (first, figure, "pass" if cell["ok"] else "FAIL")
    else:
        verdict = "FAIL" if not cell["ok"] else ("pass, below the bar" if is_slow(cell) else "pass")
        limit = "" if cell["required_gbps"] is None else " (bar %.1f GB/s)" % cell["required_gbps"]
        text = "%s + %s: %s, %s%s, round %d, %s" % (
            first, second, figure, verdict, limit, cell["round"], cell["locality"])
    if cell["reasons"]:
        text += ": " + "; ".join(cell["reasons"])
    return text[:400]


def _legend(out, x, y, m, best, labels):
    limit = m.get("required_gbps")
    rows = [(SLOW_COLOUR, "failed, or below the bar")]
    if limit:
        rows += [(_green(0.0), "passed, at the bar"), (_green(1.0), "passed, %gx the bar or more" % GOOD_RATIO)]
    else:
        rows += [(_green(0.0), "passed, low busbw"), (_green(1.0), "passed, the best pair")]
    rows += [(NO_FIGURE_COLOUR, "passed, no figure"), (ALONE_COLOUR, "node alone (single-node run)"),
             (UNTESTED_COLOUR, "not tested")]
    for fill, label in rows:
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s" stroke="#999"/>' % (x, y, fill))
        out.append('<text x="%d" y="%d" font-size="11" %s>%s</text>' % (x + 18, y + 10, _FONT, _text(label)))
        y += 16
    for width, label in ((1, "sub-block boundary"), (2.5, "block boundary")):
        out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#000" stroke-width="%s"/>'
                   % (x, x + 12, y + 6, y + 6, width))
        out.append('<text x="%d" y="%d" font-size="11" %s>%s</text>' % (x + 18, y + 10, _FONT, _text(label)))
        y += 16
    notes = ["bar: %.1f GB/s" % limit if limit else "no bar: shades relative to the best pair (%.1f GB/s)" % best]
    notes.append("rows and columns: the same nodes")
    if not labels:
        notes.append("%d nodes: names in the tooltips" % len(m.get("nodes") or []))
    for note in notes:
        out.append('<text x="%d" y="%d" font-size="10" fill="#555" %s>%s</text>' % (x, y + 10, _FONT, _text(note)))
        y += 14
    return y


def svg_matrix(m, title=None):
    """Inline SVG heat map of a matrix() result (no script, no external asset)."""
    names = m.get("nodes") or []
    count = len(names)
    title = title if title is not None else "pair busbw: %s" % (m.get("collective"),)
    if not count:
        return ('<svg xmlns="http://www.w3.org/2000/svg" width="320" height="60" role="img" aria-label="%s">'
                '<text x="10" y="18" font-size="14" %s>%s</text><text x="10" y="44" %s>no data</text></svg>'
                % (_text(title), _FONT, _text(title), _FONT))
    size = min(float(CELL_MAX_PX), GRID_MAX_PX / count)
    labels = count <= NODE_LABELS_MAX
    label_px = NODE_LABEL_PX if labels else 0
    left = 10 + 2 * BAND_PX + label_px + 4
    top = 44 + label_px
    side = size * count
    legend_x = int(left + side + 20)
    cells = m.get("cells") or []
    best = max([c["busbw"] for row in cells for c in row
                if c is not None and c["busbw"] is not None and c["pair"][0] != c["pair"][1]] or [0.0])
    body = []
    body.append('<text x="10" y="18" font-size="14" %s>%s</text>' % (_FONT, _text(title)))
    body.append('<text x="10" y="%d" font-size="10" fill="#555" %s>block</text>' % (top - 6, _FONT))
    body.append('<text x="%d" y="%d" font-size="10" fill="#555" %s>sub-block</text>'
                % (10 + BAND_PX, top - 6, _FONT))
    bands = ((10, m.get("blocks") or [], "block"), (10 + BAND_PX, m.get("subblocks") or [], "sub-block"))
    for x, groups_of, kind in bands:
        for number, group in enumerate(groups_of):
            y, span = top + group["start"] * size, (group["end"] - group["start"]) * size
            body.append('<rect x="%d" y="%.2f" width="%d" height="%.2f" fill="%s"><title>%s %s: %d node(s)</title>'
                        '</rect>' % (x, y, BAND_PX - 2, span, "#f2f2f2" if number % 2 == 0 else "#e2e2e2",
                                     kind, _text(group.get("id") or group.get("label")),
                                     group["end"] - group["start"]))
            if span >= GROUP_LABEL_MIN_PX:
                body.append('<text x="%d" y="%.2f" font-size="10" %s>%s</text>'
                            % (x + 4, y + span / 2 + 3, _FONT, _text(group.get("label"))))
    if labels:
        font = min(10, max(6, int(size) - 2))
        for i, name in enumerate(names):
            mid = (i + 0.5) * size
            label = _text(topology.short(name, NODE_LABEL_CHARS))
            body.append('<text x="%.2f" y="%.2f" font-size="%d" text-anchor="end" %s>%s</text>'
                        % (left - 4, top + mid + font / 3.0, font, _FONT, label))
            body.append('<text x="%.2f" y="%.2f" font-size="%d" transform="rotate(-90 %.2f %.2f)" %s>%s</text>'
                        % (left + mid + font / 3.0, top - 4, font, left + mid + font / 3.0, top - 4, _FONT, label))
    body.append('<rect x="%d" y="%d" width="%.2f" height="%.2f" fill="%s"/>' % (left, top, side, side,
                                                                                UNTESTED_COLOUR))
    for i, row in enumerate(cells):
        for j, cell in enumerate(row):
            if cell is None:
                continue
            body.append('<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"><title>%s</title></rect>'
                        % (left + j * size, top + i * size, size, size, colour(cell, best), _text(_tooltip(cell))))
    block_starts = set(group["start"] for group in m.get("blocks") or [])
    for groups_of, stroke, width, x0 in ((m.get("subblocks") or [], "#555", 1, 10 + BAND_PX),
                                         (m.get("blocks") or [], "#000", 2.5, 10)):
        for group in groups_of:
            if not group["start"] or (width == 1 and group["start"] in block_starts):
                continue
            at = group["start"] * size
            body.append('<line x1="%d" x2="%.2f" y1="%.2f" y2="%.2f" stroke="%s" stroke-width="%s"/>'
                        % (x0, left + side, top + at, top + at, stroke, width))
            body.append('<line x1="%.2f" x2="%.2f" y1="%d" y2="%.2f" stroke="%s" stroke-width="%s"/>'
                        % (left + at, left + at, top, top + side, stroke, width))
    body.append('<rect x="%d" y="%d" width="%.2f" height="%.2f" fill="none" stroke="#999"/>'
                % (left, top, side, side))
    bottom = _legend(body, legend_x, top, m, best, labels)
    width = legend_x + 250
    height = int(max(top + side, bottom)) + 12
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" role="img" aria-label="%s">'
            % (width, height, _text(title)) + "".join(body) + "</svg>")
