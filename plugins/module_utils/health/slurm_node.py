# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Slurm node's drain, as the collection changes it (the slurm_node module): a person's decision stands.

The collection marks every drain it makes with its own prefix in the reason ("gpudirect ...", and the
node agent's Slurm hooks "gpudirect: ..."); a run that must tell its own drains from the collection's
others (the rolling upgrade) marks them with an owner of its own ("gpudirect-upgrade ..."). A node
drained, down or failed with any other reason was taken out by a person (or by Slurm itself): its
reason is never overwritten, and the collection never resumes it. The collection resumes only a node
whose drain is its own.

Plain Python with no ansible import, like the rest of this folder.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text

OWNER = "gpudirect"
# where a node's Slurm configuration may be (besides SLURM_CONF): none there, no Slurm is configured
CONF_PATHS = ["/etc/slurm/slurm.conf", "/etc/slurm-llnl/slurm.conf", "/run/slurm/conf/slurm.conf",
              "/var/spool/slurmd/conf-cache/slurm.conf"]
# sinfo %T base states (and flags) that keep new jobs off the node
OUT_STATES = ("drain", "drained", "draining", "down", "fail", "failing", "maint")
_SUFFIXES = "*~#!%$@^-"
MAX_REASON = 200


class SlurmNodeError(ValueError):
    """What sinfo printed cannot be read; the message says what."""


def sinfo_argv(sinfo, node):
    # state, the user who set the reason, then the reason: the only field that may hold spaces, so last
    return [sinfo, "-h", "-N", "-n", node, "-o", "%T %u %E"]


def parse(text, node):
    """sinfo's line for the node -> {node, states, out, reason, reason_user}; None when sinfo lists it not."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    if not lines:
        return None
    parts = lines[0].split(" ", 2)
    if len(parts) < 2:
        shown = safe_text.one_line(lines[0], 120)
        raise SlurmNodeError("sinfo printed %r for %s, not 'STATE USER REASON'" % (shown, node))
    states = []
    for part in parts[0].lower().split("+"):
        state = part.rstrip(_SUFFIXES)
        if state and state not in states:
            states.append(state)
    reason = parts[2].strip() if len(parts) > 2 else ""
    if reason.lower() in ("none", "(null)"):
        reason = ""
    user = parts[1] if parts[1].lower() not in ("unknown", "(null)", "n/a") else ""
    return {"node": node, "states": states, "out": any(s in OUT_STATES for s in states),
            "reason": safe_text.one_line(reason, MAX_REASON), "reason_user": user}


def marked(reason, owner=OWNER):
    """Whether a reason starts with the owner mark, as a word ("gpudirect ..." or "gpudirect: ...", as the
    node agent's hooks write it; not "gpudirect-other ...")."""
    return reason == owner or reason.startswith(owner + " ") or reason.startswith(owner + ":")


def ours(record, owner=OWNER):
    """Whether the node's drain is the collection's own (its reason starts with the owner mark)."""
    return bool(record and record["out"] and marked(record["reason"], owner))


def reason_text(reason, owner=OWNER):
    """The drain reason the collection sets: the owner mark, then the reason, one masked line."""
    text = safe_text.one_line(safe_text.mask_text(reason or ""), MAX_REASON - len(owner) - 1)
    return text if marked(text, owner) else "%s %s" % (owner, text)


def plan(record, state, reason, owner=OWNER):
    """What to do: (argv tail for scontrol update or None, why in one line, person: whether a person's
    decision held the collection back). state: drained or resumed."""
    if record is None:
        return None, "Slurm does not list the node", False
    if state == "drained":
        if record["out"] and not ours(record, owner):
            return None, ("left as it is: %s by %s (%s), not by %s" % (
                "+".join(record["states"]), record["reason_user"] or "someone", record["reason"] or "no reason",
                owner)), True
        if ours(record, owner):
            return None, "already drained by %s: %s" % (owner, record["reason"]), False
        return ["state=drain", "reason=%s" % reason_text(reason, owner)], "drain: %s" % reason_text(reason, owner), False
    if not record["out"]:
        return None, "not drained: %s" % "+".join(record["states"]), False
    if not ours(record, owner):
        return None, ("not resumed: %s by %s (%s); a person returns it" % (
            "+".join(record["states"]), record["reason_user"] or "someone", record["reason"] or "no reason")), True
    return ["state=resume"], "resume: its drain was %s's (%s)" % (owner, record["reason"]), False


def configured(paths, environ, exists):
    """Whether a Slurm configuration is there (SLURM_CONF or one of paths)."""
    return any(p and exists(p) for p in [environ.get("SLURM_CONF", "")] + list(paths))
