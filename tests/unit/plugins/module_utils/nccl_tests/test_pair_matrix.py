# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pair busbw matrix: topological order and groups, last results, slow pairs, and its SVG."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
from xml.etree import ElementTree as ET

from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import pair_matrix as pm

NS = "{http://www.w3.org/2000/svg}"
BLOCK_A, BLOCK_B = "a" * 32, "b" * 32
SUB_1, SUB_2, SUB_3 = "1" * 32, "2" * 32, "3" * 32


def place(block, subblock, host, cluster="c1"):
    return {"cluster": cluster, "block": block, "subblock": subblock, "host": host}


def entry(a, b, ok, busbw, reasons=None, **extra):
    item = {"pair": [a, b], "ok": ok, "reasons": reasons or ([] if ok else ["all_gather: slow"]),
            "busbw_gbps": {"all_gather": busbw}, "seconds": 1.0}
    item.update(extra)
    return item


def result(rounds, topo=None, singles=None, collectives=(("all_gather", 169.2),), nodes=None, runs=None):
    names = nodes or sorted(set(n for rnd in rounds for e in rnd for n in e["pair"]))
    return {"nodes": names, "topology": topo or {}, "runs": runs or [],
            "collectives": [{"collective": c, "required_gbps": r, "status": "fail"} for c, r in collectives],
            "pairwise": {"rounds": rounds, "single_node": singles or {}, "notes": [], "bad": [], "unknown": []}}


TOPO = {
    "n0": place(BLOCK_B, SUB_1, "h0"),
    "n1": place(BLOCK_A, SUB_2, "h1"),
    "n2": place(BLOCK_A, SUB_1, "h2"),
    "n3": {},
    "n4": place(BLOCK_A, SUB_2, "h0"),
    "n5": place(BLOCK_A, SUB_1, "h1"),
}


def six():
    return result([[entry("n0", "n1", True, 180.0), entry("n2", "n3", False, 90.0), entry("n4", "n5", True, 200.0)],
                   [entry("n2", "n0", False, 91.0), entry("n3", "n1", True, 185.0)]],
                  topo=TOPO, nodes=["n0", "n1", "n2", "n3", "n4", "n5"])


def test_nodes_follow_the_topology_and_groups_are_blocks_and_subblocks():
    m = pm.matrix(six())
    # block a (sub-block 1: hosts h1, h2; sub-block 2: hosts h0, h1), then block b, then the unplaced node
    assert m["nodes"] == ["n5", "n2", "n4", "n1", "n0", "n3"]
    assert [(b["id"], b["label"], b["start"], b["end"]) for b in m["blocks"]] == [
        ("c1/" + BLOCK_A, "aaaaaaaa~", 0, 4), ("c1/" + BLOCK_B, "bbbbbbbb~", 4, 5), (None, "unplaced", 5, 6)]
    assert [(s["id"], s["label"], s["start"], s["end"]) for s in m["subblocks"]] == [
        ("c1/%s/%s" % (BLOCK_A, SUB_1), "11111111~", 0, 2), ("c1/%s/%s" % (BLOCK_A, SUB_2), "22222222~", 2, 4),
        ("c1/%s/%s" % (BLOCK_B, SUB_1), "11111111~", 4, 5), (None, "unplaced", 5, 6)]
    assert m["subblocks"][2]["block"] == "c1/" + BLOCK_B


def test_same_subblock_name_in_two_blocks_is_two_groups_and_clusters_are_named_when_several():
    topo = {"x": place("b1", "s1", "h1"), "y": place("b2", "s1", "h1"), "z": place("b1", "s1", "h2", cluster="c2")}
    m = pm.matrix(result([[entry("x", "y", True, 180.0)]], topo=topo, nodes=["x", "y", "z"]))
    assert m["nodes"] == ["x", "y", "z"]
    assert [(s["start"], s["end"]) for s in m["subblocks"]] == [(0, 1), (1, 2), (2, 3)]
    assert [b["label"] for b in m["blocks"]] == ["c1/b1", "c1/b2", "c2/b1"]


def test_cells_are_symmetric_and_untested_pairs_are_empty():
    m = pm.matrix(six())
    at = dict((n, i) for i, n in enumerate(m["nodes"]))
    cell = m["cells"][at["n0"]][at["n1"]]
    assert cell is m["cells"][at["n1"]][at["n0"]]
    assert cell["busbw"] == 180.0 and cell["ok"] and cell["round"] == 1 and cell["reasons"] == []
    assert cell["required_gbps"] == 169.2 and cell["locality"] == "cluster"
    assert m["cells"][at["n0"]][at["n5"]] is None
    assert m["cells"][at["n0"]][at["n0"]] is None


def test_a_pair_tested_again_keeps_its_last_result():
    res = result([[entry("a", "b", False, 50.0)], [entry("a", "c", True, 180.0)], [entry("b", "a", True, 190.0)]])
    m = pm.matrix(res)
    cell = m["cells"][0][1]
    assert cell["ok"] and cell["busbw"] == 190.0 and cell["round"] == 3 and cell["pair"] == ["b", "a"]
    assert pm.slow_cells(res) == []
    # and the other way round: a pass, then a failure
    res = result([[entry("a", "b", True, 190.0)], [entry("b", "a", False, 60.0)]])
    assert [c["pair"] for c in pm.slow_cells(res)] == [["b", "a"]]


def test_single_node_runs_go_on_the_diagonal_and_are_not_slow_pairs():
    singles = {"a": {"status": "fail", "reasons": ["GPU fault"], "busbw_gbps": {"all_gather": 10.0}},
               "b": {"status": "pass", "reasons": [], "busbw_gbps": {"all_gather": 400.0}},
               "lonely": {"status": "pass", "reasons": [], "busbw_gbps": {"all_gather": 399.0}}}
    m = pm.matrix(result([[entry("a", "b", True, 180.0)]], singles=singles))
    assert m["nodes"] == ["a", "b", "lonely"]
    assert m["cells"][0][0]["ok"] is False and m["cells"][0][0]["round"] == 0
    assert m["cells"][1][1]["busbw"] == 400.0 and m["cells"][2][2]["pair"] == ["lonely", "lonely"]
    assert pm.slow_cells(result([[entry("a", "b", True, 180.0)]], singles=singles)) == []


def test_slow_cells_are_named_worst_first():
    res = six()
    res["pairwise"]["rounds"].append([entry("n4", "n1", True, 160.0, locality="subblock"),
                                      entry("n5", "n3", False, None, reasons=["all_gather: exit code 124"])])
    slow = pm.slow_cells(res)
    assert [c["pair"] for c in slow] == [["n5", "n3"], ["n2", "n3"], ["n2", "n0"], ["n4", "n1"]]
    first = slow[0]
    assert first["busbw_gbps"] is None and first["collective"] == "all_gather" and first["locality"] == "unknown"
    assert first["subblocks"] == ["c1/%s/%s" % (BLOCK_A, SUB_1), None]
    cross = slow[2]
    assert cross["locality"] == "cluster" and cross["required_gbps"] == 169.2 and cross["round"] == 2
    assert cross["subblocks"] == ["c1/%s/%s" % (BLOCK_A, SUB_1), "c1/%s/%s" % (BLOCK_B, SUB_1)]
    # passed but below the bar: listed, after every failure; the entry's own locality is kept
    assert slow[3]["ok"] is True and slow[3]["locality"] == "subblock" and slow[3]["busbw_gbps"] == 160.0
    assert set(slow[0]) >= {"pair", "collective", "busbw_gbps", "required_gbps", "locality", "subblocks"}


def test_a_pair_is_coloured_and_named_against_the_bar_it_was_judged_by():
    # A4X: a pair inside one NVLink domain has the domain's bar, a pair across domains the network's
    runs = [{"kind": "pair", "collective": "all_gather", "hosts": ["d1", "d2"],
             "verdict": {"required_gbps": 408.6}},
            {"kind": "pair", "collective": "all_gather", "hosts": ["d3", "x1"],
             "verdict": {"required_gbps": 144.0}}]
    res = result([[entry("d1", "d2", False, 300.0), entry("d3", "x1", True, 150.0)]], runs=runs,
                 collectives=(("all_gather", 408.6),))
    m = pm.matrix(res)
    assert m["required_gbps"] == 408.6
    assert m["cells"][2][3]["required_gbps"] == 144.0 and pm.colour(m["cells"][2][3]) != pm.SLOW_COLOUR
    assert [(c["pair"], c["required_gbps"]) for c in pm.slow_cells(res)] == [(["d1", "d2"], 408.6)]


def test_collective_default_and_choice():
    res = result([[{"pair": ["a", "b"], "ok": True, "reasons": [],
                    "busbw_gbps": {"all_gather": 180.0, "all_reduce": 90.0}}]],
                 collectives=(("all_reduce", 100.0), ("all_gather", 169.2)))
    assert pm.collectives(res) == ["all_reduce", "all_gather"]
    default = pm.matrix(res)
    assert default["collective"] == "all_reduce" and default["cells"][0][1]["busbw"] == 90.0
    assert [c["pair"] for c in pm.slow_cells(res)] == [["a", "b"]]
    assert pm.matrix(res, "all_gather")["cells"][0][1]["busbw"] == 180.0
    assert pm.slow_cells(res, "all_gather") == []


def svg_of(res, **kw):
    text = pm.svg_matrix(pm.matrix(res), **kw)
    return text, ET.fromstring(text)


def titled(root, word):
    return [r for r in root.iter(NS + "rect") if r.find(NS + "title") is not None
            and word in r.find(NS + "title").text]


def test_svg_is_xml_with_a_red_cell_for_the_failed_pair_and_group_lines():
    text, root = svg_of(six())
    assert root.tag == NS + "svg" and "<script" not in text and "href" not in text
    failed = titled(root, "n2 + n3")
    assert len(failed) == 2 and all(r.get("fill") == pm.SLOW_COLOUR for r in failed)
    assert "FAIL" in failed[0].find(NS + "title").text and "90.0 GB/s" in failed[0].find(NS + "title").text
    good = titled(root, "n4 + n5")
    assert good and all(r.get("fill") not in (pm.SLOW_COLOUR, pm.UNTESTED_COLOUR) for r in good)
    widths = [line.get("stroke-width") for line in root.iter(NS + "line")]
    # one sub-block boundary inside a block (thin), two block boundaries (thick), each drawn across and
    # down, and one of each in the legend
    assert widths.count("2.5") == 2 * 2 + 1 and widths.count("1") == 2 * 1 + 1
    texts = [t.text for t in root.iter(NS + "text")]
    assert "aaaaaaaa~" in texts and "11111111~" in texts and "n0" in texts


def test_svg_of_many_nodes_is_bounded_and_keeps_only_group_labels():
    names = ["node-%03d" % i for i in range(96)]
    topo = dict((n, place("b%d" % (i // 32), "s%d" % (i // 16), "h%03d" % i)) for i, n in enumerate(names))
    rounds = [[entry(names[i], names[i + 1], i % 10 != 0, 180.0) for i in range(0, 96, 2)]]
    text, root = svg_of(result(rounds, topo=topo, nodes=names))
    assert int(root.get("width")) <= 1200 and int(root.get("height")) <= 800
    texts = [t.text for t in root.iter(NS + "text")]
    assert not [t for t in texts if t.startswith("node-")]
    assert {"b0", "b1", "b2", "s0", "s5"} <= set(texts)
    assert len(titled(root, "node-000 + node-001")) == 2 and len(text) < 100000


def test_svg_escapes_hostile_names():
    hostile = '<script>alert("x")</script>&\x01'
    res = result([[entry(hostile, "ok-node", False, 10.0)]],
                 topo={hostile: place('<b onload="x">', "s&1", "h")})
    text, root = svg_of(res, title="t <i>")
    assert "<script>" not in text and "<b onload" not in text and "<i>" not in text
    assert titled(root, '<script>alert("x")</script>&')


def test_svg_without_nodes():
    assert "no data" in pm.svg_matrix(pm.matrix({}))


def test_compact_is_strict_json_and_none_without_rounds():
    res = six()
    res["pairwise"]["rounds"][0][0]["busbw_gbps"]["all_gather"] = float("nan")
    doc = pm.compact(res)
    json.dumps(doc, allow_nan=False)
    assert doc["nodes"] == ["n5", "n2", "n4", "n1", "n0", "n3"]
    cells = doc["collectives"]["all_gather"]["cells"]
    assert [3, 4, None, True, 1, 169.2] in cells
    assert all(row <= col for row, col, busbw, ok, rnd, limit in cells)
    assert [c["pair"] for c in doc["collectives"]["all_gather"]["slow"]][0] == ["n2", "n3"]
    assert pm.compact({"pairwise": None}) is None and pm.compact({}) is None
