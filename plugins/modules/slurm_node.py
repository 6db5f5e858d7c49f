#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: slurm_node
short_description: Drain a Slurm node or resume it, leaving a person's drain alone; reserve nodes or release them
version_added: 1.1.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Reads the node's Slurm state and drain reason (C(sinfo -h -N -n NODE -o "%T %u %E")) and, where asked,
    drains it (C(scontrol update nodename=NODE state=drain reason=...)) or resumes it (C(state=resume)).
  - The collection marks its drains with O(owner) at the start of the reason. A node that is drained, down or
    failed with any other reason was taken out by a person or by Slurm; it is left as it is, its reason kept,
    and RV(person) says so. Only a node whose drain is the collection's own is resumed.
  - A drain keeps the jobs that run on the node (Slurm lets them end); wait for them with
    M(gpudirect.gcp.gpu_busy_info) and its O(gpudirect.gcp.gpu_busy_info#module:wait_s) before anything disruptive.
  - With O(state=reserved) or O(state=released) it makes (C(scontrol create reservation)) or deletes
    (C(scontrol delete)) the Slurm reservation O(reservation) of O(nodes), starting now, for O(duration) minutes.
    Without Slurm's C(ignore_jobs) flag in O(flags), Slurm refuses a reservation while a job runs on any of its
    nodes; the task then fails with Slurm's answer in one line, also as RV(refused). Once made, Slurm starts no
    job there but O(users)'. A reservation of that name holding the same nodes is left as it is; one holding
    other nodes fails the task and is not changed. Releasing a reservation Slurm does not have changes nothing.
  - Runs on the node (or any host with the Slurm client commands and the cluster's configuration); a
    reservation on any host whose C(scontrol) reaches the cluster's controller.
options:
  node:
    description: The node's Slurm name. Required with O(state) V(drained), V(resumed) or V(read).
    type: str
  state:
    description:
      - V(drained) drains the node with O(reason) unless it is out of service already.
      - V(resumed) resumes the node where its drain is the collection's own.
      - V(read) only reads the node's state.
      - V(reserved) makes the reservation O(reservation) of O(nodes) unless it is there already.
      - V(released) deletes the reservation O(reservation) where Slurm has it.
    type: str
    choices: [drained, resumed, read, reserved, released]
    default: read
  reservation:
    description: The reservation's name, one word. Required with O(state=reserved) and O(state=released).
    type: str
  nodes:
    description: The Slurm names of the nodes the reservation holds. Required with O(state=reserved).
    type: list
    elements: str
  duration:
    description: Minutes the reservation lasts from now. Required with O(state=reserved).
    type: int
  users:
    description: Who may run jobs on the reserved nodes.
    type: list
    elements: str
    default: [root]
  flags:
    description: >-
      Slurm's reservation flags (V(maint), V(ignore_jobs), ...); V(ignore_jobs) makes a reservation also
      where jobs run.
    type: list
    elements: str
    default: []
  reason:
    description: Why the node is drained; one line, secrets masked, O(owner) put before it. Required with O(state=drained).
    type: str
  owner:
    description: The mark at the start of every drain reason the collection sets, which tells its drains from others'.
    type: str
    default: gpudirect
  missing:
    description:
      - What a node Slurm does not know is - V(fail) fails the task; V(ignore) returns RV(listed) false and changes
        nothing (a node not yet in C(slurm.conf), or a host with no Slurm client or no Slurm configuration,
        gets no job anyway).
    type: str
    choices: [fail, ignore]
    default: fail
  sinfo:
    description: The C(sinfo) command, a name on PATH or an absolute path.
    type: str
    default: sinfo
  scontrol:
    description: The C(scontrol) command, a name on PATH or an absolute path.
    type: str
    default: scontrol
extends_documentation_fragment:
  - gpudirect.gcp.slurm
  - gpudirect.gcp.attributes
attributes:
  check_mode:
    support: full
    details: Reads the node's state or the reservation and says what would change; runs no C(scontrol update),
      C(create) or C(delete).
  diff_mode:
    support: full
    details: The node's states and reason before and after; a reservation's nodes, users and flags.
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: Take the node out of new jobs with the finding as the reason
  gpudirect.gcp.slurm_node:
    node: "{{ inventory_hostname }}"
    state: drained
    reason: "remediate: gpu GPU 3: pending row remap"
  register: drained

- name: Say that a person's drain was kept
  ansible.builtin.debug:
    msg: "{{ drained.msg }}"
  when: drained.person

- name: Return the node to Slurm, where the collection drained it
  gpudirect.gcp.slurm_node:
    node: "{{ inventory_hostname }}"
    state: resumed

- name: Hold two nodes for an hour of tests; refused while a job runs there
  gpudirect.gcp.slurm_node:
    state: reserved
    reservation: gpudirect-nccl-tests
    nodes: [a3-node1, a3-node2]
    duration: 60
    users: [root]
    flags: [maint]
  run_once: true

- name: Give the nodes back to Slurm
  gpudirect.gcp.slurm_node:
    state: released
    reservation: gpudirect-nccl-tests
  run_once: true
"""

RETURN = r"""
node:
  description: The node's state after the task (what it would be, in check mode); null with a reservation's states.
  returned: always
  type: dict
  contains:
    node: {description: "The Slurm name.", type: str}
    states: {description: "sinfo's states, lower case, without suffixes (V(idle), V(drained), V(mixed))", type: list,
             elements: str}
    out: {description: "Whether the node is drained, down or failed.", type: bool}
    reason: {description: "The drain reason, one line.", type: str}
    reason_user: {description: "Who set the reason (empty where Slurm does not say).", type: str}
  sample: {"node": "a3-node1", "states": ["drained"], "out": true, "reason": "gpudirect remediate: gpu GPU 3",
           "reason_user": "root"}
listed:
  description: Whether Slurm knows the node (false only with O(missing=ignore)).
  returned: with O(state) V(drained), V(resumed) or V(read)
  type: bool
ours:
  description: Whether the node's drain is the collection's own (its reason starts with O(owner)).
  returned: with O(state) V(drained), V(resumed) or V(read)
  type: bool
person:
  description: Whether a drain that is not the collection's held the task back (nothing was changed).
  returned: with O(state) V(drained), V(resumed) or V(read)
  type: bool
msg:
  description: One line saying what was done or why nothing was.
  returned: always
  type: str
  sample: "a3-node1: left as it is: drained by alice (RMA 4711), not by gpudirect"
reservation:
  description: The reservation after the task (what it would be, in check mode); null where there is none.
  returned: with O(state=reserved) or O(state=released)
  type: dict
  contains:
    name: {description: "The reservation's name.", type: str}
    nodes: {description: "The Slurm names of its nodes, sorted.", type: list, elements: str}
    users: {description: "Who may run jobs there.", type: list, elements: str}
    flags: {description: "Its flags, lower case.", type: list, elements: str}
    state: {description: "Slurm's state of it (V(active)); empty before Slurm reads it back.", type: str}
  sample: {"name": "gpudirect-nccl-tests", "nodes": ["a3-node1", "a3-node2"], "users": ["root"], "flags": ["maint"],
           "state": "active"}
refused:
  description: Slurm's answer to a reservation it would not make, one line (the task fails).
  returned: when Slurm refused the reservation
  type: str
  sample: "scontrol: error: Error creating the reservation: Requested nodes are busy"
"""

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils.common.safe_text import one_line
from ansible_collections.gpudirect.gcp.plugins.module_utils.health import slurm_node
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def read(gm, sinfo, node):
    """The node's record, or None where Slurm does not know it and missing is ignore."""
    ignore = gm.params["missing"] == "ignore"
    path = sinfo if os.path.isabs(sinfo) else gm.which(sinfo)
    if not path or not slurm_node.configured(gm.params["slurm_conf_paths"], os.environ, os.path.exists):
        if ignore:
            return None
        gm.fail("slurm_node: %s" % ("%s not found on this host: no Slurm client here" % sinfo if not path else
                                    "no Slurm configuration on this host (SLURM_CONF, slurm_conf_paths)"))
    rc, out, err = gm.run(slurm_node.sinfo_argv(path, node))
    if rc != 0:
        gm.fail("slurm_node: %s -n %s exited %d: %s" % (sinfo, node, rc, one_line(err or out, 200)))
    try:
        record = slurm_node.parse(out, node)
    except slurm_node.SlurmNodeError as exc:
        gm.fail("slurm_node: %s" % exc)
    if record is None and not ignore:
        gm.fail("slurm_node: Slurm does not list a node %s (sinfo -n %s printed nothing)" % (node, node))
    return record


def reservation(gm):
    """The reserved and released states: the reservation as Slurm answers for it, made or deleted where asked."""
    params = gm.params
    name, state = params["reservation"], params["state"]
    nodes, users, flags = params["nodes"] or [], params["users"] or [], params["flags"] or []
    problem = slurm_node.reservation_problem(name, nodes, params["duration"], users, flags,
                                             creating=state == "reserved")
    if problem:
        gm.fail("slurm_node: %s" % problem)
    scontrol = gm.executable(params["scontrol"])

    def show():
        rc, out, err = gm.run(slurm_node.reservation_show_argv(scontrol, name))
        try:
            return slurm_node.parse_reservation(rc, out, err, name)
        except slurm_node.SlurmNodeError as exc:
            gm.fail("slurm_node: %s" % exc)

    before = show()
    action, why, held = slurm_node.reservation_plan(before, state, name, nodes)
    if held:
        gm.fail("slurm_node: %s" % why, changed=False, reservation=before, node=None)
    after = before
    if action == "create":
        after = {"name": name, "nodes": sorted(set(nodes)), "users": list(users), "flags": [f.lower() for f in flags],
                 "state": "", "start": "", "end": ""}
    elif action == "delete":
        after = None
    if action and not gm.check_mode:
        argv = (slurm_node.reservation_create_argv(scontrol, name, nodes, params["duration"], users, flags)
                if action == "create" else slurm_node.reservation_delete_argv(scontrol, name))
        rc, out, err = gm.run(argv)
        if rc != 0:
            said = slurm_node.answer_line(out, err) or "scontrol exited %d" % rc
            if action == "create":
                gm.fail("slurm_node: Slurm refused the reservation %s of %s: %s" % (name, ",".join(nodes), said),
                        refused=said, rc=rc, changed=False, reservation=None, node=None)
            gm.fail("slurm_node: scontrol delete ReservationName=%s exited %d: %s" % (name, rc, said),
                    rc=rc, changed=False, reservation=before, node=None)
        if action == "create":
            # a controller that does not list it yet: what was asked stands
            after = show() or after
    result = dict(changed=bool(action), reservation=after, node=None, msg=why)
    if gm.diff_mode:
        result["diff"] = {"before": _reservation_diff(before), "after": _reservation_diff(after)}
    gm.exit(**result)


def _reservation_diff(record):
    return {} if record is None else dict((k, record[k]) for k in ("name", "nodes", "users", "flags"))


def main():
    gm = GpuModule(dict(
        node=dict(type="str"),
        state=dict(type="str", choices=["drained", "resumed", "read", "reserved", "released"], default="read"),
        reason=dict(type="str"),
        owner=dict(type="str", default=slurm_node.OWNER),
        sinfo=dict(type="str", default="sinfo"),
        scontrol=dict(type="str", default="scontrol"),
        missing=dict(type="str", choices=["fail", "ignore"], default="fail"),
        slurm_conf_paths=dict(type="list", elements="path", default=slurm_node.CONF_PATHS),
        reservation=dict(type="str"),
        nodes=dict(type="list", elements="str"),
        duration=dict(type="int"),
        users=dict(type="list", elements="str", default=["root"]),
        flags=dict(type="list", elements="str", default=[]),
    ), required_if=[("state", "drained", ("node", "reason")), ("state", "resumed", ("node",)),
                    ("state", "read", ("node",)), ("state", "reserved", ("reservation", "nodes", "duration")),
                    ("state", "released", ("reservation",))])
    params = gm.params
    if params["state"] in ("reserved", "released"):
        reservation(gm)
    node, owner = params["node"], params["owner"]
    if not node or not owner or " " in owner:
        gm.fail("slurm_node: node and owner must be non-empty, and owner one word, not %r and %r" % (node, owner))
    before = read(gm, params["sinfo"], node)
    if before is None:
        gm.exit(changed=False, listed=False, node=None, ours=False, person=False,
                msg="%s: not a node of this Slurm, nothing to do" % node)
    if params["state"] == "read":
        gm.exit(changed=False, listed=True, node=before, ours=slurm_node.ours(before, owner), person=False,
                msg="%s: %s%s" % (node, "+".join(before["states"]), (": " + before["reason"]) if before["reason"] else ""))
    update, why, person = slurm_node.plan(before, params["state"], params["reason"], owner)
    after = before
    if update:
        after = dict(before, out=params["state"] == "drained",
                     reason=update[1][len("reason="):] if params["state"] == "drained" else "",
                     states=before["states"] + ["drain"] if params["state"] == "drained"
                     else [s for s in before["states"] if s not in slurm_node.OUT_STATES] or ["idle"])
        if not gm.check_mode:
            argv = [gm.executable(params["scontrol"]), "update", "nodename=%s" % node] + update
            rc, out, err = gm.run(argv)
            if rc != 0:
                gm.fail("slurm_node: scontrol update nodename=%s %s exited %d: %s" % (
                    node, update[0], rc, one_line(err or out, 200)))
            after = read(gm, params["sinfo"], node) or after
    result = dict(changed=bool(update), listed=True, node=after, ours=slurm_node.ours(after, owner), person=person,
                  msg="%s: %s" % (node, why))
    if gm.diff_mode:
        result["diff"] = {"before": {"states": before["states"], "reason": before["reason"]},
                          "after": {"states": after["states"], "reason": after["reason"]}}
    gm.exit(**result)


if __name__ == "__main__":
    main()
