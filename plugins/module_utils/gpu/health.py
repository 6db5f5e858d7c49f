# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU side of a node's health: what the driver, nvidia-smi and the kernel log say,
judged against the family's GPUs.

:func:`gather` reads the node (commands as argument lists, sysfs under a root);
:func:`judge` turns that evidence into findings and is pure, so unit tests feed it
real captures. A finding is {component: "gpu", subject, severity, cause, rung,
action, phase}: ``rung`` is the least disruptive repair that clears it (finding.RUNGS),
``action`` the command that does it on the node, when one does, ``phase`` the
site.yml phase whose re-run does it, when one does.

Three outcomes per check: nothing (pass), ``fail`` (the GPU cannot be trusted),
or ``warn`` whose cause starts "could not run" when a tool was missing or broke:
a missing tool is no proof that the GPU is bad.

Plain Python with no ansible import: diagnose's module, the node health agent and
the Slurm hooks all call it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import dcgm, nvidia_smi, nvlink_floor, xid
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu.xid_catalogue import FALLEN_OFF_XIDS, RECOVERY_ACTIONS

NVIDIA_VENDOR = "0x10de"
# PCI classes of a GPU: 3D controller (datacenter GPUs), VGA
GPU_CLASSES = ("0x0302", "0x0300")
FABRIC_MANAGER_UNIT = "nvidia-fabricmanager"
# Clock event reasons that mean the hardware is holding the GPU back, with the rung that clears them:
# HW slowdown and power brake come from the board or the host's power supply; thermal from cooling.
FAULT_REASONS = {"hw_slowdown": "report_host", "hw_power_brake_slowdown": "report_host",
                 "hw_thermal_slowdown": "report_host", "sw_thermal_slowdown": "reboot"}


def finding(subject, severity, cause, rung, action=None, phase=None):
    return fd.make("gpu", subject, severity, cause, rung=rung, action=action, phase=phase)


def could_not_run(subject, what):
    return finding(subject, "warn", "could not run: %s" % what, "rerun")


# GPU settings judged on every GPU where the family table names none: persistence on (nvidia-persistenced).
DEFAULT_SETTINGS = {"persistence_mode": True}
# each setting judge() knows: (words, how a value reads, the setting nvidia-smi holds pending, if any)
_ON_OFF = {True: "enabled", False: "disabled"}
SETTING_WORDS = {
    "persistence_mode": ("persistence mode", _ON_OFF, None),
    "ecc_mode": ("ECC mode", _ON_OFF, "ecc_mode_pending"),
    "mig_mode": ("MIG mode", _ON_OFF, "mig_mode_pending"),
    "compute_mode": ("compute mode", None, None),
    "applications_clock_graphics_mhz": ("application graphics clock", "%s MHz", None),
    "applications_clock_memory_mhz": ("application memory clock", "%s MHz", None),
}


def expected_for(family_gpu):
    """The family table's gpu entry -> what judge() expects (None where the table does not know); its
    ``settings`` ({setting: value}, SETTING_WORDS) add to DEFAULT_SETTINGS."""
    gpu = family_gpu or {}
    settings = gpu.get("settings") if isinstance(gpu.get("settings"), dict) else {}
    return {"count": gpu.get("count"), "smi_name": gpu.get("smi_name"), "nvlinks": gpu.get("nvlinks"),
            "fabric_manager": bool(gpu.get("fabric_manager")), "fabric": bool(gpu.get("fabric")),
            "nvlink_gpu_gbps": gpu.get("nvlink_gpu_gbps"), "settings": dict(DEFAULT_SETTINGS, **settings)}


def _pci_gpus(sys_dir):
    base = os.path.join(sys_dir, "bus/pci/devices")
    out = []
    for name in sorted(os.listdir(base)):
        try:
            with open(os.path.join(base, name, "vendor")) as fh:
                vendor = fh.read().strip()
            with open(os.path.join(base, name, "class")) as fh:
                klass = fh.read().strip()
        except (IOError, OSError):
            continue
        if vendor == NVIDIA_VENDOR and klass[:6] in GPU_CLASSES:
            out.append(nvidia_smi.bus_key(name))
    return out


def _first_line(text):
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[0] if lines else "no output"


def gather(run, which, sys_dir="/sys", fabric_manager=False):
    """Read the node. run(argv) -> (rc, out, err); which(name) -> path or None.

    sys_dir: where sysfs is (the sandbox points it at its stand-in tree).
    Returns the evidence judge() reads; a part that could not be read holds its error.
    """
    ev = {"driver": None, "driver_error": None, "pci": None, "pci_error": None, "smi": None, "smi_error": None,
          "smi_unreadable": None, "smi_missing": False, "nvlink": None, "nvlink_error": None, "kernel_log": None,
          "kernel_log_error": None, "fabric_manager": None, "fabric_manager_error": None}
    try:
        with open(os.path.join(sys_dir, "module/nvidia/version")) as fh:
            ev["driver"] = fh.read().strip() or "loaded"
    except (IOError, OSError):
        ev["driver"] = None
    try:
        ev["pci"] = _pci_gpus(sys_dir)
    except (IOError, OSError) as exc:
        ev["pci_error"] = "cannot list PCI devices: %s" % (exc.strerror or exc)
    smi = which("nvidia-smi")
    if not smi:
        ev["smi_missing"] = True
    else:
        rc, out, err = run([smi, "-q", "-x"])
        if rc != 0:
            ev["smi_error"] = "nvidia-smi -q -x exited %d: %s" % (rc, _first_line(err or out))
        else:
            try:
                ev["smi"] = nvidia_smi.parse(out)
            except nvidia_smi.ParseError as exc:
                # cut or unreadable output is no proof against a GPU: judge what was read, say the rest was not
                ev["smi"] = exc.gpus
                ev["smi_unreadable"] = str(exc)
        rc, out, err = run([smi, "nvlink", "-s"])
        if rc == 0:
            ev["nvlink"] = nvidia_smi.parse_nvlink_status(out)
            ev["nvlink_text"] = out  # each active link's speed, for the family's per-link floor
        else:
            ev["nvlink_error"] = "nvidia-smi nvlink -s exited %d: %s" % (rc, _first_line(err or out))
    dmesg = which("dmesg")
    if not dmesg:
        ev["kernel_log_error"] = "no dmesg on PATH"
    else:
        rc, out, err = run([dmesg])
        if rc != 0:
            ev["kernel_log_error"] = "dmesg exited %d: %s" % (rc, _first_line(err or out))
        else:
            ev["kernel_log"] = out
    if fabric_manager:
        systemctl = which("systemctl")
        if not systemctl:
            ev["fabric_manager_error"] = "no systemctl on PATH"
        else:
            rc, out, err = run([systemctl, "is-active", FABRIC_MANAGER_UNIT])
            ev["fabric_manager"] = (out or "").strip() or "unknown"
    return ev


def _label(gpu):
    return "GPU %s (%s)" % (gpu["index"], nvidia_smi.bus_key(gpu["pci_bus_id"]) or gpu["pci_bus_id"])


def _reset(gpu):
    return fd.gpu_reset(gpu["index"])


def _presence(expected, ev, gpus, groups):
    out = []
    seen = set(nvidia_smi.bus_key(g["pci_bus_id"]) for g in gpus)
    if ev.get("smi_unreadable"):
        # the output stopped before the rest of the GPUs: unknown, never "the driver does not see them"
        seen.update(ev.get("pci") or [])
    pci = ev.get("pci")
    fallen = set(xid.fallen_off(ev.get("kernel_log")))
    # an Xid 79 line names the same GPU: its finding speaks for it
    xid79 = set(bus for (bus, number), _seen in groups if number in FALLEN_OFF_XIDS)
    for bus in pci or []:
        if bus not in seen and bus not in xid79:
            why = " and the kernel log says it fell off the bus" if bus in fallen else ""
            out.append(finding("GPU %s" % bus, "fail", "on the PCI bus but the driver does not see it%s "
                               "(fallen off the bus)" % why, "reboot", ["reboot"]))
    count = expected.get("count")
    on_bus = len(pci) if pci is not None else len(gpus)
    if count and on_bus < count:
        out.append(finding("GPUs", "fail", "%d GPU(s) on the PCI bus, the family has %d: a GPU is gone from the "
                           "host" % (on_bus, count), "report_host"))
    name = expected.get("smi_name")
    for gpu in gpus:
        if name and gpu.get("product_name") and name.lower() not in gpu["product_name"].lower():
            out.append(finding(_label(gpu), "warn", "is %s; the family's GPU is %s (is the node in the right "
                               "family?)" % (gpu["product_name"], name), "rerun"))
    return out


def _state_shows(gpu, what):
    if what == "remap":
        return bool(gpu.get("remapped_rows_pending") or gpu.get("remapped_rows_failure"))
    return bool(gpu.get("ecc_volatile_uncorrectable") or gpu.get("remapped_rows_pending"))


def _below(info, most):
    """The words for an Xid seen fewer times than its policy's count: it warns until it reaches it."""
    if most >= info["count"]:
        return None
    return "; below the policy's %d in %s (at most %d): not acted on yet" % (
        info["count"], ("%d s" % info["window_s"]) if info["window_s"] else "since boot", most)


def _xids(groups, gpus, table):
    """One finding per GPU and Xid, as the policy's row (xid.policy) reads it: its severity and repair once
    the Xid reached the row's count within its window, a warning before; an Xid whose fault the GPU's own
    state reports (the row's state) is history once that state is clear."""
    by_bus = dict((nvidia_smi.bus_key(g["pci_bus_id"]), g) for g in gpus)
    out = []
    for (bus, number), seen in groups:
        last = seen[-1]["message"]
        info = xid.describe(number, last, table)
        gpu = by_bus.get(bus)
        subject = _label(gpu) if gpu else "GPU %s" % bus
        gone = "" if gpu or not gpus else "; the driver no longer sees it"
        backed = info.get("state")
        if backed and gpu:
            if not _state_shows(gpu, backed):
                out.append(finding(subject, "warn", "Xid %d (%s) logged since boot, and the GPU's %s state is clear "
                                   "now (reset since)" % (number, info["meaning"], backed), "rerun"))
            continue
        cause = "Xid %d (%s)%s since boot%s" % (
            number, info["meaning"] if info["known"] else "unknown Xid: " + info["meaning"],
            (" x%d" % len(seen)) if len(seen) > 1 else "", (": %s" % last) if last else "") + gone
        severity, repair = info["severity"], info["repair"]
        below = _below(info, xid.most_in_window(seen, info["window_s"]))
        if below:
            severity, repair, cause = "warn", "rerun", cause + below
        action = None
        if repair == "reset_gpu" and gpu:
            action = _reset(gpu)
        elif repair == "reboot":
            action = ["reboot"]
        out.append(finding(subject, severity, cause, repair, action))
    return out


def _sxids(kernel_log):
    """One finding per NVSwitch and SXid: a fatal one (the line says "Fatal") stops the switch's links until
    the GPUs and switches are reset together, which on a VM is a reboot; a non-fatal one is a warning."""
    out = []
    for (bus, number), seen in xid.grouped_sxids(xid.sxid_events(kernel_log)):
        fatal = any(event["fatal"] for event in seen)
        links = sorted(set(link for event in seen for link in event["links"]))
        said = next((e["message"] for e in reversed(seen) if e["fatal"] is not None), seen[-1]["message"])
        cause = "SXid %d (%s NVSwitch error)%s since boot%s%s" % (
            number, "fatal" if fatal else "non-fatal", (" x%d" % len(seen)) if len(seen) > 1 else "",
            (" on link(s) %s" % ", ".join(str(n) for n in links)) if links else "", (": %s" % said) if said else "")
        subject = "NVSwitch %s (%s)" % (bus, seen[0]["switch"])
        if fatal:
            out.append(finding(subject, "fail", cause, "reboot", ["reboot"]))
        else:
            out.append(finding(subject, "warn", cause, "rerun"))
    return out


def _memory(gpu):
    out = []
    label = _label(gpu)
    if gpu.get("remapped_rows_failure"):
        out.append(finding(label, "fail", "row remapping failed: the GPU's memory has no spare rows left",
                           "report_host"))
    if gpu.get("remapped_rows_pending"):
        out.append(finding(label, "fail", "a row remapping is pending: it takes effect at the next GPU reset",
                           "reset_gpu", _reset(gpu)))
    if gpu.get("retired_pages_pending"):
        out.append(finding(label, "fail", "a page retirement is pending: it takes effect at the next GPU reset",
                           "reset_gpu", _reset(gpu)))
    ecc = gpu.get("ecc_volatile_uncorrectable")
    if ecc and not (gpu.get("remapped_rows_pending") or gpu.get("remapped_rows_failure")):
        out.append(finding(label, "fail", "%d uncorrectable ECC error(s) since the driver loaded" % ecc,
                           "reset_gpu", _reset(gpu)))
    return out


def _pcie(gpu):
    label = _label(gpu)
    cur_w, max_w = gpu.get("pcie_width_current"), gpu.get("pcie_width_max")
    if cur_w is not None and max_w and cur_w < max_w:
        return [finding(label, "fail", "PCIe link trained at x%d of x%d" % (cur_w, max_w), "reboot", ["reboot"])]
    cur_g, max_g = gpu.get("pcie_gen_current"), gpu.get("pcie_gen_max")
    # an idle GPU lowers its link speed to save power; only a GPU at full performance must run at full speed
    if cur_g is not None and max_g and cur_g < max_g and gpu.get("performance_state") == "P0":
        return [finding(label, "fail", "PCIe link at gen %d of gen %d while at full performance (P0)"
                        % (cur_g, max_g), "reboot", ["reboot"])]
    return []


def _clocks(gpu):
    out = []
    for reason in gpu.get("clock_event_reasons_active") or []:
        if reason in FAULT_REASONS:
            out.append(finding(_label(gpu), "fail", "clocks held back: %s active" % reason,
                               FAULT_REASONS[reason], ["reboot"] if FAULT_REASONS[reason] == "reboot" else None))
    return out


def _said(value, how):
    if isinstance(how, dict):
        return how.get(value, str(value))
    return how % value if how else str(value)


def _same_setting(have, want):
    if isinstance(want, str) and isinstance(have, str):
        return have.strip().lower() == want.strip().lower()
    return have == want


def unknown_settings(expected):
    """Findings for expected settings judge() does not read: one line each, the others still judged."""
    settings = expected.get("settings", DEFAULT_SETTINGS) or {}
    return [finding("GPU settings", "warn", "the expected GPU setting %s is not one this collection reads; ignored"
                    % name, "rerun") for name in sorted(settings) if name not in SETTING_WORDS]


def _settings(expected, gpu):
    """Each expected setting against the GPU's: a setting the driver reports as not applicable to this GPU
    (N/A, Not Supported) is no drift, nor is one it could not read; a different value is, and a change
    already pending to the expected value says the GPU reset that applies it."""
    settings = expected.get("settings", DEFAULT_SETTINGS) or {}
    out = []
    for name, want in sorted(settings.items()):
        if name not in SETTING_WORDS or name in (gpu.get("not_applicable") or []):
            continue
        have = gpu.get(name)
        if have is None or _same_setting(have, want):
            continue
        words, how, pending_key = SETTING_WORDS[name]
        if name == "persistence_mode" and have is False:
            out.append(finding(_label(gpu), "warn", "persistence mode is off: every job start pays the driver's "
                               "initialisation", "rerun", phase="host"))
            continue
        cause = "%s is %s; expected %s" % (words, _said(have, how), _said(want, how))
        if pending_key and gpu.get(pending_key) is not None and _same_setting(gpu.get(pending_key), want):
            out.append(finding(_label(gpu), "warn", "%s (pending %s at the next GPU reset)"
                               % (cause, _said(want, how)), "reset_gpu", _reset(gpu)))
        else:
            out.append(finding(_label(gpu), "warn", cause, "rerun"))
    return out


def _nvlink(expected, ev, gpus):
    want = expected.get("nvlinks")
    if not want or not gpus:
        return []
    if ev.get("nvlink") is None:
        return [could_not_run("NVLink", ev.get("nvlink_error") or "nvidia-smi nvlink -s gave nothing")]
    out = []
    for gpu in gpus:
        state = ev["nvlink"].get(gpu["index"]) or {"links": 0, "inactive": []}
        problems = []
        if state.get("all_inactive"):
            problems.append("all links inactive (NVML reads no link of this GPU)")
        elif state["inactive"]:
            problems.append("link(s) %s inactive" % ", ".join(str(n) for n in state["inactive"]))
        if state["links"] < want and not state.get("all_inactive"):
            problems.append("%d of the family's %d links reported" % (state["links"], want))
        if problems:
            out.append(finding(_label(gpu), "fail", "NVLink: %s" % "; ".join(problems), "reboot", ["reboot"]))
    return out


# <fabric><health> (R570+ drivers), what each value means: (field, values, words, fault) - a fault means the
# NVLink domain cannot carry this GPU's traffic at full bandwidth; the rest mean it is short of capacity or
# recovering on its own (look again before acting). Booleans are listed with the value True.
FABRIC_HEALTH = (
    ("summary", ("unhealthy",), "health %s", True),
    ("bandwidth", ("degraded",), "bandwidth %s", True),
    ("route_unhealthy", (True,), "a route is unhealthy", True),
    ("incorrect_configuration", None, "incorrect configuration: %s", True),
    ("summary", ("limited capacity", "limited"), "health %s", False),
    ("route_recovery_in_progress", (True,), "route recovery in progress", False),
    ("access_timeout_recovery", (True,), "recovering from an access timeout", False),
)


def _fabric_health(gpu):
    """The fabric's own health summary, wherever a GPU reports one."""
    health = gpu.get("fabric_health") or {}
    said = {True: [], False: []}
    for field, values, words, fault in FABRIC_HEALTH:
        value = health.get(field)
        if value is None or value is False:
            continue
        if values is None or (value.lower() if isinstance(value, str) else value) in values:
            said[fault].append(words % value if "%s" in words else words)
    if said[True]:
        return [finding(_label(gpu), "fail", "NVLink fabric %s: multi-node NVLink traffic of this GPU is at risk"
                        % "; ".join(said[True] + said[False]), "reboot", ["reboot"])]
    if said[False]:
        return [finding(_label(gpu), "warn", "NVLink fabric %s: look again before acting" % "; ".join(said[False]),
                        "rerun")]
    return []


def _fabric(gpu):
    """A4X: the GPU must have joined its NVLink domain (multi-node NVLink)."""
    state, status = gpu.get("fabric_state"), gpu.get("fabric_status")
    clique, cluster = gpu.get("fabric_clique_id"), gpu.get("fabric_cluster_uuid")
    problems = []
    if (state or "").lower() != "completed":
        problems.append("state %s" % (state or "unknown"))
    if (status or "").lower() != "success":
        problems.append("status %s" % (status or "unknown"))
    if not clique or clique.strip("0") == "":
        problems.append("clique id %s" % (clique or "none"))
    if not cluster or cluster.replace("-", "").strip("0") == "":
        problems.append("cluster uuid %s" % (cluster or "none"))
    if not problems:
        return []
    return [finding(_label(gpu), "fail", "not in a healthy NVLink domain (fabric %s): multi-node NVLink will "
                    "not work" % ", ".join(problems), "reboot", ["reboot"])]


def judge(expected, ev, xid_policy=None):
    """Evidence from gather() -> findings, in a stable order: the driver and tools, presence, Xids, each
    GPU's state, NVLink, the fabric manager. One GPU can have several.

    xid_policy: the inventory's changes to the Xid catalogue (xid.policy); a bad entry is a warning naming
    it, and the rest applies."""
    if not ev.get("driver"):
        return [finding("driver", "fail", "the NVIDIA driver is not loaded (no module/nvidia/version in sysfs)",
                        "reboot", ["reboot"])]
    if ev.get("smi_missing"):
        return [could_not_run("nvidia-smi", "nvidia-smi is not on PATH")]
    out = []
    if ev.get("smi_error"):
        # the driver is loaded and nvidia-smi is there: a GPU that does not answer makes it fail
        out.append(finding("nvidia-smi", "fail", ev["smi_error"], "reboot", ["reboot"]))
    elif ev.get("smi_unreadable"):
        out.append(finding("nvidia-smi", "warn", "could not read: %s" % ev["smi_unreadable"], "rerun"))
    gpus = ev.get("smi") or []
    if ev.get("pci_error"):
        out.append(could_not_run("PCI bus", ev["pci_error"]))
    groups = xid.grouped(xid.events(ev.get("kernel_log")))
    out.extend(_presence(expected, ev, gpus, groups))
    if ev.get("kernel_log_error"):
        out.append(could_not_run("kernel log", ev["kernel_log_error"]))
    table, problems = xid.policy(xid_policy)
    out.extend(finding("xid_policy", "warn", problem, "rerun") for problem in problems)
    out.extend(_xids(groups, gpus, table))
    out.extend(_sxids(ev.get("kernel_log")))
    for gpu in gpus:
        out.extend(_memory(gpu))
        out.extend(_pcie(gpu))
        out.extend(_clocks(gpu))
        action = (gpu.get("recovery_action") or "").upper().replace(" ", "_")
        if action and action != "NONE":
            # nvidia-smi prints "Reset" or "Reboot" where NVML names GPU_RESET and NODE_REBOOT
            rung = next((RECOVERY_ACTIONS[k] for k in (action, "GPU_" + action, "NODE_" + action)
                         if k in RECOVERY_ACTIONS), "reboot")
            out.append(finding(_label(gpu), "fail", "the driver asks for recovery: %s" % gpu["recovery_action"], rung,
                               _reset(gpu) if rung == "reset_gpu" else (["reboot"] if rung == "reboot" else None)))
        out.extend(_settings(expected, gpu))
        if expected.get("fabric"):
            out.extend(_fabric(gpu))
        out.extend(_fabric_health(gpu))
    out.extend(_nvlink(expected, ev, gpus))
    out.extend(nvlink_floor.findings(expected, ev.get("nvlink_text"), dict((g["index"], _label(g)) for g in gpus)))
    if gpus:
        out.extend(unknown_settings(expected))
    if expected.get("fabric_manager"):
        if ev.get("fabric_manager_error"):
            out.append(could_not_run(FABRIC_MANAGER_UNIT, ev["fabric_manager_error"]))
        elif ev.get("fabric_manager") != "active":
            out.append(finding(FABRIC_MANAGER_UNIT, "fail", "the fabric manager is %s: the GPUs cannot use the "
                               "NVSwitches (CUDA reports no peer access, NCCL falls back to PCIe)"
                               % ev.get("fabric_manager"), "rerun",
                               ["systemctl", "restart", FABRIC_MANAGER_UNIT]))
    return out


def xid_counts(kernel_log):
    """[{pci_bus_id, xid, count}] of the kernel log, in first-seen order."""
    return [{"pci_bus_id": bus, "xid": number, "count": len(seen)}
            for (bus, number), seen in xid.grouped(xid.events(kernel_log))]


def check(expected, run, which, sys_dir="/sys", dcgm_level=0, dcgm_timeout_s=300, xid_policy=None):
    """gather() then judge() (with the inventory's xid_policy), and DCGM's diagnostic at dcgm_level where
    the node has dcgmi (0: not run): {driver, gpus, xids, dcgm, findings}."""
    ev = gather(run, which, sys_dir=sys_dir, fabric_manager=expected.get("fabric_manager"))
    found = judge(expected, ev, xid_policy=xid_policy)
    diag = dcgm.gather(run, which, level=dcgm_level, timeout_s=dcgm_timeout_s) if ev.get("driver") else None
    labels = dict((str(gpu["index"]), _label(gpu)) for gpu in ev.get("smi") or [])
    found += dcgm.judge(diag, labels)
    return {"driver": ev.get("driver"), "gpus": ev.get("smi") or [], "xids": xid_counts(ev.get("kernel_log")),
            "dcgm": None if diag is None else {"level": diag["level"], "error": diag["error"]},
            "findings": found}
