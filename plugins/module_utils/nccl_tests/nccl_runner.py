# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Launch nccl-tests with mpirun from one node and judge the results.

Modes:
  cluster   one run per collective across every node
  pairwise  a single-node run per node, then disjoint 2-node runs in parallel
            rounds (nccl_pairing) that name the bad nodes

Either mode, over four nodes or more, then runs each collective at small sizes across the nodes (the
nodes not found bad) and judges that run on its data alone (nccl_judge.judge_small_sizes).

Commands are argument lists.  Runs of one round start together, each in its
own process group so a timeout kills the whole mpirun tree.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_judge
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_pairing
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_env_used, nccl_parse, nccl_report
from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.host import topology
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl.nccl_env_file import parse_profile

OUTPUT_TAIL = 6000
# INIT and NET: the plugin check ("Using network X", the NET/Plugin lines); ENV: each variable NCCL read
# (nccl_env_used: the environment NCCL really used)
PLUGIN_CHECK_SUBSYS = "INIT,NET,ENV"


class RunnerInputError(ValueError):
    """Bad option or node state, reported as one line."""


def read_env_file(path):
    """KEY=VALUE lines of the NCCL env file; ({}, None) when the file is absent."""
    if not path or not os.path.exists(path):
        return {}, None
    try:
        with open(path) as f:
            env, skipped = parse_profile(f.read())
    except (IOError, OSError) as exc:
        raise RunnerInputError("cannot read the NCCL env file %s: %s" % (path, exc))
    return env, skipped


def gpus_per_process(p):
    """GPUs each MPI process drives (nccl-tests -g); 1 unless gpus_per_rank says otherwise."""
    return p.get("gpus_per_rank") or 1


def processes_per_node(p):
    """MPI processes a node runs: its GPUs (slots) over the GPUs each process drives."""
    return p["slots"] // gpus_per_process(p)


def run_env(p):
    """The environment a run passes to every rank: the profile's, with the plugin check's NCCL_DEBUG."""
    env = dict(p.get("env") or {})
    if p.get("check_plugin", True):
        # The plugin check reads "Using network X" and the NET/Plugin lines, and the ENV lines say what
        # NCCL used: INIT, NET and ENV at INFO are all it needs. A profile's other subsystems (COLL logs
        # every call) would flood a large run, so they are replaced, not added to.
        env["NCCL_DEBUG"] = "INFO"
        env["NCCL_DEBUG_SUBSYS"] = PLUGIN_CHECK_SUBSYS
    return env


def mpirun_argv(p, addresses, collective, hostfile):
    """The mpirun argument list for one run of one collective on the given node addresses."""
    argv = [p["mpirun"]]
    if p.get("switch_user"):
        argv = [p.get("runuser") or "runuser", "-u", p["run_as"], "--"] + argv
    if p.get("as_root"):
        argv.append("--allow-run-as-root")
    procs = processes_per_node(p)
    argv += ["--hostfile", hostfile, "-np", str(procs * len(addresses)),
             "--map-by", "ppr:%d:node" % procs, "--bind-to", "none",
             "--mca", "btl", "self,tcp",
             "--mca", "plm_rsh_no_tree_spawn", "1"]
    if p.get("control_iface"):
        # a name, or a CIDR (robust when interface names differ between nodes)
        argv += ["--mca", "btl_tcp_if_include", p["control_iface"],
                 "--mca", "oob_tcp_if_include", p["control_iface"]]
    ssh = []
    if p.get("ssh_key"):
        ssh += ["-i", p["ssh_key"], "-o", "IdentitiesOnly=yes"]
    if p.get("known_hosts"):
        ssh += ["-o", "UserKnownHostsFile=%s" % p["known_hosts"], "-o", "StrictHostKeyChecking=yes"]
    if ssh:
        argv += ["--mca", "plm_rsh_args", " ".join(["-o", "BatchMode=yes"] + ssh)]
    env = run_env(p)
    for key in sorted(env):
        argv += ["-x", "%s=%s" % (key, env[key])]
    argv += list(p.get("mpirun_extra_args") or [])
    binary = os.path.join(p["binary_dir"], "%s_perf%s" % (collective, p.get("binary_suffix") or ""))
    argv += [binary, "-b", str(p["minbytes"]), "-e", str(p["maxbytes"]), "-f", str(p["stepfactor"]),
             "-g", str(gpus_per_process(p)), "-w", str(p["warmup_iters"]), "-n", str(p["iters"]), "-c", str(p["check_iters"])]
    if p.get("test_timeout_s"):
        argv += ["-T", str(p["test_timeout_s"])]
    argv += list(p.get("test_extra_args") or [])
    return argv


class Job(object):
    """One mpirun (one collective on a set of nodes)."""

    def __init__(self, kind, names, addresses, collective, argv, hostfile):
        self.kind, self.names, self.addresses = kind, list(names), list(addresses)
        self.collective, self.argv, self.hostfile = collective, argv, hostfile
        self.rc, self.output, self.seconds = None, "", 0.0


def _run_job(job, timeout_s):
    start = time.time()
    try:
        # several mpiruns at once, each in its own process group to kill whole at its time limit:
        # more than run_command does
        proc = subprocess.Popen(job.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,  # pylint: disable=ansible-bad-function
                                stdin=subprocess.DEVNULL, preexec_fn=os.setsid)
    except OSError as exc:
        job.rc, job.output = 127, "cannot start %s: %s" % (job.argv[0], exc)
        return
    try:
        out = proc.communicate(timeout=timeout_s)[0]
        job.rc = proc.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        out = proc.communicate()[0]
        job.rc = 124
        out = (out or b"") + b"\nkilled after %d s (run timeout)\n" % timeout_s
    job.output = (out or b"").decode("utf-8", "replace")
    job.seconds = round(time.time() - start, 2)


def run_parallel(job_lists, timeout_s):
    """Run several lists of jobs in parallel; the jobs of one list one after another."""
    def worker(jobs):
        for job in jobs:
            _run_job(job, timeout_s)

    threads = [threading.Thread(target=worker, args=(jobs,)) for jobs in job_lists]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


class NcclTestsRun(object):
    def __init__(self, params, executor=None):
        self.p = params
        self.family = params["family"]
        if self.family not in families.FAMILIES:
            raise RunnerInputError("family: unknown GPU family %r; known: %s"
                                   % (self.family, ", ".join(families.family_names())))
        self.executor = executor or run_parallel
        self.tmp = None
        self.runs = []
        self.commands = []

    # --- helpers ----------------------------------------------------------
    def _hostfile(self, addresses):
        fd, path = tempfile.mkstemp(prefix="hostfile-", dir=self.tmp)
        with os.fdopen(fd, "w") as f:
            for addr in addresses:
                f.write("%s slots=%d\n" % (addr, processes_per_node(self.p)))
        if self.p.get("switch_user"):
            # mpirun reads it as run_as; it holds addresses only
            os.chmod(path, 0o644)
        return path

    def _jobs(self, kind, names, p=None):
        addrs = [self.addr[n] for n in names]
        jobs = []
        for coll in self.p["collectives"]:
            hostfile = self._hostfile(addrs) if self.tmp else "<hostfile>"
            argv = mpirun_argv(p or self.p, addrs, coll, hostfile)
            jobs.append(Job(kind, names, addrs, coll, argv, hostfile))
            self.commands.append(argv)
        return jobs

    def _scope(self, names):
        """What a multi-node run crosses: one NVLink domain (A4X nodes of one sub-block) or the network.

        Returns (scope, note); the note says why a run that might share a domain is judged as network.
        """
        if not families.has_nvlink_domains(self.family) or len(names) < 2:
            return "network", None
        domains = [self.domain.get(n) for n in names]
        unknown = [n for n, d in zip(names, domains) if not d]
        if unknown:
            return "network", ("NVLink domain of %s unknown (no sub-block in gce_topology): judged against the "
                               "network bar" % ", ".join(unknown))
        if len(set(domains)) == 1:
            return "nvlink_domain", None
        return "network", "nodes in different NVLink domains (%s): judged against the network bar" % ", ".join(
            "%s=%s" % kv for kv in zip(names, domains))

    def _judge(self, job, multi_node=True, baseline=True):
        parsed = nccl_parse.parse(job.output, collective=job.collective)
        scope, note = self._scope(job.names) if multi_node else ("network", None)
        verdict = nccl_judge.judge_collective(
            parsed, self.family, collective=job.collective, threshold=self.p["threshold"],
            baseline_gbps=(self.p.get("baselines") or {}).get(job.collective) if baseline else None,
            check_net=self.p.get("check_plugin", True) and multi_node, expected_net=self.p.get("expected_net"),
            multi_node=multi_node, scope=scope)
        if note:
            verdict["reasons"].append(note)
        if job.rc not in (0, None):
            verdict["status"] = nccl_judge.FAIL
            verdict["reasons"].insert(0, "exit code %s: %s" % (job.rc, nccl_judge.exit_cause(job.rc)))
        return self._record(job, parsed, verdict)

    def _record(self, job, parsed, verdict):
        rows = [{"size": r["size"], "busbw_oop": r["out_of_place"]["busbw_gbps"],
                 "busbw_ip": r["in_place"]["busbw_gbps"], "algbw_oop": r["out_of_place"]["algbw_gbps"],
                 "time_us_oop": r["out_of_place"]["time_us"]} for r in parsed["rows"]]
        run = {"kind": job.kind, "collective": job.collective, "hosts": job.names, "addresses": job.addresses,
               "rc": job.rc, "exit_cause": nccl_judge.exit_cause(job.rc), "seconds": job.seconds,
               "command": job.argv, "status": verdict["status"], "verdict": verdict, "rows": rows,
               "ranks": parsed["ranks"], "net_names": parsed["net_names"], "errors": parsed["errors"][:10],
               "nccl_tests_version": parsed["nccl_tests_version"], "nccl_version": parsed["nccl_version"],
               "header": parsed["header"], "output_tail": job.output[-OUTPUT_TAIL:],
               "nccl_env": nccl_env_used.used(self.family, parsed, run_env(self.p))}
        self.runs.append(run)
        return run

    # --- the small-size stage ----------------------------------------------
    def small_params(self):
        """The run's options for its small-size sweeps: scalar sizes, the data always checked."""
        return dict(self.p, minbytes=str(self.p.get("small_minbytes") or nccl_judge.SMALL_MINBYTES),
                    maxbytes=str(self.p.get("small_maxbytes") or nccl_judge.SMALL_MAXBYTES),
                    check_iters=max(1, int(self.p.get("check_iters") or 0)))

    def _small_min_nodes(self):
        value = self.p.get("small_min_nodes")
        return nccl_judge.SMALL_MIN_NODES if value is None else value

    def _small_plan(self):
        """{required, status, verdicts, minbytes, maxbytes, min_nodes} before the stage runs."""
        small = self.small_params()
        return {"required": nccl_judge.small_sizes_required(len(self.names), self._small_min_nodes()),
                "status": None, "verdicts": [], "minbytes": small["minbytes"], "maxbytes": small["maxbytes"],
                "min_nodes": self._small_min_nodes()}

    def _small_stage(self, names, left_out=()):
        """One small-size run per collective across names, judged on correctness (see _small_plan)."""
        small = self.small_params()
        out = self._small_plan()
        if not out["required"]:
            return out
        if len(names) < 2:
            out["status"] = nccl_judge.NOT_JUDGED
            out["verdicts"] = [{"collective": c, "stage": "small_sizes", "status": nccl_judge.NOT_JUDGED,
                                "reasons": ["%s at small sizes: fewer than 2 nodes left to run on" % c]}
                               for c in self.p["collectives"]]
            return out
        jobs = self._jobs("small_sizes", names, small)
        self.executor([jobs], self.p["run_timeout_s"])
        for job in jobs:
            parsed = nccl_parse.parse(job.output, collective=job.collective)
            verdict = nccl_judge.judge_small_sizes(parsed, job.collective, rc=job.rc)
            if left_out:
                verdict["reasons"].append("run without the bad node(s) %s" % ", ".join(left_out))
            self._record(job, parsed, verdict)
            out["verdicts"].append(dict(verdict, hosts=list(names), seconds=job.seconds))
        out["status"] = nccl_judge.overall(out["verdicts"])
        return out

    @staticmethod
    def _fold_small(verdicts, small):
        """A small size that failed fails its collective's verdict, first among its reasons."""
        for sv in small["verdicts"]:
            if sv["status"] != nccl_judge.FAIL:
                continue
            for v in verdicts:
                if v.get("collective") == sv["collective"]:
                    v["status"] = nccl_judge.FAIL
                    v["reasons"] = list(sv["reasons"]) + list(v.get("reasons") or [])

    # --- modes ------------------------------------------------------------
    def execute(self, check_mode=False):
        hosts = self.p["hosts"]
        self.names = [h["name"] for h in hosts]
        self.addr = dict((h["name"], h.get("address") or h["name"]) for h in hosts)
        self.domain = dict((h["name"], h.get("nvlink_domain")) for h in hosts)
        self.topology = dict((h["name"], topology.normalize(h.get("topology"))) for h in hosts)
        if len(set(self.names)) != len(self.names):
            raise RunnerInputError("hosts: duplicate node names")
        mode = self.p["mode"]
        if mode == "pairwise" and len(self.names) < 2:
            raise RunnerInputError("mode=pairwise needs at least 2 nodes, got %d" % len(self.names))
        if not check_mode:
            binaries = [os.path.join(self.p["binary_dir"], "%s_perf%s" % (c, self.p.get("binary_suffix") or ""))
                        for c in self.p["collectives"]]
            missing = [b for b in binaries if not os.access(b, os.X_OK)]
            if missing:
                raise RunnerInputError("nccl-tests binary not found or not executable on the launcher: %s"
                                       % ", ".join(missing))
            self.tmp = tempfile.mkdtemp(prefix="nccl-tests-")
            if self.p.get("switch_user"):
                os.chmod(self.tmp, 0o755)
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        try:
            if check_mode:
                if mode == "cluster":
                    groups = [self.names]
                else:
                    groups = [self.names[i:i + 2] for i in range(0, len(self.names) - 1, 2)]
                for names in groups:
                    self._jobs(mode, names)
                small = self._small_plan()
                if small["required"]:
                    self._jobs("small_sizes", self.names, self.small_params())
                result = {"verdict": None, "collectives": [], "bad_nodes": [], "node_table": {}, "pairwise": None,
                          "small_sizes": small}
            elif mode == "cluster":
                result = self._cluster()
            else:
                result = self._pairwise()
        finally:
            if self.tmp:
                shutil.rmtree(self.tmp, ignore_errors=True)
        result.update({
            "family": self.family, "mode": mode, "nodes": self.names, "gpus_per_node": self.p["slots"],
            # what the result shows of the runs, commands and environment: credentials masked (mpirun got them)
            "threshold": self.p["threshold"], "runs": nccl_report.scrub_runs(self.runs),
            "commands": [safe_text.mask_argv(argv) for argv in self.commands],
            # not "started"/"finished": an async task's status has those keys, and ansible-core before
            # 2.19 reads the module's own as that status (int("2026-...") fails the task)
            "env": nccl_report.shown_env(self.p.get("env") or {}), "started_at": started, "topology": self.topology,
            # what NCCL used, from the runs that crossed nodes first (they load the network plugin)
            "nccl_env": nccl_env_used.merged(
                [r["nccl_env"] for r in self.runs if len(r["hosts"]) > 1]
                + [r["nccl_env"] for r in self.runs if len(r["hosts"]) <= 1]),
            "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        return result

    def _cluster(self):
        jobs = self._jobs("cluster", self.names)
        self.executor([jobs], self.p["run_timeout_s"])
        verdicts = []
        for job in jobs:
            run = self._judge(job, multi_node=len(self.names) > 1)
            v = dict(run["verdict"], rc=run["rc"], exit_cause=run["exit_cause"], hosts=self.names,
                     seconds=run["seconds"])
            verdicts.append(v)
        small = self._small_stage(self.names)
        self._fold_small(verdicts, small)
        verdict = nccl_judge.overall(verdicts + small["verdicts"])
        table = dict((n, {"address": self.addr[n], "status": "in a %s run" % verdict, "reason": "cluster mode "
                          "does not isolate nodes; use mode=pairwise", "pairs": []}) for n in self.names)
        return {"verdict": verdict, "collectives": verdicts, "bad_nodes": [], "node_table": table,
                "pairwise": None, "small_sizes": small}

    def _single_node(self):
        """One all-GPU run per node, all nodes at once; flags failures and outliers."""
        job_lists = [self._jobs("single_node", [n]) for n in self.names]
        self.executor(job_lists, self.p["run_timeout_s"])
        singles = {}
        for node, jobs in zip(self.names, job_lists):
            entry = {"status": "pass", "reasons": [], "busbw_gbps": {}, "seconds": 0.0}
            for job in jobs:
                run = self._judge(job, multi_node=False)
                entry["seconds"] += job.seconds
                measured, _at = nccl_judge.large_message_busbw({"rows": [
                    {"size": r["size"], "out_of_place": {"busbw_gbps": r["busbw_oop"]},
                     "in_place": {"busbw_gbps": r["busbw_ip"]}} for r in run["rows"]]})
                entry["busbw_gbps"][job.collective] = measured
                if run["status"] == nccl_judge.FAIL:
                    entry["status"] = "fail"
                    entry["reasons"].append("%s: %s" % (job.collective, "; ".join(run["verdict"]["reasons"][:2])))
            singles[node] = entry
        # a node far below the others on its own NVLink/GPUs is suspect
        for coll in self.p["collectives"]:
            vals = sorted(v["busbw_gbps"].get(coll) for v in singles.values()
                          if v["busbw_gbps"].get(coll) is not None)
            if len(vals) < 3:
                continue
            median = vals[len(vals) // 2]
            for node, entry in singles.items():
                bw = entry["busbw_gbps"].get(coll)
                if bw is not None and bw < self.p["threshold"] * median:
                    entry["status"] = "fail"
                    entry["reasons"].append("%s: single-node busbw %.1f GB/s is below %.0f%% of the nodes' median "
                                            "%.1f GB/s (GPU/NVLink fault)" % (coll, bw, self.p["threshold"] * 100,
                                                                              median))
        return singles

    def _pair_round(self, pairs, log):
        job_lists = [self._jobs("pair", list(pair)) for pair in pairs]
        self.executor(job_lists, self.p["run_timeout_s"])
        results = {}
        entries = []
        for pair, jobs in zip(pairs, job_lists):
            ok, reasons, bws, secs = True, [], {}, 0.0
            for job in jobs:
                run = self._judge(job)
                secs += job.seconds
                bws[job.collective] = run["verdict"]["measured_busbw_gbps"]
                if run["status"] == nccl_judge.FAIL:
                    ok = False
                    reasons.append("%s: %s" % (job.collective, "; ".join(run["verdict"]["reasons"][:2])))
            entries.append({"pair": list(pair), "ok": ok, "reasons": reasons, "busbw_gbps": bws,
                            "seconds": round(secs, 2)})
            results[tuple(pair)] = ok
        # without a baseline, a pair far below the round's best is slow
        for coll in self.p["collectives"]:
            if (families.baseline(self.family, coll) or families.baseline(self.family, coll, "nvlink_domain")
                    or (self.p.get("baselines") or {}).get(coll)):
                continue
            vals = sorted(e["busbw_gbps"].get(coll) for e in entries if e["busbw_gbps"].get(coll) is not None)
            if len(vals) < 2:
                continue
            best = vals[-1]
            for e in entries:
                bw = e["busbw_gbps"].get(coll)
                if bw is not None and bw < self.p["threshold"] * best and e["ok"]:
                    e["ok"] = False
                    e["reasons"].append("%s: %.1f GB/s is below %.0f%% of the round's best pair (%.1f GB/s); "
                                        "no baseline for this family" % (coll, bw, self.p["threshold"] * 100, best))
                    results[tuple(e["pair"])] = False
        log.append(entries)
        return results

    def _pairwise(self):
        singles = self._single_node() if self.p.get("single_node", True) else {}
        bad_single = [n for n in self.names if singles.get(n, {}).get("status") == "fail"]
        candidates = [n for n in self.names if n not in bad_single]
        log = []
        search = nccl_pairing.find_bad_nodes(
            candidates, lambda pairs: self._pair_round(pairs, log), max_rounds=self.p.get("max_rounds", 3),
            topology=self.topology, pairing=self.p.get("pairing") or "topology",
            history=self.p.get("history")) if len(candidates) >= 2 else {
            "bad": [], "good": [], "unknown": candidates, "rounds": [], "notes": [],
            "fabric": {"bad": [], "suspect": []}, "isolation": None,
            "nodes": dict((n, {"status": "unknown", "reason": "no partner left to pair with"}) for n in candidates)}
        # attach the details the search does not keep
        for rnd, entries in zip(search["rounds"], log):
            for item, entry in zip(rnd, entries):
                item.update(reasons=entry["reasons"], busbw_gbps=entry["busbw_gbps"], seconds=entry["seconds"])
        table = {}
        for n in self.names:
            if n in bad_single:
                info = {"status": "bad", "reason": "single-node run: " + "; ".join(singles[n]["reasons"])}
            else:
                info = dict(search["nodes"][n])
            info["address"] = self.addr[n]
            single_bw = singles.get(n, {}).get("busbw_gbps") or {}
            info["single_node_busbw_gbps"] = single_bw.get(self.p["collectives"][0]) if single_bw else None
            info["pairs"] = ["round %d: %s %s" % (i, "+".join(e["pair"]), "pass" if e["ok"] else "fail")
                             for i, rnd in enumerate(search["rounds"], 1) for e in rnd if n in e["pair"]]
            table[n] = info
        bad = [n for n in self.names if table[n]["status"] == "bad"]
        unknown = [n for n in self.names if table[n]["status"] == "unknown"]
        # per-collective view from the pair runs
        verdicts = []
        for coll in self.p["collectives"]:
            pruns = [r for r in self.runs if r["kind"] == "pair" and r["collective"] == coll]
            vals = [r["verdict"]["measured_busbw_gbps"] for r in pruns if r["verdict"]["measured_busbw_gbps"]]
            good_vals = [r["verdict"]["measured_busbw_gbps"] for r in pruns
                         if r["verdict"]["measured_busbw_gbps"] and not set(r["hosts"]) & set(bad)]
            first = pruns[0]["verdict"] if pruns else {}
            failing = ["+".join(r["hosts"]) for r in pruns if r["status"] == nccl_judge.FAIL]
            status = nccl_judge.FAIL if failing else (first.get("status") or nccl_judge.NOT_JUDGED)
            reasons = (["failing pairs: %s" % ", ".join(failing)] if failing else []) + (
                ["bad nodes: %s" % ", ".join(bad)] if bad else [])
            if not failing and first:
                reasons += first.get("reasons") or []
            verdicts.append({
                "collective": coll, "family": self.family, "status": status, "reasons": reasons,
                "measured_busbw_gbps": min(good_vals) if good_vals else None,
                "measured_at_bytes": first.get("measured_at_bytes"), "baseline_gbps": first.get("baseline_gbps"),
                "baseline_bytes": first.get("baseline_bytes"), "baseline_source": first.get("baseline_source"),
                "threshold": self.p["threshold"], "required_gbps": first.get("required_gbps"),
                "peak_busbw_gbps": max(vals) if vals else None, "plugin_ok": all(
                    r["verdict"].get("plugin_ok") for r in pruns) if pruns else None,
                "rc": max([r["rc"] or 0 for r in pruns] or [0]), "hosts": self.names,
                "seconds": round(sum(r["seconds"] for r in pruns), 2)})
        # the small sizes across the nodes not found bad: a bad node would only fail them again
        small = self._small_stage([n for n in self.names if n not in bad], bad)
        self._fold_small(verdicts, small)
        if bad or unknown or search["fabric"]["bad"] or search["fabric"]["suspect"]:
            verdict = nccl_judge.FAIL
        else:
            verdict = nccl_judge.overall(verdicts + small["verdicts"])
        return {"verdict": verdict, "collectives": verdicts, "bad_nodes": bad, "unknown_nodes": unknown,
                "node_table": table, "small_sizes": small,
                "pairwise": {"rounds": search["rounds"], "notes": search["notes"], "single_node": singles,
                             "bad": bad, "unknown": unknown, "fabric": search["fabric"],
                             # the runs isolation took against ceil(log2(N)) (nccl_pairing.isolation_cost)
                             "isolation": search.get("isolation"),
                             "pairing": self.p.get("pairing") or "topology"}}
