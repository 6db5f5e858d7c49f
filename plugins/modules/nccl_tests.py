#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: nccl_tests
short_description: Run nccl-tests across GPU nodes with mpirun, judge the results and find bad nodes
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Runs on one node (the launcher) and starts nccl-tests C(*_perf) programs on the given nodes with C(mpirun)
    over SSH, one process per GPU by default (C(slots) per node, C(-g 1); see O(gpus_per_rank)).
  - Every variable of the NCCL env file is passed with C(-x KEY=VALUE). With O(check_plugin), C(NCCL_DEBUG=INFO)
    and C(NCCL_DEBUG_SUBSYS=INIT,NET,ENV) replace the profile's level and subsystems, which is all the plugin check
    reads (C(Using network Socket) fails); other subsystems such as C(COLL) would flood a large run.
  - NCCL's C(ENV) lines say which value of each variable it used; RV(nccl_env) compares them with what the run
    passed and names the conflicts (a profile value another source overrode, such as an environment plugin; a
    value the family table knows to break the family; C(NCCL_NET) forcing a network with no device).
  - Each collective is judged on its large-message busbw against the family baseline
    (pass at O(threshold) of it), not on the average.  Without a baseline the family's average floor applies,
    else the collective is reported as not judged.
  - O(mode=cluster) runs each collective once across all nodes.  O(mode=pairwise) runs one single-node run per
    node, then disjoint 2-node runs in parallel rounds, re-pairing suspects with known-good nodes, and names
    the bad nodes.
  - The verdict is data; the module fails only on bad input (missing binary, bad option).
  - Changes no configuration on the nodes (temporary hostfiles are removed), but loads every GPU and
    GPU NIC it runs on, so run it on idle nodes.
options:
  family:
    description: GPU machine family of the nodes (C(a3-mega), ...).
    type: str
    required: true
  hosts:
    description:
      - Nodes to run on, in order; C(address) is what mpirun connects to (default C(name)).
      - C(topology) is where the node sits, its C(gce_topology) (cluster, block, sub-block, host). Pairwise mode
        pairs by it and can then blame a sub-block or block uplink, or the path between two sub-blocks, instead
        of a node.
      - C(nvlink_domain) names the multi-node NVLink domain of the node (A4X, see the
        P(gpudirect.gcp.nvlink_domain#filter) filter); a run whose nodes share one is judged against the family's
        NVLink-domain baseline, any other against its network bar.
    type: list
    elements: dict
    required: true
  mode:
    description: C(cluster) (all nodes together) or C(pairwise) (find bad nodes).
    type: str
    choices: [cluster, pairwise]
    default: cluster
  pairing:
    description:
      - How pairwise mode pairs nodes in its first round. C(topology) pairs inside sub-blocks, then isolates
        suspects next to good nodes of their own sub-block and probes pairs of sub-blocks with the spare good
        nodes. C(intra_subblock) does the same without the probes. C(inter_subblock) and C(inter_block) start
        with pairs across sub-blocks of one block, or across blocks. C(order) pairs neighbours in O(hosts) order.
      - Except with C(intra_subblock), when the rounds leave a sub-block or block whose boundary no run of two good
        nodes crossed, one more round (the boundary stage) pairs good nodes across each such boundary.
      - Nodes without C(topology) are paired in O(hosts) order whatever this says.
    type: str
    choices: [topology, intra_subblock, inter_subblock, inter_block, order]
    default: topology
  history:
    description:
      - Nodes of O(hosts) whose physical host has a recent history in the fleet ledger (the inventory's
        C(gpu_host_history) group). Pairwise mode's first round tests them first, each beside the nearest node
        without one (its own sub-block first), so that a failing pair points at the host that failed before.
    type: list
    elements: str
    default: []
    version_added: 1.2.0
  collectives:
    description: Collectives to run (C(all_gather), C(all_reduce), ...). Default from the family table.
    type: list
    elements: str
  minbytes:
    description: C(-b). Default from the family table.
    type: str
  maxbytes:
    description: C(-e). Default from the family table.
    type: str
  stepfactor:
    description: C(-f). Default from the family table.
    type: int
  warmup_iters:
    description: C(-w), always passed (its default changed in nccl-tests 2.16.8). Default from the family table.
    type: int
  iters:
    description: C(-n). Default from the family table.
    type: int
  check_iters:
    description:
      - C(-c) correctness-check iterations; 0 skips the data check of the main sweep (never of the small sizes,
        see O(small_min_nodes)).
    type: int
    default: 1
  small_min_nodes:
    description:
      - A run over this many nodes or more also runs each collective at small sizes (O(small_minbytes) to
        O(small_maxbytes)) across the nodes, its data checked (C(-c 1)), and judges that run on correctness, not
        bandwidth - no wrong element at any size, a clean exit, no NCCL warning about buffer registration.
        A failure there fails the collective, naming the size. Buffer registration and small-message faults
        leave a large-size bandwidth run clean.
      - In pairwise mode it runs across the nodes not found bad.
      - C(0) turns the stage off.
    type: int
    default: 4
  small_minbytes:
    description: Smallest size of the small-size stage, C(-b) (a scalar of two floats by default).
    type: str
    default: "8"
  small_maxbytes:
    description: Largest size of the small-size stage, C(-e).
    type: str
    default: 64K
  slots:
    description: GPUs per node. Default the family's GPU count.
    type: int
  gpus_per_rank:
    description:
      - GPUs each MPI process drives (nccl-tests' C(-g)). The default 1 runs one process per GPU
        (C(slots) processes a node), as Google's examples do; C(slots) runs one process per node
        driving all of its GPUs. The ranks NCCL sees are the same either way.
    type: int
    default: 1
  binary_dir:
    description: Directory holding the C(*_perf) programs on every node.
    type: path
    required: true
  binary_suffix:
    description: Suffix of the program names (C(_mpi) when built with C(NAME_SUFFIX=_mpi)).
    type: str
    default: ""
  mpirun:
    description: The mpirun program.
    type: str
    default: mpirun
  env_file:
    description: NCCL env file (C(KEY=VALUE) lines) whose variables are passed to every rank; skipped if absent.
    type: path
    default: /etc/nccl/nccl.env
  env:
    description: More variables for every rank; they win over the env file.
    type: dict
    default: {}
  control_iface:
    description:
      - Network MPI's own TCP traffic uses (C(btl_tcp_if_include), C(oob_tcp_if_include)), as an interface name
        or, better when names differ between nodes, the control subnet in CIDR form (C(10.0.0.0/24)).
    type: str
  run_as:
    description:
      - The user mpirun runs as, and logs in as on the other nodes; the module must run as root for another user
        (C(runuser -u) starts mpirun). C(root) adds C(--allow-run-as-root).
      - Without it, mpirun runs as the module does.
    type: str
  ssh_key:
    description: Private key mpirun's SSH uses to reach the other nodes.
    type: path
  known_hosts:
    description: Known-hosts file for those SSH connections (host keys are checked).
    type: path
  test_timeout_s:
    description: nccl-tests C(-T) timeout per test, seconds; 0 leaves it off.
    type: int
    default: 600
  run_timeout_s:
    description: Wall-clock limit of one mpirun; the whole process tree is killed after it (exit 124).
    type: int
    default: 1800
  threshold:
    description: Pass when large-message busbw is at least this fraction of the baseline.
    type: float
    default: 0.9
  baselines:
    description: Baseline busbw in GB/s per collective, overriding the family table.
    type: dict
    default: {}
  check_plugin:
    description: Fail a run whose NCCL INFO lines do not show the family's GPUDirect network.
    type: bool
    default: true
  expected_net:
    description: Network name to expect in C(Using network X). Default the family plugin's.
    type: str
  single_node:
    description: In pairwise mode, first run each node alone (tells GPU/NVLink faults from network faults).
    type: bool
    default: true
  max_rounds:
    description:
      - Most parallel rounds of 2-node runs in pairwise mode; the boundary stage (see O(pairing)) may add one.
    type: int
    default: 3
  mpirun_extra_args:
    description: Extra mpirun arguments, placed before the program.
    type: list
    elements: str
    default: []
  test_extra_args:
    description: Extra C(*_perf) arguments.
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: full
    description: Returns the mpirun commands it would run and runs nothing.
  diff_mode:
    support: none
    description: Nothing to diff.
notes:
  - Needs SSH from the launcher to every node as the same user (the gpudirect.gcp.nccl_tests role sets up a
    temporary cluster key).
"""

EXAMPLES = r"""
- name: Find bad nodes among the play's nodes
  gpudirect.gcp.nccl_tests:
    family: a3-mega
    mode: pairwise
    hosts:
      - {name: node0, address: 10.0.0.2}
      - {name: node1, address: 10.0.0.3}
    binary_dir: /opt/nccl-tests/build
    control_iface: enp0s12
    ssh_key: /root/.ssh/gpudirect_nccl_tests
    known_hosts: /root/.ssh/gpudirect_nccl_tests_known_hosts
  register: nccl
"""

RETURN = r"""
verdict:
  description: C(pass), C(fail) or C(not_judged) (null in check mode).
  returned: always
  type: str
collectives:
  description: Verdict per collective (status, reasons, measured_busbw_gbps, baseline_gbps, required_gbps, peak).
  returned: always
  type: list
  elements: dict
small_sizes:
  description:
    - The small-size stage (see O(small_min_nodes)) - C(required), C(status) (C(pass), C(fail), C(not_judged), null
      where it did not run), C(minbytes), C(maxbytes), C(min_nodes), and C(verdicts), one per collective with
      C(status), C(reasons) (a failure names the collective and the size) and C(failed_sizes).
  returned: always
  type: dict
  sample: {"required": true, "status": "fail", "minbytes": "8", "maxbytes": "64K", "min_nodes": 4,
           "verdicts": [{"collective": "all_reduce", "status": "fail", "failed_sizes": [8],
                         "reasons": ["all_reduce at 8 B: 6 wrong elements (out of place 3, in place 3)"]}]}
bad_nodes:
  description: Nodes named bad (pairwise mode).
  returned: always
  type: list
  elements: str
node_table:
  description: Per node status, reason, single-node busbw and the pairs it ran in.
  returned: always
  type: dict
pairwise:
  description:
    - Rounds of pairs with results (each with its C(locality) when nodes have topology), single-node results,
      notes and C(fabric) (pairwise mode).
    - C(fabric.bad) lists the fabric parts the runs blame (C(part) such as C([subblock, cluster/block/sub-block]),
      C([block, ...]) or C([link, [sub-block, sub-block]]), C(what) in words, and the failed C(runs));
      C(fabric.suspect) lists parts that explain the same failures equally well.
    - Each round's run says its C(stage) (C(screen), C(isolate), C(probe) or C(boundary)). C(isolation) sets the
      search against the log2 bound - C(nodes), C(rounds), C(runs), C(stages) (runs per stage), C(extra_runs)
      (the isolate stage's runs), C(log2_bound) (ceil(log2(nodes))) and C(ratio) (extra_runs / log2_bound).
  returned: always
  type: dict
topology:
  description: Each node's placement as given in O(hosts) (normalized; empty when unknown).
  returned: always
  type: dict
runs:
  description:
    - Every mpirun with its command, exit code and cause, parsed rows and output tail.
    - Credentials are masked in commands, output tails, errors and the environment NCCL echoed (C(********)).
  returned: always
  type: list
  elements: dict
commands:
  description: The mpirun argument lists, with the values of secret variables and credentials masked.
  returned: always
  type: list
  elements: list
nccl_env:
  description:
    - The environment NCCL used (its C(ENV) lines, from the runs across nodes first), or null when no run said.
    - C(effective) - each variable NCCL read, with C(value), C(passed) (what the run gave it, null when it gave
      none) and C(source) (C(profile), C(nccl-tests run), C(environment plugin) or C(not passed)).
    - C(plugin) - the environment plugin NCCL loaded, or null.
    - C(plugins) - per kind (C(net), C(collnet), C(gin), C(tuner), C(profiler), C(env)) its C(name) and C(version),
      as NCCL printed them at start; C(internal) where NCCL used its own; version null where NCCL names none.
    - C(network) - the network NCCL used (its C(Using network) line), or null.
    - A value NCCL refused (C(Invalid value ... using default)) has source C(NCCL default) and a warning.
    - C(conflicts) - C({severity, subject, cause}) for a profile value another source overrode (C(warn)), a value
      the family table knows to break the family (C(fail)), C(NCCL_NET) forcing a network NCCL found no device of
      (C(fail)).
    - Values, the plugin's name and the causes have credentials masked and are one line each; they are compared
      unmasked.
  returned: always
  type: dict
  sample: {"plugin": "GCP env plugin", "effective": {"NCCL_NET": {"value": "gIB", "passed": null,
           "source": "environment plugin"}}, "plugins": {"net": {"name": "gIB", "version": 10}},
           "network": "gIB", "conflicts": []}
"""

import os
import pwd

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_pairing, nccl_report
from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests.nccl_runner import (
    NcclTestsRun, RunnerInputError, read_env_file)


def build_params(p, euid=None):
    """Module params plus the family table's defaults; raises RunnerInputError on bad input."""
    if p["family"] not in families.FAMILIES:
        raise RunnerInputError("family: unknown GPU family %r; known: %s"
                               % (p["family"], ", ".join(families.family_names())))
    fam = families.FAMILIES[p["family"]]
    defaults = fam["nccl_tests"]
    out = dict(p)
    for key in ("collectives", "minbytes", "maxbytes", "stepfactor", "warmup_iters", "iters"):
        if out.get(key) in (None, []):
            out[key] = defaults[key]
    out["slots"] = out.get("slots") or fam["gpu"]["count"]
    if out["slots"] < 1:
        raise RunnerInputError("slots must be at least 1, got %d" % out["slots"])
    out["gpus_per_rank"] = 1 if out.get("gpus_per_rank") is None else out["gpus_per_rank"]
    if out["gpus_per_rank"] < 1 or out["slots"] % out["gpus_per_rank"]:
        raise RunnerInputError("gpus_per_rank must divide the node's %d GPUs (slots), got %d"
                               % (out["slots"], out["gpus_per_rank"]))
    if not 0 < out["threshold"] <= 2:
        raise RunnerInputError("threshold must be a fraction of the baseline such as 0.9, got %s" % out["threshold"])
    if (out.get("small_min_nodes") or 0) < 0:
        raise RunnerInputError("small_min_nodes must be a node count, or 0 to turn the small sizes off, got %d"
                               % out["small_min_nodes"])
    hosts = []
    for i, h in enumerate(out["hosts"]):
        if not isinstance(h, dict) or not h.get("name"):
            raise RunnerInputError("hosts[%d] needs a name (and optionally an address)" % i)
        if h.get("topology") is not None and not isinstance(h["topology"], dict):
            raise RunnerInputError("hosts[%d].topology must be a mapping (a gce_topology), got %r"
                                   % (i, h["topology"]))
        hosts.append({"name": str(h["name"]), "address": str(h.get("address") or h["name"]),
                      "nvlink_domain": str(h["nvlink_domain"]) if h.get("nvlink_domain") else None,
                      "topology": h.get("topology") or {}})
    if not hosts:
        raise RunnerInputError("hosts is empty")
    out["hosts"] = hosts
    env, _skipped = read_env_file(out.get("env_file"))
    env.update(dict((k, str(v)) for k, v in (out.get("env") or {}).items()))
    out["env"] = env
    euid = os.geteuid() if euid is None else euid
    run_as = out.get("run_as") or None
    if run_as and run_as != "root" and euid != 0:
        try:
            me = pwd.getpwuid(euid).pw_name
        except KeyError:
            me = None
        if me != run_as:
            raise RunnerInputError("run_as: mpirun can run as %s only when the module runs as root (become: true)"
                                   % run_as)
    # root starts mpirun as run_as through runuser, which opens a PAM session for it (its limits)
    out["switch_user"] = euid == 0 and run_as not in (None, "root")
    out["as_root"] = euid == 0 and not out["switch_user"]
    return out


def shown_invocation(params):
    """The module's arguments as its result echoes them (ansible-core before 2.19 adds them to every result):
    the environment and extra arguments masked, as the result's own env and commands are."""
    args = dict(params)
    args["env"] = nccl_report.shown_env(args.get("env") or {})
    for key in ("mpirun_extra_args", "test_extra_args"):
        args[key] = safe_text.mask_argv(args.get(key) or [])
    return {"module_args": args}


def run_module(executor=None, euid=None):
    gm = GpuModule(
        dict(
            family=dict(type="str", required=True),
            hosts=dict(type="list", elements="dict", required=True),
            mode=dict(type="str", choices=["cluster", "pairwise"], default="cluster"),
            pairing=dict(type="str", choices=list(nccl_pairing.PAIRINGS), default="topology"),
            history=dict(type="list", elements="str", default=[]),
            collectives=dict(type="list", elements="str"),
            minbytes=dict(type="str"),
            maxbytes=dict(type="str"),
            stepfactor=dict(type="int"),
            warmup_iters=dict(type="int"),
            iters=dict(type="int"),
            check_iters=dict(type="int", default=1),
            small_min_nodes=dict(type="int", default=4),
            small_minbytes=dict(type="str", default="8"),
            small_maxbytes=dict(type="str", default="64K"),
            slots=dict(type="int"),
            gpus_per_rank=dict(type="int", default=1),
            binary_dir=dict(type="path", required=True),
            binary_suffix=dict(type="str", default=""),
            mpirun=dict(type="str", default="mpirun"),
            env_file=dict(type="path", default="/etc/nccl/nccl.env"),
            env=dict(type="dict", default={}),
            control_iface=dict(type="str"),
            ssh_key=dict(type="path", no_log=False),
            known_hosts=dict(type="path"),
            test_timeout_s=dict(type="int", default=600),
            run_timeout_s=dict(type="int", default=1800),
            threshold=dict(type="float", default=0.9),
            baselines=dict(type="dict", default={}),
            check_plugin=dict(type="bool", default=True),
            expected_net=dict(type="str"),
            single_node=dict(type="bool", default=True),
            max_rounds=dict(type="int", default=3),
            run_as=dict(type="str"),
            mpirun_extra_args=dict(type="list", elements="str", default=[]),
            test_extra_args=dict(type="list", elements="str", default=[]),
        ),
    )
    try:
        params = build_params(gm.params, euid=euid)
        if not gm.check_mode and os.sep not in params["mpirun"]:
            found = gm.which(params["mpirun"])
            if not found:
                raise RunnerInputError("mpirun: %r not found on the launcher's PATH" % params["mpirun"])
            params["mpirun"] = found
        if params["switch_user"]:
            params["runuser"] = gm.which("runuser") or "runuser"
            if not gm.check_mode and os.sep not in params["runuser"]:
                raise RunnerInputError("run_as: runuser not found on the launcher's PATH")
        result = NcclTestsRun(params, executor=executor).execute(check_mode=gm.check_mode)
    except RunnerInputError as exc:
        gm.fail(safe_text.mask_text(str(exc)), invocation=shown_invocation(gm.params))
    gm.exit(changed=False, invocation=shown_invocation(gm.params), **result)


def main():
    run_module()


if __name__ == "__main__":
    main()
