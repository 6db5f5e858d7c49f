# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every list written by hand that mirrors a table names exactly the table's rows: the families in the
family_profile filter's doc, the README's compatibility matrix and the inventory docs (families.py), and the
finding components node_health_info returns (findings/finding.py COMPONENTS). A failure names the entry that
is missing or extra. (The README's table of the families' facts is generated: test_generated_docs.)"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import yaml

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding
from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health
from ansible_collections.gpudirect.gcp.tests.unit.docs import _module_docs as module_docs

ROOT = module_docs.ROOT
# how the README's matrix names each transport
TRANSPORT_WORDS = {"tcpx": "TCPX", "tcpxo": "TCPXO", "gib": "RDMA, gIB"}
# components judged across nodes or for a job, never by the node check
NOT_NODE_CHECK = {
    "topology": "the cluster's placement, judged on the controller",
    "fabric": "the paths between nodes, judged from every node's pings and the NCCL tests",
    "job": "a running job's communicators, judged by nccl_job_status and nccl_job_evidence",
}
# components the node check's gpu part gives beside its own (module_utils/gpu: imex.py, rdma.py)
GPU_PART_ALSO = ("imex", "rdma")


def _read(*path):
    with open(os.path.join(ROOT, *path), encoding="utf-8") as fh:
        return fh.read()


def differences(where, listed, table):
    """One line per entry missing from the list or not in the table, and per entry listed twice."""
    out = ["%s: %s is missing" % (where, name) for name in table if name not in listed]
    out += ["%s: %s is not in the table" % (where, name) for name in listed if name not in table]
    out += ["%s: %s is listed twice" % (where, name) for name in sorted(set(listed)) if listed.count(name) > 1]
    return out


def listed_after(text, lead, where):
    """The C() or backquoted names in the parentheses (or table cell) that follow lead."""
    match = re.search(re.escape(lead) + r"\s*(?:\(((?:[^()]|\([^()]*\))*)\)|\|([^|]*)\|)", text)
    assert match, "%s: no list after %r" % (where, lead)
    return re.findall(r"(?:C\(|`)([^)`]+)[)`]", match.group(1) or match.group(2))


def filter_doc_problems(doc_text=None, names=None):
    doc = yaml.safe_load(doc_text if doc_text is not None else _read("plugins", "filter", "family_profile.yml"))
    text = " ".join(" ".join(doc["DOCUMENTATION"]["description"]).split())
    where = "plugins/filter/family_profile.yml"
    return differences(where, listed_after(text, "a GPU machine family", where),
                       families.family_names() if names is None else names)


def readme_matrix(text):
    """{family: transport words} of the README's Compatibility table."""
    section = text.split("\n## Compatibility\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| ([^|]+?) \|", section, re.M)
    return [row[0] for row in rows], dict(rows)


def readme_problems(text=None, table=None):
    table = families.FAMILIES if table is None else table
    names, transports = readme_matrix(_read("README.md") if text is None else text)
    out = differences("README.md Compatibility", names, sorted(table))
    out += ["README.md Compatibility: %s says %s, the table %s" % (
        name, transports[name], TRANSPORT_WORDS[table[name]["transport"]]) for name in sorted(table)
        if name in transports and transports[name] != TRANSPORT_WORDS[table[name]["transport"]]]
    return out


def inventory_problems(text=None, table=None):
    table = families.FAMILIES if table is None else table
    text = _read("docs", "inventory.md") if text is None else text
    where = "docs/inventory.md"
    flat = " ".join(text.split())
    out = differences(where + " gpu_family", listed_after(flat, "| `gpu_family`", where), sorted(table))
    out += differences(where + " gpu_transport", listed_after(flat, "| `gpu_transport`", where),
                       list(families.TRANSPORTS))
    out += differences(where + " machine types", listed_after(flat, "machine-family table", where),
                       [table[name]["machine_type"] for name in sorted(table, key=lambda n: table[n]["machine_type"])])
    return out


def component_problems(return_text=None, components=None, parts=None):
    """node_health_info's list of its findings' components: every component but those judged elsewhere, and
    at least every part's own."""
    components = finding.COMPONENTS if components is None else components
    parts = node_health.PARTS if parts is None else parts
    doc = module_docs.own_doc("node_health_info", "RETURN") if return_text is None else yaml.safe_load(return_text)
    text = " ".join(" ".join(doc["findings"]["description"]).split())
    match = re.search(r"C\(component\) \(([^)]*)\)", text)
    assert match, "node_health_info RETURN findings: no list of components after C(component)"
    listed = [c.strip() for c in match.group(1).split(",")]
    expected = [c for c in components if c not in NOT_NODE_CHECK]
    out = differences("node_health_info RETURN findings", listed, expected)
    out += ["node_health_info RETURN findings: the part %s's component %s is not listed" % (p["key"], p["component"])
            for p in parts if p["component"] not in listed]
    out += ["NOT_NODE_CHECK: %s is no component any more" % c for c in sorted(NOT_NODE_CHECK) if c not in components]
    out += ["GPU_PART_ALSO: %s is no component any more" % c for c in GPU_PART_ALSO if c not in components]
    return out


def test_the_family_profile_filter_doc_names_every_family():
    assert filter_doc_problems() == []


def test_the_readme_matrix_has_one_row_per_family_with_its_transport():
    assert readme_problems() == []


def test_the_inventory_docs_list_the_tables_families_transports_and_machine_types():
    assert inventory_problems() == []


def test_node_health_info_lists_the_components_of_its_findings():
    assert component_problems() == []


def _with_family(monkeypatch):
    """The table with a throwaway family, a4z (machine type a4z-highgpu-8g, gIB)."""
    row = dict(families.FAMILIES["a4"], machine_type="a4z-highgpu-8g")
    monkeypatch.setitem(families.FAMILIES, "a4z", row)


def test_a_new_family_is_missed_by_every_hand_list(monkeypatch):
    _with_family(monkeypatch)
    assert filter_doc_problems() == ["plugins/filter/family_profile.yml: a4z is missing"]
    assert readme_problems() == ["README.md Compatibility: a4z is missing"]
    assert inventory_problems() == ["docs/inventory.md gpu_family: a4z is missing",
                                    "docs/inventory.md machine types: a4z-highgpu-8g is missing"]


def test_a_wrong_or_doubled_entry_is_named():
    table = {"a4": {"transport": "gib"}}
    doubled = "\n## Compatibility\n\n| `a4` | RDMA, gIB | x |\n| `a4` | RDMA, gIB | x |\n| `a9` | TCPX | x |\n\n## Next\n"
    assert readme_problems(doubled, table) == ["README.md Compatibility: a9 is not in the table",
                                               "README.md Compatibility: a4 is listed twice"]
    wrong = "\n## Compatibility\n\n| `a4` | TCPX | x |\n"
    assert readme_problems(wrong, table) == ["README.md Compatibility: a4 says TCPX, the table RDMA, gIB"]


def test_a_new_component_must_be_listed_or_said_to_be_judged_elsewhere(monkeypatch):
    monkeypatch.setattr(finding, "COMPONENTS", finding.COMPONENTS + ("straggler",))
    assert component_problems() == ["node_health_info RETURN findings: straggler is missing"]
    monkeypatch.setitem(NOT_NODE_CHECK, "straggler", "judged across a job's nodes")
    assert component_problems() == []
