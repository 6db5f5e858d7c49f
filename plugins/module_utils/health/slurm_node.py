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


# A Slurm reservation (the slurm_node module's states reserved and released). A reservation without Slurm's
# ignore_jobs flag is refused while a job runs on any of its nodes, and once made Slurm starts no job there
# but the reservation's users': it holds nodes for a test or a repair.

# reservation and node names as Slurm takes them on scontrol's command line: one word, no '=' nor ','
_WORD_BAD = (" ", "\t", "\n", "=", ",")
# what scontrol answers for a reservation it does not have
_ABSENT = ("not found", "no reservations in the system", "requested reservation is invalid")


def _word_problem(what, value):
    if not value or any(bad in value for bad in _WORD_BAD):
        return "%s %r is not one word without '=' or ','" % (what, value)
    return None


def reservation_problem(name, nodes=None, duration=None, users=None, flags=None, creating=False):
    """Why these reservation options cannot be used (one line), or None."""
    problems = [_word_problem("reservation", name)]
    if creating:
        if not nodes:
            problems.append("nodes must name at least one node")
        problems.extend(_word_problem("node", n) for n in nodes or [])
        if not isinstance(duration, int) or isinstance(duration, bool) or duration < 1:
            problems.append("duration must be a whole number of minutes, 1 or more, not %r" % (duration,))
        problems.extend(_word_problem("user", u) for u in users or [])
        problems.extend(_word_problem("flag", f) for f in flags or [])
    problems = [p for p in problems if p]
    return problems[0] if problems else None


def reservation_show_argv(scontrol, name):
    # -o: one line per reservation, its fields KEY=VALUE
    return [scontrol, "-o", "show", "reservation", name]


def reservation_create_argv(scontrol, name, nodes, duration, users, flags):
    argv = [scontrol, "create", "reservation", "ReservationName=%s" % name, "Nodes=%s" % ",".join(nodes),
            "StartTime=now", "Duration=%d" % duration]
    if users:
        argv.append("Users=%s" % ",".join(users))
    if flags:
        argv.append("Flags=%s" % ",".join(flags))
    return argv


def reservation_delete_argv(scontrol, name):
    return [scontrol, "delete", "ReservationName=%s" % name]


def answer_line(out, err, limit=MAX_REASON):
    """What scontrol said (its error output first), as one line of single spaces."""
    text = " ".join(((err or "").strip() or (out or "").strip()).split())
    return safe_text.one_line(text, limit)


def expand_hostlist(text):
    """Slurm's compressed host list ("n[1-3,07-08],gpu-a") -> ["n1", "n2", "n3", "n07", "n08", "gpu-a"].

    Ranges keep the width of their start ("07-08"); several bracket groups in one name multiply."""
    text = (text or "").strip()
    if not text or text.lower() == "(null)":
        return []
    names, depth, start = [], 0, 0
    for i, char in enumerate(text + ","):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "," and depth == 0:
            if text[start:i]:
                names.extend(_expand_one(text[start:i], text))
            start = i + 1
        if depth < 0 or depth > 1:
            raise SlurmNodeError("cannot read the node list %r" % safe_text.one_line(text, 120))
    if depth:
        raise SlurmNodeError("cannot read the node list %r" % safe_text.one_line(text, 120))
    return names


def _expand_one(pattern, whole):
    if "[" not in pattern:
        return [pattern]
    head, rest = pattern.split("[", 1)
    if "]" not in rest:
        raise SlurmNodeError("cannot read the node list %r" % safe_text.one_line(whole, 120))
    body, tail = rest.split("]", 1)
    values = []
    for part in body.split(","):
        low, _sep, high = part.partition("-")
        if not low.isdigit() or (high and not high.isdigit()) or (high and int(high) < int(low)):
            raise SlurmNodeError("cannot read the node list %r" % safe_text.one_line(whole, 120))
        values.extend(str(n).zfill(len(low)) for n in range(int(low), int(high or low) + 1))
    return [head + value + end for value in values for end in _expand_one(tail, whole)]


def parse_reservation(rc, out, err, name):
    """scontrol -o show reservation NAME's answer -> {name, nodes, users, flags, state, start, end}; None where
    Slurm has no such reservation. SlurmNodeError (one line) where scontrol failed otherwise."""
    said = answer_line(out, err)
    if rc != 0:
        if any(word in said.lower() for word in _ABSENT):
            return None
        raise SlurmNodeError("scontrol show reservation %s exited %d: %s" % (name, rc, said or "no output"))
    for line in (out or "").splitlines():
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if fields.get("ReservationName") != name:
            continue

        def listed(key):
            value = fields.get(key, "")
            return [] if value.lower() in ("", "(null)") else value.split(",")
        return {"name": name, "nodes": sorted(expand_hostlist(fields.get("Nodes", ""))), "users": listed("Users"),
                "flags": [f.lower() for f in listed("Flags")], "state": fields.get("State", "").lower(),
                "start": fields.get("StartTime", ""), "end": fields.get("EndTime", "")}
    return None


def reservation_plan(record, state, name, nodes):
    """What to do: ("create" | "delete" | None, why in one line, problem: a reservation of that name that holds
    other nodes, which is not changed). state: reserved or released."""
    if state == "released":
        if record is None:
            return None, "no reservation %s: nothing to release" % name, False
        return "delete", "release the reservation %s of %s" % (name, ",".join(record["nodes"])), False
    wanted = sorted(set(nodes))
    if record is None:
        return "create", "reserve %s for %s" % (",".join(wanted), name), False
    if record["nodes"] == wanted:
        return None, "the reservation %s holds %s already" % (name, ",".join(wanted)), False
    return None, ("a reservation %s holds %s, not %s; release it first or choose another name" % (
        name, ",".join(record["nodes"]) or "no node", ",".join(wanted))), True
