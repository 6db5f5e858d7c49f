# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The TCPX RxDM topology file (gpu_rxq_configuration.textproto), from the node's PCI layout.

RxDM's manual preset reads which GPUs each GPU NIC serves and on which RX
queues.  The file is written from what the node really has: every NVIDIA GPU
(PCI vendor 0x10de, display class 0x03) is paired with the GPU NIC it shares a
PCIe switch with (the longest common sysfs device path; nearest bus number on
a tie), so the interface names are the node's own, whatever the image calls them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils.common.sysfs import read_text

NVIDIA_VENDOR = "0x10de"
DISPLAY_CLASS = "0x03"


class TopologyError(ValueError):
    """The node's layout does not fit the family's topology (one line, naming the NIC or GPU)."""


def _bus(bdf):
    try:
        return int(bdf.split(":")[1], 16)
    except (IndexError, ValueError):
        return -1


def nic_device(sysfs_root, iface):
    """(PCI address, sysfs device path) of an interface; TopologyError when it has none."""
    link = os.path.join(sysfs_root, "class", "net", iface, "device")
    if not os.path.exists(link):
        raise TopologyError("GPU NIC %s has no PCI device under %s" % (iface, os.path.dirname(link)))
    path = os.path.realpath(link)
    return os.path.basename(path), path


def gpu_devices(sysfs_root):
    """[(PCI address, sysfs device path)] of the NVIDIA GPUs, in PCI address order."""
    base = os.path.join(sysfs_root, "bus", "pci", "devices")
    out = []
    for bdf in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        path = os.path.realpath(os.path.join(base, bdf))
        if read_text(os.path.join(path, "vendor")) == NVIDIA_VENDOR and \
                (read_text(os.path.join(path, "class")) or "").startswith(DISPLAY_CLASS):
            out.append((bdf, path))
    return out


def _shared(a, b):
    n = 0
    for x, y in zip(a.split(os.sep), b.split(os.sep)):
        if x != y:
            break
        n += 1
    return n


def pair(nics, gpus, gpus_per_nic):
    """{iface: [GPU PCI address, ...]} for nics [(iface, bdf, path)] and gpus [(bdf, path)]."""
    if len(gpus) != len(nics) * gpus_per_nic:
        raise TopologyError("%d GPU NICs serve %d GPUs each, but the node has %d NVIDIA GPUs (%s)"
                            % (len(nics), gpus_per_nic, len(gpus), ", ".join(g[0] for g in gpus) or "none"))
    candidates = sorted((-_shared(gpath, npath), abs(_bus(gbdf) - _bus(nbdf)), gbdf, iface)
                        for gbdf, gpath in gpus for iface, nbdf, npath in nics)
    out = dict((iface, []) for iface, _bdf, _path in nics)
    placed = set()
    for _shared_len, _distance, gbdf, iface in candidates:
        if gbdf in placed or len(out[iface]) >= gpus_per_nic:
            continue
        out[iface].append(gbdf)
        placed.add(gbdf)
    for iface in out:
        out[iface].sort()
    return out


def render(nics, pairs, topology):
    """The textproto RxDM reads, in GPU-NIC order."""
    lines = []
    for iface, nbdf, _path in nics:
        lines.append("gpu_rxq_configs {")
        for slot, gbdf in enumerate(pairs[iface]):
            lines.append("  gpu_infos {")
            lines.append('    gpu_pci_addr: "%s"' % gbdf)
            lines += ["    queue_ids: %d" % q for q in topology["queue_ids"][slot]]
            lines.append("  }")
        lines.append('  nic_pci_addr: "%s"' % nbdf)
        lines.append('  ifname: "%s"' % iface)
        lines.append("}")
    for key in ("rss_set_size", "tcpd_queue_size", "max_rx_rules"):
        lines.append("%s: %d" % (key, topology[key]))
    return "\n".join(lines) + "\n"


def build(sysfs_root, gpu_ifaces, topology):
    """(textproto, {iface: [GPU PCI addresses]}) for the node, or TopologyError."""
    if not gpu_ifaces:
        raise TopologyError("no GPU NIC interfaces given")
    if len(topology["queue_ids"]) < topology["gpus_per_nic"]:
        raise TopologyError("the topology has queue ids for %d GPUs per NIC, not %d"
                            % (len(topology["queue_ids"]), topology["gpus_per_nic"]))
    nics = [(iface,) + nic_device(sysfs_root, iface) for iface in gpu_ifaces]
    pairs = pair(nics, gpu_devices(sysfs_root), topology["gpus_per_nic"])
    return render(nics, pairs, topology), pairs
