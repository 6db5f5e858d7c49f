# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's driver, CUDA and NCCL against what its plugin release was qualified with (the family
table's pairs), for preflight and diagnose alike.

Drivers run what older drivers ran, so only a driver older than the qualified one is named; a CUDA
toolkit on the node is named when its release (major.minor) is another; NCCL when none of the
releases jobs can load is the qualified one. Each is a warning, or a failure where the operator
asked for strict versions. Nothing is said where the table or the node does not know a value.

Below those, the family's floors (the table's ``floors``, each with its source): a driver, CUDA
toolkit or NCCL below its floor is refused whatever the strictness, since the family does not work
there; a DCGM older than the one the family is validated with is named like a pair's mismatch.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import re

from ansible_collections.gpudirect.gcp.plugins.module_utils import families


def _numbers(version):
    return tuple(int(n) for n in re.findall(r"\d+", str(version or "")))


def _nccl_matches(qualified, seen):
    return any(v == qualified or v.startswith(qualified + ".") or qualified.startswith(v + ".") for v in seen)


def _cited(floor):
    return " [%s, %s]" % (floor["source"], floor["date"])


def floor_check(family, versions, strict=False):
    """[{component, severity, cause}]: the node's versions below the family's floors (see the module doc)."""
    floors = families.FAMILIES[family].get("floors") or {}
    out = []
    for key, component in (("driver", "driver"), ("cuda", "CUDA")):
        have, floor = versions.get(key), floors.get(key)
        # CUDA by release (major.minor): a toolkit's patch release does not matter
        width = 2 if key == "cuda" else None
        if have and floor and _numbers(have)[:width] < _numbers(floor["version"])[:width]:
            out.append({"component": component, "severity": "fail",
                        "cause": "%s %s is below the %s floor, %s %s%s"
                                 % (component, have, family, component, floor["version"], _cited(floor))})
    seen = [v.strip() for v in str(versions.get("nccl") or "").split(",") if v.strip()]
    floor = floors.get("nccl")
    if seen and floor and all(_numbers(v) < _numbers(floor["version"]) for v in seen):
        out.append({"component": "NCCL", "severity": "fail",
                    "cause": "NCCL %s is below the %s floor, NCCL %s%s"
                             % (", ".join(seen), family, floor["version"], _cited(floor))})
    have, floor = versions.get("dcgm"), floors.get("dcgm")
    if have and floor and _numbers(have) < _numbers(floor["version"]):
        out.append({"component": "DCGM", "severity": "fail" if strict else "warn",
                    "cause": "DCGM %s is older than DCGM %s, which %s is validated with%s"
                             % (have, floor["version"], family, _cited(floor))})
    return out


def check(family, versions, plugin_version=None, strict=False):
    """[{component: driver|CUDA|NCCL|DCGM, severity, cause}] for one node: the family's floors first, then
    what its plugin release was qualified with.

    versions: gpudirect.gcp.gpu_versions_info's versions (driver, cuda, nccl, plugin, dcgm where read);
    plugin_version: the release to judge against when the node has none installed yet (default: the
    family's)."""
    if family not in families.FAMILIES:
        return []
    versions = versions or {}
    floors = floor_check(family, versions, strict=strict)
    plugin = versions.get("plugin") or plugin_version
    qualified = families.plugin_qualification(family, plugin)
    if not qualified:
        return floors
    # a component already refused for its floor is not named twice
    refused = set(f["component"] for f in floors if f["severity"] == "fail")
    return floors + [f for f in _pair_check(qualified, versions, strict) if f["component"] not in refused]


def _pair_check(qualified, versions, strict):
    severity = "fail" if strict else "warn"
    source = " [%s]" % qualified["source"] if qualified.get("source") else ""
    release = "plugin %s" % qualified["plugin"]
    out = []
    driver, want = versions.get("driver"), qualified.get("driver")
    if driver and want and _numbers(driver) < _numbers(want):
        out.append({"component": "driver", "severity": severity,
                    "cause": "driver %s is older than driver %s, which %s was qualified with%s"
                             % (driver, want, release, source)})
    cuda, want = versions.get("cuda"), qualified.get("cuda")
    if cuda and want and _numbers(cuda)[:2] != _numbers(want)[:2]:
        out.append({"component": "CUDA", "severity": severity,
                    "cause": "the node's CUDA toolkit is %s; %s was qualified with CUDA %s%s"
                             % (cuda, release, want, source)})
    seen = [v.strip() for v in str(versions.get("nccl") or "").split(",") if v.strip()]
    want = qualified.get("nccl")
    if seen and want and not _nccl_matches(want, seen):
        out.append({"component": "NCCL", "severity": severity,
                    "cause": "jobs can load NCCL %s, but %s was qualified with NCCL %s: a job runs an unqualified "
                             "pair unless it brings NCCL %s itself%s" % (", ".join(seen), release, want, want, source)})
    return out


def table_age(today=None):
    """{newest_source, age_days}: the newest qualified pair's date in the family table and how many days
    before today it is (from the first of its month when the date names no day); None where unknown."""
    newest = families.newest_source_date()
    if not newest:
        return {"newest_source": None, "age_days": None}
    parts = [int(n) for n in newest.split("-")] + [1, 1]
    try:
        then = datetime.date(parts[0], parts[1], parts[2])
    except ValueError:
        return {"newest_source": newest, "age_days": None}
    return {"newest_source": newest, "age_days": ((today or datetime.date.today()) - then).days}
