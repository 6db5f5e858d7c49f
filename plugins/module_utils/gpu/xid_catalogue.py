# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What each NVIDIA Xid means for a node, and the least disruptive repair that clears it.

One entry per Xid number that the sources below document for Ampere, Hopper or Blackwell GPUs:
a short meaning, a severity ("fail": the GPU or node cannot be trusted with jobs until repaired;
"warn": an application fault or an informational event), the repair rung (findings/finding.py RUNGS), and the key
of the source the entry follows (NVCAT for NVIDIA's Xid catalogue, NVL5 for its NVLink5 decode
sheet, NVMEM for NVIDIA's memory-error recovery flags, NVSENT for NVIDIA NVSentinel's mapping).
Plain data, no imports: the node health agent loads it on the node.
"""
from __future__ import absolute_import, division, print_function
__metaclass__ = type

# Sources: KEY  description (title, where)
#   NVCAT   NVIDIA "Analyzing Xid Errors with the Xid Catalog" (Xids sheet: mnemonic, description,
#           "Resolution Bucket (Immediate Action)" and "(Investigatory Action)"),
#           https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html; read through the
#           generated mirror leptonai/gpud components/accelerator/nvidia/xid/catalog_generated.go
#           (generated 2025-10-29 from that page, commit 73e270e3e0fd490ec5c33e144ad894de7d6c4d21)
#   NVL5    the same catalogue, sheet "Xid 144-150 Decode" (per unit and error status: resolution,
#           Fatal / Non-fatal), same mirror (nvlinkRules)
#   NVMEM   NVIDIA "GPU Memory Error Management", "Error Recovery and Response Flags" (row-remap
#           pending/failure flags; recovery action None / Reset ("nvidia-smi -r") / Reboot /
#           Drain P2P / Drain and Reset), https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/
#   NVSENT  NVIDIA/NVSentinel distros/kubernetes/nvsentinel/charts/gpu-health-monitor/xiderrorsmapping.csv
#           (commit 6f8b0fcfa8e502bdda78fabf96facef729a9285b) and
#           health-monitors/syslog-health-monitor/pkg/common/common.go MapActionStringToProto
#           (RESTART_APP, IGNORE -> no action; WORKFLOW_XID_48, RESET_GPU -> GPU reset)
#   AWSHC   awslabs/awsome-distributed-ai pull 1190 (2026-07-15): Xid 64 treated as ISOLATE on cloud
#           instances, reboot preferred to "nvidia-smi --gpu-reset"
#   GPUD    leptonai/gpud pulls 100 (DeepSeek Fire-Flyer: reboot for 44, 61, 65), 117 (reboot when
#           Xid 45 leaves nvidia-smi hung), 987 (judge 63/64 by the row-remap state, not the log line)
# Consulted, no per-Xid classification found: GoogleCloudPlatform/cluster-health-scanner (gates on
# "dcgmi diag" and ecc.errors.uncorrected.volatile.total > 0 -> reboot-required), NVIDIA DCGM (the
# dcgm-exporter only carries the catalogue's Xid texts).
#
# Catalogue buckets -> rungs used here: RESTART_APP, IGNORE, CHECK_APP/CUDA -> "rerun";
# RESET_GPU, WORKFLOW_XID_48 -> "reset_gpu"; RESTART_BM, RESTART_VM -> "reboot";
# CONTACT_SUPPORT as the immediate action, or an RMA condition (NVMEM) -> "report_host".
# An Xid that repeats after its repair escalates one rung (the caller's job, not this table's).

XIDS = {
    8: {"meaning": "GPU stopped processing (channel idle timeout)", "severity": "warn", "repair": "rerun",
        "source": "NVCAT"},
    13: {"meaning": "Graphics engine exception, usually a bad kernel or out-of-range access in the application",
         "severity": "warn", "repair": "rerun", "source": "NVCAT"},
    31: {"meaning": "GPU memory page fault (MMU fault), usually an illegal address in the application",
         "severity": "warn", "repair": "rerun", "source": "NVCAT"},
    32: {"meaning": "Invalid or corrupted push buffer stream (PBDMA error)", "severity": "warn", "repair": "rerun",
         "source": "NVCAT"},
    # NVCAT immediate IGNORE, investigatory CONTACT_SUPPORT: a firmware watchdog, the job is rerun
    38: {"meaning": "Driver firmware error (FECS watchdog timeout)", "severity": "warn", "repair": "rerun",
         "source": "NVCAT"},
    43: {"meaning": "GPU stopped processing a channel, usually the application's fault", "severity": "warn",
         "repair": "rerun", "source": "NVCAT"},
    # NVCAT WORKFLOW_XID_45: with other Xids follow those; solo on NVSwitch systems restart Fabric Manager.
    # GPUD reboots when it leaves nvidia-smi hung. Followed: rerun, the other Xids decide the node.
    45: {"meaning": "Preemptive cleanup of channels after an earlier error", "severity": "warn", "repair": "rerun",
         "source": "NVCAT"},
    46: {"meaning": "GPU stopped processing (GPU timeout)", "severity": "fail", "repair": "reset_gpu",
         "source": "NVCAT"},
    # NVCAT WORKFLOW_XID_48 (both columns); NVSENT maps it to a GPU reset, which also activates a
    # pending row remap (NVMEM). A following Xid 64 or a remap failure makes it report_host.
    48: {"meaning": "Uncorrectable double-bit ECC error in GPU memory", "severity": "fail", "repair": "reset_gpu",
         "source": "NVSENT"},
    # NVCAT marks 61 unused on Ampere and later, immediate CONTACT_SUPPORT; GPUD (DeepSeek) reboots.
    # Followed NVCAT: an unexpected micro-controller breakpoint is reported.
    61: {"meaning": "Internal micro-controller (PMU) breakpoint", "severity": "fail", "repair": "report_host",
         "source": "NVCAT"},
    62: {"meaning": "Internal micro-controller (PMU) halt", "severity": "fail", "repair": "reset_gpu",
         "source": "NVCAT"},
    # NVCAT IGNORE/IGNORE: the remap is pending and applies at the next GPU reset while jobs go on
    # (NVMEM); the driver's line says "reset gpu to activate". GPUD judges it by the remap state instead.
    63: {"meaning": "GPU memory row remapping (or page retirement) event recorded", "severity": "warn",
         "repair": "rerun", "source": "NVCAT"},
    # Sources disagree: NVCAT immediate RESET_GPU, investigatory CONTACT_SUPPORT; NVMEM makes a row-remap
    # failure an RMA condition; AWSHC isolates the instance. Followed NVMEM: a cloud host cannot be
    # field-diagnosed or RMA'd by its user, so the host is reported.
    64: {"meaning": "GPU memory row remapping (or page retirement) failed", "severity": "fail",
         "repair": "report_host", "source": "NVMEM"},
    68: {"meaning": "Video decoder (NVDEC0) exception", "severity": "warn", "repair": "rerun", "source": "NVCAT"},
    69: {"meaning": "Graphics engine class error, usually the application's fault", "severity": "warn",
         "repair": "rerun", "source": "NVCAT"},
    # NVCAT WORKFLOW_NVLINK_ERR decides by the bits of the logged registers (ignore, reseat, report);
    # that decode is not done here, so the node is rebooted (links retrained, Fabric Manager restarted)
    # and a repeat escalates to report_host.
    74: {"meaning": "NVLink error", "severity": "fail", "repair": "reboot", "source": "NVCAT"},
    79: {"meaning": "GPU has fallen off the bus", "severity": "fail", "repair": "reboot", "source": "NVCAT"},
    92: {"meaning": "High single-bit ECC error rate", "severity": "warn", "repair": "rerun", "source": "NVCAT"},
    94: {"meaning": "Contained memory error: only the faulting application was affected", "severity": "warn",
         "repair": "rerun", "source": "NVCAT"},
    95: {"meaning": "Uncontained memory error: all applications on the GPU were affected", "severity": "fail",
         "repair": "reset_gpu", "source": "NVCAT"},
    109: {"meaning": "Context switch timeout", "severity": "fail", "repair": "reset_gpu", "source": "NVCAT"},
    119: {"meaning": "GSP RPC timeout: the GPU System Processor stopped answering the driver", "severity": "fail",
          "repair": "reset_gpu", "source": "NVCAT"},
    120: {"meaning": "GSP error", "severity": "fail", "repair": "reset_gpu", "source": "NVCAT"},
    # NVCAT immediate IGNORE, investigatory CONTACT_SUPPORT (chip-to-chip link of Grace-based systems)
    121: {"meaning": "C2C (chip-to-chip) link error", "severity": "warn", "repair": "rerun", "source": "NVCAT"},
    # 122/123: NVCAT marks both unused on Ampere and later, immediate CONTACT_SUPPORT
    122: {"meaning": "SPI flash read through PMU RPC failed", "severity": "fail", "repair": "report_host",
          "source": "NVCAT"},
    123: {"meaning": "SPI flash write through PMU RPC failed", "severity": "fail", "repair": "report_host",
          "source": "NVCAT"},
    136: {"meaning": "NVLink link training failed", "severity": "fail", "repair": "reset_gpu", "source": "NVCAT"},
    137: {"meaning": "NVLink privilege error", "severity": "warn", "repair": "rerun", "source": "NVCAT"},
    140: {"meaning": "Unrecovered ECC error escaped containment", "severity": "fail", "repair": "reset_gpu",
          "source": "NVCAT"},
    143: {"meaning": "GPU initialization error", "severity": "fail", "repair": "reset_gpu", "source": "NVCAT"},
    # 144-150 (NVLink5, Blackwell): NVCAT WORKFLOW_NVLINK5_ERR; the NVL5 sheet gives IGNORE for the
    # Non-fatal unit/status pairs and RESET_GPU for the Fatal ones (some RLW_REMAP pairs defer to Xid 154).
    # The entries below are for a line that says "Fatal"; see SUBCODE_XIDS.
    144: {"meaning": "NVLink5 SAW error", "severity": "fail", "repair": "reset_gpu", "source": "NVL5"},
    145: {"meaning": "NVLink5 RLW error", "severity": "fail", "repair": "reset_gpu", "source": "NVL5"},
    146: {"meaning": "NVLink5 TLW error", "severity": "fail", "repair": "reset_gpu", "source": "NVL5"},
    147: {"meaning": "NVLink5 TREX error", "severity": "fail", "repair": "reset_gpu", "source": "NVL5"},
    148: {"meaning": "NVLink5 NVLPW control error", "severity": "fail", "repair": "reset_gpu", "source": "NVL5"},
    149: {"meaning": "NVLink5 NETIR error", "severity": "fail", "repair": "reset_gpu", "source": "NVL5"},
    150: {"meaning": "NVLink5 MSE error", "severity": "fail", "repair": "reset_gpu", "source": "NVL5"},
    # NVCAT XID_154 "informational only regarding another Xid": do what the named action says
    # (RECOVERY_ACTIONS). The entry is the fallback when the action cannot be read from the line.
    154: {"meaning": "GPU recovery action changed (the driver names the action another Xid needs)",
          "severity": "fail", "repair": "reboot", "source": "NVMEM"},
    155: {"meaning": "NVLink software-defined error", "severity": "fail", "repair": "reset_gpu", "source": "NVCAT"},
    156: {"meaning": "Resource retirement event", "severity": "fail", "repair": "reset_gpu", "source": "NVCAT"},
    # NVCAT immediate IGNORE, investigatory CONTACT_SUPPORT
    157: {"meaning": "Resource retirement failure", "severity": "warn", "repair": "rerun", "source": "NVCAT"},
    158: {"meaning": "GPU fatal timeout", "severity": "fail", "repair": "reset_gpu", "source": "NVCAT"},
}

# Xids whose log line carries "Fatal" or "Nonfatal" after the unit name (NVL5); XIDS holds the Fatal
# reading, a Nonfatal line is severity "warn", repair "rerun"
SUBCODE_XIDS = frozenset(range(144, 151))

# Xid 154 and nvidia-smi's <gpu_recovery_action>: NVML recovery action -> rung (NVMEM; the drains quiesce
# peer-to-peer traffic, then the GPU is reset)
RECOVERY_ACTIONS = {
    "NONE": "rerun",
    "GPU_RESET": "reset_gpu",
    "NODE_REBOOT": "reboot",
    "DRAIN_P2P": "reset_gpu",
    "DRAIN_AND_RESET": "reset_gpu",
}

# The words an entry's severity, and an inventory's xid_policy, may use (the finding severities)
SEVERITIES = ("fail", "warn")

# NVCAT names no repeat counts: one event of an Xid on a GPU is enough for its entry to apply. An entry, or
# an inventory's xid_policy, may set "count" (events of that Xid on one GPU) within "window_s" seconds
# (None: since boot); fewer are a warning.
DEFAULT_COUNT = 1
DEFAULT_WINDOW_S = None

# Xids whose fault the GPU's own state reports while it lasts (NVMEM: ECC counters, row-remap flags), and a
# reset or reboot clears; an entry may name its own "state" ("ecc" or "remap")
STATE_BACKED = {48: "ecc", 63: "remap", 64: "remap", 92: "ecc", 94: "ecc", 95: "ecc"}

# Xids the driver reports over several lines per fault (NVCAT's examples, and the logs in
# tests/fixtures/gpu/public): 13 one warp, global and ESR line per SM; 31 one MMU fault line per client;
# 43 and 45 one line per channel of the process
MULTILINE_XIDS = frozenset((13, 31, 43, 45))

# Xids whose line says the GPU fell off the bus (the driver's own "fallen off" lines belong to it)
FALLEN_OFF_XIDS = frozenset((79,))
