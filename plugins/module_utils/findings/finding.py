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
  can_reschedule  a maintenance event the operator may move to another time;
  place           where the node sits, below the VM (PLACE_PARTS): the unit that
                  fails is often the physical host or its sub-block, not the VM.
                  Only a node's findings have one; a cluster finding has none.

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
OPTIONAL = ("host", "repair", "rung", "action", "phase", "can_reschedule", "place")
# what a report shows of each finding, in its column order
REPORTED = ("host", "component", "subject", "severity", "cause", "repair")
# how a report names the host of a finding about the cluster as a whole
CLUSTER = "(cluster)"

# the parts of a finding's place, outermost first: part, the words a report shows it by, and the node
# agent's metric label it becomes (None: no label). Every reader of a place (make, the reports, the metric
# labels, the remediation audit) follows this table. The Compute API's physicalHostTopology gives cluster,
# block, sub-block and host; an A4X (Max) sub-block is one NVLink domain. Labels are only the parts whose
# values are few per cluster: the cluster is the same on every node, and the NVLink domain repeats
# block/sub-block.
PLACE_PARTS = (
    {"part": "cluster", "words": "cluster", "label": None},
    {"part": "block", "words": "block", "label": "block"},
    {"part": "subblock", "words": "sub-block", "label": "subblock"},
    # the physical host, not the VM (the finding's host)
    {"part": "host", "words": "physical host", "label": "physical_host"},
    {"part": "nvlink_domain", "words": "NVLink domain", "label": None},
)
# a place part's most characters: the API's names are short, and a label value costs memory in every sample
MAX_PLACE_CHARS = 128


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
    if "place" in optional:
        out["place"] = place(optional["place"])
    return out


def place_parts():
    """The parts of a place, in PLACE_PARTS order (read at each call, never copied)."""
    return tuple(row["part"] for row in PLACE_PARTS)


def _place_text(value):
    """One line of at most MAX_PLACE_CHARS: control characters become spaces (no line of a report, a
    metric or an audit can be forged through a place), a longer value ends in '...'."""
    text = "".join(" " if (ord(c) < 32 or 127 <= ord(c) < 160 or c in u"\u2028\u2029") else c
                   for c in value[:MAX_PLACE_CHARS + 1]).strip()
    return text if len(text) <= MAX_PLACE_CHARS else text[:MAX_PLACE_CHARS - 3] + "..."


def place(raw):
    """A place as a finding holds it: {part: one line of text}, only the parts of PLACE_PARTS that are set,
    in their order; None when it places nothing. ValueError names a part that is not defined or a value
    that is not text (a number is taken as its text)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ValueError("place must be a mapping of %s, not %s"
                         % (", ".join(place_parts()), type(raw).__name__))
    parts = place_parts()
    unknown = sorted(str(k) for k in raw if k not in parts)
    if unknown:
        raise ValueError("unknown place part(s) %s (the parts: %s)" % (", ".join(unknown), ", ".join(parts)))
    out = {}
    for part in parts:
        value = raw.get(part)
        if value is None or value == "":
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise ValueError("place part %s must be text, not %s" % (part, type(value).__name__))
        text = _place_text(str(value))
        if text:
            out[part] = text
    return out or None


def place_words(value):
    """A place in words for a report or a log line ("block b1, sub-block s2, physical host h3"); "" for none."""
    value = value if isinstance(value, dict) else {}
    return ", ".join("%s %s" % (row["words"], value[row["part"]]) for row in PLACE_PARTS if value.get(row["part"]))


def place_labels(value):
    """A place as metric labels: ((label, value), ...) of the parts PLACE_PARTS gives a label, set or not
    (an unknown part is an empty label, so a node's series keep one label set); () for no place."""
    if not isinstance(value, dict) or not value:
        return ()
    return tuple((row["label"], value.get(row["part"]) or "") for row in PLACE_PARTS if row["label"])


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
