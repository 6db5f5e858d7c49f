# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Slurm's topology.conf for the topology/tree plugin, from where each node sits.

The tree is a root switch over one switch per block over one switch per
sub-block over the nodes (or, with levels=("block",), a root over one switch
per block over the nodes).  Switch names are short and stable, compressed the
way cluster-toolkit names them: s0 is the root, s0_<i> the i-th block and
s0_<i>_<j> the j-th sub-block of that block, both in sorted order of the real
ids; a comment line above each switch gives the real ids.  Nodes without a
known block sit under one more switch of the root (``unplaced``), so jobs can
still span them and the placed nodes.

Node lists are Slurm hostlist expressions (``a3-[001-004,007],other``); each
range keeps the width of its numbers, as Slurm's hostlist parser reads the
width of a range from its low end.  Controller-side only, pure Python.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import topology

DEFAULT_LEVELS = ("block", "subblock")
LEVEL_CHOICES = (("block", "subblock"), ("block",))
ROOT = "s0"
# characters a name may have and still be one item of a hostlist expression
# (no brackets, commas, spaces, '=' or '#')
_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
_GENERATED = re.compile(r"^s[0-9]+(_[0-9]+)*$")
_NUMBERED = re.compile(r"^(.*?[^0-9])([0-9]+)$")
# numbers longer than this stay as written (Slurm reads a range into an unsigned long)
_MAX_DIGITS = 18
_UNSAFE_COMMENT = re.compile(r"[^\x21-\x7e]")


def _runs(numbers):
    """Strings of digits -> [[first, last], ...]: consecutive values that one range of one width reproduces."""
    runs = []
    for text in sorted(set(numbers), key=lambda d: (int(d), d)):
        value = int(text)
        for run in runs:
            # a range [lo-hi] expands at the width of lo: the next value must print as written
            if run[2] == value - 1 and "%0*d" % (len(run[0]), value) == text:
                run[1], run[2] = text, value
                break
        else:
            runs.append([text, text, value])
    runs.sort(key=lambda r: (int(r[0]), r[0]))
    return [(r[0], r[1]) for r in runs]


def hostlist(names):
    """Names as one Slurm hostlist expression, deterministic: ``m22-blue-[0-1],m22-green-3``.

    A name ending in a number joins the others with the same prefix, in ranges
    of consecutive numbers of one width (``a3-009,a3-010`` -> ``a3-[009-010]``;
    ``n9,n10`` -> ``n[9-10]``; ``n9,n010`` -> ``n[9,010]``); other names stay as they are."""
    tokens = []
    numbered = {}
    for name in set(names):
        match = _NUMBERED.match(name)
        if match and len(match.group(2)) <= _MAX_DIGITS:
            numbered.setdefault(match.group(1), []).append(match.group(2))
        else:
            tokens.append((name, name))
    for prefix, numbers in numbered.items():
        runs = _runs(numbers)
        if len(runs) == 1 and runs[0][0] == runs[0][1]:
            tokens.append((prefix, prefix + runs[0][0]))
        else:
            ranges = ",".join(lo if lo == hi else "%s-%s" % (lo, hi) for lo, hi in runs)
            tokens.append((prefix, "%s[%s]" % (prefix, ranges)))
    return ",".join(token for _key, token in sorted(tokens))


def _levels(levels):
    if isinstance(levels, str):
        # "block" or "block,subblock", as -e key=value gives it
        levels = [part.strip() for part in levels.split(",")]
    if isinstance(levels, (list, tuple)):
        chosen = tuple(str(level).lower().replace("_", "") for level in levels)
        if chosen in LEVEL_CHOICES:
            return chosen
    raise ValueError("levels must be %s, got %r"
                     % (" or ".join(repr(list(c)) for c in LEVEL_CHOICES), levels))


def _switch_name(name):
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError("unplaced_switch %r is not a name a topology.conf switch can have "
                         "(letters, digits, '.', '_', '-')" % (name,))
    if _GENERATED.match(name):
        raise ValueError("unplaced_switch %r looks like the generated switch names (s0, s0_N, s0_N_M)" % (name,))
    return name


def _kind(value):
    for types, word in ((str, "a string"), (bool, "a boolean"), ((int, float), "a number"), ((list, tuple), "a list")):
        if isinstance(value, types):
            return word
    return "a %s" % type(value).__name__


def _node_topology(name, raw):
    """One node's placement, normalized; raises ValueError naming the node."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError("a Slurm node name is empty or not a string: %s %r" % (_kind(name), name))
    if not _NAME.match(name):
        raise ValueError("node %r: a Slurm hostlist cannot hold this name (letters, digits, '.', '_', '-' only)"
                         % (name,))
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        if hasattr(raw, "keys") and hasattr(raw, "__getitem__"):
            raw = dict((key, raw[key]) for key in raw.keys())
        else:
            raise ValueError("node %r: topology must be a mapping (cluster, block, subblock, host), got %s: %r"
                             % (name, _kind(raw), raw))
    return topology.normalize(raw)


def _comment_text(text):
    """An id as it may stand in a comment line: one line, no spaces or control characters."""
    return _UNSAFE_COMMENT.sub("?", str(text))


def _count(n, what):
    return "%d %s%s" % (n, what, "" if n == 1 else "s")


def _tree(nodes, levels):
    """{block_id: {subblock_id or None: [names]}} and the names without a block."""
    blocks = {}
    unplaced = []
    for name in sorted(nodes, key=lambda n: (str(type(n)), str(n))):
        topo = _node_topology(name, nodes[name])
        block = topology.block_id(topo)
        if not block:
            unplaced.append(name)
            continue
        leaf = topology.subblock_id(topo) if "subblock" in levels else block
        blocks.setdefault(block, {}).setdefault(leaf, []).append(name)
    return blocks, unplaced


def _leaf_order(leaf):
    # known sub-blocks by id, then the block's nodes whose sub-block is not known
    return (leaf is None, leaf or "")


def render(nodes, levels=DEFAULT_LEVELS, unplaced_switch="unplaced"):
    """topology.conf text for nodes: {Slurm node name: topology mapping (a host's gce_topology)}.

    levels: ("block", "subblock") (root, block, sub-block, nodes) or ("block",)
    (root, block, nodes).  A topology of None places nothing.  Raises
    ValueError with one line naming the node (or option) at fault."""
    if not isinstance(nodes, dict):
        raise ValueError("nodes must be a mapping of Slurm node name to topology, got %s" % _kind(nodes))
    if not nodes:
        raise ValueError("no nodes: topology.conf needs at least one")
    levels = _levels(levels)
    unplaced_switch = _switch_name(unplaced_switch)
    blocks, unplaced = _tree(nodes, levels)

    placed = len(nodes) - len(unplaced)
    subblocks = sum(len([leaf for leaf in leaves if leaf]) for leaves in blocks.values())
    if "subblock" in levels:
        shape = "root > block > sub-block > nodes. Switch s0 is the root, s0_<i> a block, s0_<i>_<j> a sub-block"
    else:
        shape = "root > block > nodes. Switch s0 is the root, s0_<i> a block"
    lines = [
        "# Slurm topology.conf for the topology/tree plugin.",
        "# Generated by gpudirect.gcp (filter slurm_topology_conf) from each node's placement",
        "# (gce_topology: cluster, block, sub-block). Do not edit: the next run replaces this file.",
        "# slurmctld reads it on `scontrol reconfigure` or when it restarts.",
        "# Tree: %s," % shape,
        "# numbered in sorted order of the real ids, which the comment above each switch gives.",
        "# %s: %d placed in %s%s, %d without placement."
        % (_count(len(nodes), "node"), placed, _count(len(blocks), "block"),
           " and %s" % _count(subblocks, "sub-block") if "subblock" in levels else "", len(unplaced)),
    ]
    children = ["%s_%d" % (ROOT, i) for i in range(len(blocks))] + ([unplaced_switch] if unplaced else [])
    lines += ["", "# %s: root" % ROOT, "SwitchName=%s Switches=%s" % (ROOT, hostlist(children))]
    for i, block in enumerate(sorted(blocks)):
        name = "%s_%d" % (ROOT, i)
        leaves = blocks[block]
        count = sum(len(v) for v in leaves.values())
        lines.append("")
        if "subblock" not in levels:
            lines.append("# %s: block %s (%s)" % (name, _comment_text(block), _count(count, "node")))
            lines.append("SwitchName=%s Nodes=%s" % (name, hostlist(leaves[block])))
            continue
        ordered = sorted(leaves, key=_leaf_order)
        known = len([leaf for leaf in ordered if leaf])
        lines.append("# %s: block %s (%s, %s)"
                     % (name, _comment_text(block), _count(known, "sub-block"), _count(count, "node")))
        lines.append("SwitchName=%s Switches=%s" % (name, hostlist("%s_%d" % (name, j) for j in range(len(ordered)))))
        for j, leaf in enumerate(ordered):
            what = ("sub-block %s" % _comment_text(leaf) if leaf
                    else "block %s, sub-block not known" % _comment_text(block))
            lines.append("# %s_%d: %s (%s)" % (name, j, what, _count(len(leaves[leaf]), "node")))
            lines.append("SwitchName=%s_%d Nodes=%s" % (name, j, hostlist(leaves[leaf])))
    if unplaced:
        lines += ["", "# %s: nodes without placement (no block known) (%s)"
                  % (unplaced_switch, _count(len(unplaced), "node")),
                  "SwitchName=%s Nodes=%s" % (unplaced_switch, hostlist(unplaced))]
    return "\n".join(lines) + "\n"
