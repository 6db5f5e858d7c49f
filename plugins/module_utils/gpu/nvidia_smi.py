# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``nvidia-smi`` prints, turned into per-GPU records.

``nvidia-smi -q -x`` has two schemas in the field: drivers before R535 name the
clock block ``clocks_throttle_reasons`` (``clocks_throttle_reason_*``), later ones
``clocks_event_reasons``; ECC counts are ``single_bit``/``double_bit`` on older
GPUs and SRAM/DRAM correctable/uncorrectable on Hopper and later. Every field a
GPU or mode lacks prints ``N/A``, which becomes None here, never zero.

Plain Python with no ansible import: the node health agent runs it on the node.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import xml.etree.ElementTree as ET

FIELDS = ("index", "pci_bus_id", "product_name", "uuid", "ecc_volatile_uncorrectable", "remapped_rows_pending",
          "remapped_rows_failure", "retired_pages_pending", "pcie_gen_current", "pcie_gen_max",
          "pcie_width_current", "pcie_width_max", "clock_event_reasons_active", "persistence_mode",
          "fabric_state", "fabric_status", "fabric_clique_id", "fabric_cluster_uuid", "fabric_health",
          "performance_state", "recovery_action", "processes", "ecc_mode", "ecc_mode_pending", "mig_mode",
          "mig_mode_pending", "compute_mode", "applications_clock_graphics_mhz", "applications_clock_memory_mhz",
          "not_applicable")
# The settings of a GPU, each with where -q -x has it. A setting the GPU or driver does not have prints N/A or
# Not Supported (bracketed in --query-gpu and newer -q output), application clocks on R590 "Requested
# functionality has been deprecated": such a setting is listed in not_applicable, apart from one that could
# not be read (Unknown Error), so that no one judges it as drift.
SETTINGS = (("persistence_mode", "persistence_mode"), ("ecc_mode", "ecc_mode/current_ecc"),
            ("ecc_mode_pending", "ecc_mode/pending_ecc"), ("mig_mode", "mig_mode/current_mig"),
            ("mig_mode_pending", "mig_mode/pending_mig"), ("compute_mode", "compute_mode"),
            ("applications_clock_graphics_mhz", "applications_clocks/graphics_clock"),
            ("applications_clock_memory_mhz", "applications_clocks/mem_clock"))
_NOT_APPLICABLE = ("n/a", "not supported", "requested functionality has been deprecated", "not available")

_MISSING = ("", "n/a", "[n/a]", "not supported", "[not supported]", "unknown error", "[unknown error]")
_DOCTYPE = re.compile(r"<!DOCTYPE[^>]*>", re.IGNORECASE)
# "Link 3: 26.562 GB/s" or "Link 3: <inactive>"
_LINK = re.compile(r"^\s*Link\s+(\d+):\s*(.*?)\s*$")
# [domain:]bus:device[.function] at the end of the text
_BUS = re.compile(r"(?:^|[^0-9a-fA-F])(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(?:\.[0-7])?$")
_GPU_HEAD = re.compile(r"^GPU\s+(\d+):")
# NVML's line under a GPU whose links are all down: "Unable to retrieve NVLink information as all links are inActive"
_ALL_INACTIVE = re.compile(r"all links are inactive", re.IGNORECASE)


class ParseError(ValueError):
    """Text that is not what the tool prints; one line saying why. ``gpus`` holds the records of the GPUs
    that were complete before the text stopped being readable (output cut when the tool was killed or
    the driver hung), so that those can still be judged."""

    def __init__(self, message, gpus=None):
        super(ParseError, self).__init__(message)
        self.gpus = gpus or []


def _text(node, path):
    found = node.find(path) if node is not None else None
    if found is None or found.text is None:
        return None
    value = found.text.strip()
    return None if value.lower() in _MISSING else value


def not_applicable(text):
    """Whether nvidia-smi's text for a value says the GPU or driver does not have it (N/A, [Not Supported])."""
    return (text or "").strip().strip("[]").strip().lower() in _NOT_APPLICABLE


def _not_applicable(gpu):
    out = []
    for name, path in SETTINGS:
        found = gpu.find(path)
        if found is not None and not_applicable(found.text):
            out.append(name)
    return out


def _int(value):
    if value is None:
        return None
    match = re.match(r"^\s*(-?\d+)", value)
    return int(match.group(1)) if match else None


def _flag(value):
    """Yes/No, Enabled/Disabled, Active/Not Active -> bool; anything else -> None."""
    if value is None:
        return None
    low = value.lower()
    if low in ("yes", "enabled", "active", "true"):
        return True
    if low in ("no", "disabled", "not active", "false"):
        return False
    return None


def bus_key(bus_id):
    """A PCI address as '0000:06:00' (domain, bus, device): the form kernel Xid lines use.

    nvidia-smi prints '00000000:06:00.0' (an 8-digit domain), sysfs '0000:06:00.0', NVRM 'PCI:0000:06:00';
    older drivers and systems print no domain ('PCI:06:00'), which is domain 0000.
    """
    if not bus_id:
        return None
    match = _BUS.search(re.sub(r"(?i)PCI:", " ", bus_id).strip().rstrip(":."))
    if not match:
        return None
    return ("%s:%s:%s" % ((match.group(1) or "0000")[-4:], match.group(2), match.group(3))).lower()


def _ecc_uncorrectable(gpu):
    volatile = gpu.find("ecc_errors/volatile")
    if volatile is None:
        return None
    older = _text(volatile, "double_bit/total")
    if older is not None:
        return _int(older)
    parts = [_int(_text(volatile, name)) for name in
             ("dram_uncorrectable", "sram_uncorrectable", "sram_uncorrectable_parity", "sram_uncorrectable_secded")]
    known = [p for p in parts if p is not None]
    return sum(known) if known else None


def _retired_pending(gpu):
    value = _flag(_text(gpu, "retired_pages/pending_retirement"))
    if value is None:
        # Hopper and later retire nothing (rows are remapped); older text says "Pending page blacklist"
        value = _flag(_text(gpu, "retired_pages/pending_blacklist"))
    return value


def _reasons(gpu):
    for block, prefix in (("clocks_event_reasons", "clocks_event_reason_"),
                          ("clocks_throttle_reasons", "clocks_throttle_reason_")):
        node = gpu.find(block)
        if node is None:
            continue
        active = []
        for child in node:
            if _flag((child.text or "").strip()) and child.tag.startswith(prefix):
                active.append(child.tag[len(prefix):])
        return active
    return None


def _processes(gpu):
    """The processes on the GPU (``<processes><process_info>``): pid, type (C compute, G graphics, C+G),
    process_name, used_memory_mib. An empty block is no process; a GPU whose output has no block at all
    (a tool that does not list them) is None: unknown, never "none"."""
    block = gpu.find("processes")
    if block is None:
        return None
    return [{"pid": _int(_text(info, "pid")), "type": _text(info, "type"),
             "process_name": _text(info, "process_name"), "used_memory_mib": _int(_text(info, "used_memory"))}
            for info in block.findall("process_info")]


def _fabric_health(gpu):
    """<fabric><health> (drivers from R570, GB200 and later): None when the GPU reports none of it."""
    health = gpu.find("fabric/health")
    if health is None:
        return None
    out = {"summary": _text(health, "summary"), "bandwidth": _text(health, "bandwidth")}
    for name in ("route_recovery_in_progress", "route_unhealthy", "access_timeout_recovery"):
        out[name] = _flag(_text(health, name))
    wrong = _text(health, "incorrect_configuration")
    out["incorrect_configuration"] = None if (wrong or "").lower() == "none" else wrong
    return out if any(value is not None for value in out.values()) else None


def _record(index, gpu):
    link = gpu.find("pci/pci_gpu_link_info")
    return {
        "index": index,
        "pci_bus_id": _text(gpu, "pci/pci_bus_id") or gpu.get("id"),
        "product_name": _text(gpu, "product_name"),
        "uuid": _text(gpu, "uuid"),
        "ecc_volatile_uncorrectable": _ecc_uncorrectable(gpu),
        "remapped_rows_pending": _flag(_text(gpu, "remapped_rows/remapped_row_pending")),
        "remapped_rows_failure": _flag(_text(gpu, "remapped_rows/remapped_row_failure")),
        "retired_pages_pending": _retired_pending(gpu),
        "pcie_gen_current": _int(_text(link, "pcie_gen/current_link_gen")),
        "pcie_gen_max": _int(_text(link, "pcie_gen/max_link_gen")),
        "pcie_width_current": _int(_text(link, "link_widths/current_link_width")),
        "pcie_width_max": _int(_text(link, "link_widths/max_link_width")),
        "clock_event_reasons_active": _reasons(gpu),
        "persistence_mode": _flag(_text(gpu, "persistence_mode")),
        "fabric_state": _text(gpu, "fabric/state"),
        "fabric_status": _text(gpu, "fabric/status"),
        "fabric_clique_id": _text(gpu, "fabric/cliqueId"),
        "fabric_cluster_uuid": _text(gpu, "fabric/clusterUuid"),
        "fabric_health": _fabric_health(gpu),
        "performance_state": _text(gpu, "performance_state"),
        "recovery_action": _text(gpu, "gpu_recovery_action"),
        "processes": _processes(gpu),
        "ecc_mode": _flag(_text(gpu, "ecc_mode/current_ecc")),
        "ecc_mode_pending": _flag(_text(gpu, "ecc_mode/pending_ecc")),
        "mig_mode": _flag(_text(gpu, "mig_mode/current_mig")),
        "mig_mode_pending": _flag(_text(gpu, "mig_mode/pending_mig")),
        "compute_mode": _known(_text(gpu, "compute_mode")),
        "applications_clock_graphics_mhz": _int(_text(gpu, "applications_clocks/graphics_clock")),
        "applications_clock_memory_mhz": _int(_text(gpu, "applications_clocks/mem_clock")),
        "not_applicable": _not_applicable(gpu),
    }


def _known(value):
    """A text value, None where nvidia-smi says it does not apply."""
    return None if value is None or not_applicable(value) else value


def parse(text):
    """``nvidia-smi -q -x`` output -> [record] in the order nvidia-smi lists the GPUs (its index order).

    Read as a stream, so that output cut part way (the tool killed, a GPU that stopped answering) raises
    ParseError with the GPUs that were complete before the cut: a cut is "could not read", never a lost GPU.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str) or not text.strip():
        raise ParseError("nvidia-smi -q -x printed nothing")
    parser = ET.XMLPullParser(events=("start", "end"))
    state = {"depth": 0, "root": None}
    gpus = []

    def take():
        for event, elem in parser.read_events():
            if event == "start":
                state["depth"] += 1
                state["root"] = state["root"] or elem.tag
                continue
            if state["depth"] == 2 and elem.tag == "gpu":
                gpus.append(_record(len(gpus), elem))
            state["depth"] -= 1

    try:
        # the DTD is named, never fetched; drop it so no parser tries
        parser.feed(_DOCTYPE.sub("", text, count=1))
        take()
        parser.close()
        take()
    except ET.ParseError as exc:
        if state["root"] == "nvidia_smi_log":
            raise ParseError("nvidia-smi -q -x output is cut after %d GPU(s) (%s)" % (len(gpus), exc), gpus)
        raise ParseError("nvidia-smi -q -x output is not XML (%s)" % exc)
    if state["root"] != "nvidia_smi_log":
        raise ParseError("nvidia-smi -q -x output has no nvidia_smi_log element (found %s)" % state["root"])
    return gpus


def driver_version(text):
    """The driver version nvidia-smi -q -x reports, or None."""
    match = re.search(r"<driver_version>\s*([^<\s]+)\s*</driver_version>", text or "")
    return match.group(1) if match else None


def parse_nvlink_status(text):
    """``nvidia-smi nvlink -s`` -> {gpu index: {"links": n, "inactive": [link, ...]}}.

    A GPU with no NVLink prints no link lines, and so has no entry. A GPU whose every link is down
    prints NVML's "all links are inActive" line instead of its links: {"links": 0, "inactive": [],
    "all_inactive": True}.
    """
    out = {}
    gpu = None
    for line in (text or "").splitlines():
        head = _GPU_HEAD.match(line)
        if head:
            gpu = int(head.group(1))
            continue
        if gpu is not None and _ALL_INACTIVE.search(line):
            out[gpu] = {"links": 0, "inactive": [], "all_inactive": True}
            continue
        link = _LINK.match(line)
        if link and gpu is not None:
            entry = out.setdefault(gpu, {"links": 0, "inactive": []})
            entry["links"] += 1
            if "inactive" in link.group(2).lower():
                entry["inactive"].append(int(link.group(1)))
    return out
