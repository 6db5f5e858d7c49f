# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The finding: one fault, where it is, why, and what repairs it.

Every check that names a fault builds it with make(); every report, metric,
drain reason and repair line reads the fields named here.  A finding is a
plain dict (JSON out of modules and the node agent):

  component  which part of the node or cluster is at fault (COMPONENTS);
  subject    the NIC, GPU, container, file path or variable at fault;
  severity   "fail": the fabric cannot work as it should; "warn": a check
             could not run, or a fault that does not stop the fabric;
  cause      one line: what is wrong, with the evidence.

and, where they apply (OPTIONAL):

  host            the node (added on the controller; None: the cluster);
  repair          the command line that repairs it (added on the controller);
  rung            the least disruptive repair that clears it (RUNGS);
  action          the node command that does that rung (a GPU reset), or None;
  phase           the site.yml phase, by the component it configures, whose
                  re-run is the repair, or None;
  can_reschedule  a maintenance event the operator may move to another time.

Plain Python (no ansible import): the node health agent ships it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# in the order reports list them
# "job": a running job's NCCL communicator as NCCL RAS sees it (a hang, a dead or failing rank)
COMPONENTS = ("nic", "rxdm", "nccl_plugin", "nccl_profile", "host", "gpu", "rdma", "imex", "topology", "fabric",
              "job")
# judged only where a job runs, not by every node check: a report lists them for a host that has such a finding
ONLY_WITH_FINDINGS = ("job",)
SEVERITIES = ("fail", "warn")
# repair rungs, least to most disruptive: a finding's rung is one of these names, and the remediation ladder
# climbs them in this order. The rest of each rung (the setting that allows it, the work it takes from a
# finding, its words, its task file) is plugins/plugin_utils/remediation/ladder.py RUNG_PARTS, keyed by these
# names; a rung without all of its parts there fails at import.
RUNGS = ("rerun", "restart", "reset_gpu", "reboot", "report_host")
# the node command of a reset_gpu finding (its action), before the GPU it resets: the ladder runs an action
# of this form only
GPU_RESET = ("nvidia-smi", "--gpu-reset", "-i")
REQUIRED = ("component", "subject", "severity", "cause")
OPTIONAL = ("host", "repair", "rung", "action", "phase", "can_reschedule")
# what a report shows of each finding, in its column order
REPORTED = ("host", "component", "subject", "severity", "cause", "repair")
# how a report names the host of a finding about the cluster as a whole
CLUSTER = "(cluster)"


def make(component, subject, severity, cause, **optional):
    """A finding; raises ValueError on a component, severity, rung or field that is not defined here
    (a programming error, caught by the unit tests, never by a user)."""
    if component not in COMPONENTS:
        raise ValueError("unknown finding component %r" % (component,))
    if severity not in SEVERITIES:
        raise ValueError("unknown finding severity %r" % (severity,))
    unknown = sorted(set(optional) - set(OPTIONAL))
    if unknown:
        raise ValueError("unknown finding field(s) %s" % ", ".join(unknown))
    if optional.get("rung") is not None and optional["rung"] not in RUNGS:
        raise ValueError("unknown repair rung %r" % (optional["rung"],))
    out = {"component": component, "subject": subject, "severity": severity, "cause": cause}
    out.update(optional)
    return out


def gpu_reset(gpu):
    """The action of a reset_gpu finding: reset this one GPU (its index or PCI bus id)."""
    return list(GPU_RESET) + [str(gpu)]


def is_gpu_reset(action):
    """Whether a finding's action is a reset of one GPU, as gpu_reset() spells it, and nothing else."""
    return (isinstance(action, list) and len(action) == len(GPU_RESET) + 1 and tuple(action[:-1]) == GPU_RESET
            and isinstance(action[-1], str) and bool(action[-1]))


def rung_order(rung):
    """Position of a rung from the least disruptive (unknown rungs last)."""
    return RUNGS.index(rung) if rung in RUNGS else len(RUNGS)


def fails(items):
    """Whether any of the findings is a failure."""
    return any(item["severity"] == "fail" for item in items or [])
