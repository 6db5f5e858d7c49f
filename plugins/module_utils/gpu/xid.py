# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Xid events in the kernel log, and what each one means for the node.

The NVIDIA driver logs a GPU fault as one line:
``NVRM: Xid (PCI:0000:9b:00): 79, pid=..., name=..., GPU has fallen off the bus.``
Several lines for one fault are common (Xid 13 comes in threes, 45 follows
earlier Xids), so events are counted per GPU and Xid. A GPU can also fall off
the bus with no Xid line (``NVRM: GPU 0000:9b:00.0: GPU has fallen off the bus``):
:func:`fallen_off` finds those. The NVSwitches of an HGX board log their own errors as SXid
lines (:func:`sxid_events`), fatal or not as the line says.

Plain Python with no ansible import: the node health agent runs it on the node.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu.nvidia_smi import bus_key
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu.xid_catalogue import SUBCODE_XIDS, XIDS

_XID = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F:.]+)\):\s*(\d+)\s*(?:,\s*(.*))?$")
_PID = re.compile(r"^pid=('?)([^,']*)\1\s*(?:,\s*)?")
_NAME = re.compile(r"^name=([^,]*)\s*(?:,\s*)?")
_FALLEN = re.compile(r"NVRM: GPU (?:at PCI:)?([0-9a-fA-F:.]+):? GPU has fallen off the bus", re.IGNORECASE)
# the driver's longer report spans lines: "NVRM: The NVIDIA GPU 0000:b3:00.0" ... "fallen off the bus"
_THE_GPU = re.compile(r"NVRM: The NVIDIA GPU ([0-9a-fA-F:.]+)")
# the NVSwitch driver's error line: "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 63 ..."
_SXID = re.compile(r"(nvidia-nvswitch\d+): SXid \((?:PCI:)?([0-9a-fA-F:.]+)\):\s*(\d+)\s*(?:,\s*(.*))?$")
_SEVERITY_WORD = re.compile(r"^(Fatal|Non-?fatal)\b\s*,?\s*", re.IGNORECASE)
_LINK_NUMBER = re.compile(r"\bLink\s+(\d+)\b")
# A pid field is a number, or '<unknown>' when the fault has no process
_UNKNOWN_PID = ("<unknown>", "", "unknown")


def _matching(text, pattern):
    """The match of pattern in each line of text that has one."""
    for line in (text or "").splitlines():
        match = pattern.search(line)
        if match:
            yield match


def events(text):
    """Kernel log text -> [{pci_bus_id, xid, pid, message}] in log order.

    pci_bus_id is the '0000:9b:00' form (nvidia_smi.bus_key); pid is an int or None.
    """
    out = []
    for match in _matching(text, _XID):
        rest = (match.group(3) or "").strip()
        pid = None
        found = _PID.match(rest)
        if found:
            value = found.group(2).strip()
            pid = int(value) if value.isdigit() else None
            rest = rest[found.end():]
            name = _NAME.match(rest)
            if name:
                rest = rest[name.end():]
        out.append({"pci_bus_id": bus_key(match.group(1)) or match.group(1).lower(), "xid": int(match.group(2)),
                    "pid": pid, "message": rest.strip()})
    return out


def grouped(found, number="xid"):
    """Events -> [((pci_bus_id, xid), [events])], one group per GPU and Xid (number="sxid": per NVSwitch and
    SXid), in first-seen order."""
    groups, order = {}, []
    for event in found:
        key = (event["pci_bus_id"], event[number])
        if key not in groups:
            order.append(key)
            groups[key] = []
        groups[key].append(event)
    return [(key, groups[key]) for key in order]


def fallen_off(text):
    """Bus ids ('0000:9b:00') the kernel log says fell off the bus without an Xid line."""
    seen = []
    lines = (text or "").splitlines()
    for number, line in enumerate(lines):
        match = _FALLEN.search(line)
        if not match:
            match = _THE_GPU.search(line)
            if match and not any("fallen off the bus" in later for later in lines[number + 1:number + 4]):
                match = None
        if match and "Xid" not in line:
            key = bus_key(match.group(1))
            if key and key not in seen:
                seen.append(key)
    return seen


def sxid_events(text):
    """NVSwitch SXid lines of the kernel log -> [{switch, pci_bus_id, sxid, fatal, links, message}] in log order.

    ``nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 63 LTSSM Fault Up``: fatal is True or
    False where the line says "Fatal" or "Non-fatal", None on the continuation lines of the same error
    ("Severity 1 Engine instance ...", "Data {...}"); links are the link numbers the line names.
    """
    out = []
    for match in _matching(text, _SXID):
        rest = (match.group(4) or "").strip()
        word = _SEVERITY_WORD.match(rest)
        fatal = None
        if word:
            fatal = not word.group(1).lower().startswith("non")
            rest = rest[word.end():]
        out.append({"switch": match.group(1), "pci_bus_id": bus_key(match.group(2)) or match.group(2).lower(),
                    "sxid": int(match.group(3)), "fatal": fatal,
                    "links": [int(n) for n in _LINK_NUMBER.findall(rest)], "message": rest.strip()})
    return out


def grouped_sxids(found):
    """SXid events -> [((pci_bus_id, sxid), [events])], one group per NVSwitch and SXid, in first-seen order."""
    return grouped(found, number="sxid")


def describe(number, message=""):
    """The catalogue entry of one Xid: {xid, known, meaning, severity, repair, source}.

    An Xid the catalogue lacks is named as unknown: a warn whose repair is the lowest
    rung that proves the GPU (a reset), never dropped. The NVLink Xids that say
    "Nonfatal" on their line are warnings whatever the catalogue's fatal reading.
    """
    entry = XIDS.get(number)
    if entry is not None and number in SUBCODE_XIDS and re.search(r"\bnon-?fatal\b", message or "", re.I):
        entry = dict(entry, severity="warn", repair="rerun")
    if entry is None:
        return {"xid": number, "known": False, "meaning": "not in this collection's Xid catalogue",
                "severity": "warn", "repair": "reset_gpu", "source": None}
    out = dict(entry)
    out.update({"xid": number, "known": True})
    return out
