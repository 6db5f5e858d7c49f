# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVLink per-link bandwidth against the family's floor.

``nvidia-smi nvlink -s`` prints each link's speed in GB/s, one direction ("Link 0: 26.562 GB/s" on an
H100). A link that trained at a lower rate still counts as active, so the link-state check passes it;
here each active link's speed is held against the floor the family table gives the GPU: NVIDIA's
NVLink bandwidth per GPU (both directions of all its links, ``nvlink_gpu_gbps``) over its links and
two directions: 25 GB/s a link for NVLink 4 (H100, H200), 50 GB/s for NVLink 5 (B200, GB200). No floor
where the table has no figure (GB300). Inactive links are the link-state check's finding, not this one's.

Pure and plain Python: text in, findings out; unreadable text finds nothing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd

_GPU_HEAD = re.compile(r"^GPU\s+(\d+):")
_LINK_SPEED = re.compile(r"^\s*Link\s+(\d+):\s*([0-9]+(?:\.[0-9]+)?)\s*GB/s\s*$")


def link_floor_gbps(family_gpu):
    """The least GB/s one active link must show (one direction), or None where the table has no figure."""
    gpu = family_gpu or {}
    total, links = gpu.get("nvlink_gpu_gbps"), gpu.get("nvlinks")
    if not total or not links:
        return None
    return round(float(total) / links / 2, 3)


def link_speeds(text):
    """``nvidia-smi nvlink -s`` -> {gpu index: {link: GB/s}} for the links that print a speed."""
    out = {}
    gpu = None
    for line in (text or "").splitlines():
        head = _GPU_HEAD.match(line)
        if head:
            gpu = int(head.group(1))
            continue
        link = _LINK_SPEED.match(line)
        if link and gpu is not None:
            out.setdefault(gpu, {})[int(link.group(1))] = float(link.group(2))
    return out


def judge(floor_gbps, speeds):
    """[{gpu, links: [[link, GB/s], ...], cause}], one per GPU with a link below floor_gbps."""
    if not floor_gbps:
        return []
    out = []
    for gpu in sorted(speeds or {}):
        slow = [[link, gbps] for link, gbps in sorted(speeds[gpu].items()) if gbps < floor_gbps]
        if slow:
            out.append({"gpu": gpu, "links": slow,
                        "cause": "NVLink: %s, below the family's %.1f GB/s a link"
                                 % (", ".join("link %d at %s GB/s" % (link, gbps) for link, gbps in slow),
                                    floor_gbps)})
    return out


def findings(family_gpu, text, labels=None):
    """GPU findings (fail, rung reboot) for the links of ``nvidia-smi nvlink -s`` text below the family's
    floor; labels: {gpu index: subject}, default "GPU <index>"."""
    labels = labels or {}
    return [fd.make("gpu", labels.get(item["gpu"]) or "GPU %d" % item["gpu"], "fail", item["cause"],
                    rung="reboot", action=["reboot"])
            for item in judge(link_floor_gbps(family_gpu), link_speeds(text))]
