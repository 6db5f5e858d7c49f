# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the wall time of a run grows with the node count on THIS machine, where the controller
and every SANDBOX node share the same CPUs.

For each size (default 2 and 16 nodes) it starts a sandbox and times:
  * the floor: a playbook of --tasks tasks that each run ansible.builtin.ping, the cheapest
    module there is, on every node (minus the same playbook with every task skipped, which is
    the cost of loading the inventory and playbook);
  * with --site, the whole of site.yml, as `make demo` runs it.

With --site it times site.yml on fresh nodes --cold-repeat times (a fresh sandbox for each), then,
on the last cluster, site.yml again (a routine re-run with nothing to change; --repeat re-runs) and
diagnose without the NCCL tests, and prints the controller's CPU time per node for each: the slope
between the smallest and the largest size, so the fixed cost of a run (start-up, the controller's
own plays) does not hide in it, as the median of the samples with their spread (the slope of the
lowest and of the highest pair), against the targets (cold site.yml 8, re-run 3, diagnose 3 CPU-s a
node), and the controller's memory during the first cold run: the main process's peak and one
forked worker's share (PSS), the figures docs/scale.md sizes forks from. Each timed run also
records every task's controller CPU time (callbacks/task_cpu.py), and the benchmark lists, for each
kind of run, the tasks whose cost grows the most with the cluster (the same slope, task by task).

It prints wall time, the controller's CPU time (ansible-playbook, its workers and their SSH
children; the node containers are not its children) and the ratio of the largest size to the
smallest. When the machine is CPU-bound, no playbook of module
tasks can grow more slowly than the floor: every task on every node costs CPU time on the
controller and in the node container, on the same cores.

    make bench-scaling (both cores, one after the other), or:
    .venv/bin/python benchmarks/scaling/bench.py [--sizes 2,6] [--tasks 20] [--repeat 3] [--cold-repeat 3]
                                                 [--core oldest|newest] [--site] [--keep] [--top 12]
"""

from __future__ import absolute_import, division, print_function

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SANDBOX = [sys.executable, os.path.join(ROOT, "tests", "sandbox", "sandbox.py")]
# the two ends of the supported ansible-core range: the oldest (.venv, whose templating engine the
# preload callback's template cache serves as it was to 2.18) and the newest (build/venv-newest,
# `make venv-newest`, whose engine, from 2.19, compiles conditionals as expressions)
CORES = {"oldest": os.path.join(ROOT, ".venv", "bin"),
         "newest": os.path.join(ROOT, "build", "venv-newest", "bin")}
PLAYBOOK = os.path.join(CORES["oldest"], "ansible-playbook")
# the task_cpu callback: each task's controller CPU time, for the per-task slopes
PROFILER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "callbacks")
FAMILY = "a3-mega"


def floor_playbook(path, tasks):
    """A play of `tasks` separate ping tasks (a loop would fork one worker for all of them)."""
    lines = ["---",
             "- name: Time bare module tasks on every sandbox node",
             "  hosts: gpu_nodes",
             "  gather_facts: false",
             "  tasks:"]
    for number in range(tasks):
        lines += ["    - name: Ping %d" % number,
                  "      ansible.builtin.ping:",
                  "      when: not (bench_skip | bool)"]
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pss_kib(pid):
    """Proportional set size of a process (its share of pages it shares with its forks), or None."""
    try:
        with open("/proc/%d/smaps_rollup" % pid) as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def workers_of(pid):
    """The forked workers of an ansible-playbook process: its children running the same program."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as fh:
            kids = [int(k) for k in fh.read().split()]
    except OSError:
        return []
    out = []
    for kid in kids:
        try:
            with open("/proc/%d/cmdline" % kid, "rb") as fh:
                if b"ansible-playbook" in fh.read():
                    out.append(kid)
        except OSError:
            pass
    return out


def task_profile(path):
    """{task: controller CPU seconds} of one run, from the task_cpu callback's lines (a task run more
    than once, in a loop of includes, summed)."""
    out = {}
    try:
        with open(path) as fh:
            for line in fh:
                entry = json.loads(line)
                out[entry["task"]] = out.get(entry["task"], 0.0) + entry["cpu"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return out


def run(argv, log, check=True, memory=None, profile=None):
    """Run argv with its output in log; return (wall seconds, controller CPU seconds).

    memory, a dict, gets the peak PSS of the main process and the median PSS of
    one forked worker (KiB), and the most workers seen at once, sampled twice a second.
    profile, a list, gets the run's {task: controller CPU seconds} (callbacks/task_cpu.py)."""
    env = None
    if profile is not None:
        tasks_file = log + ".tasks.jsonl"
        if os.path.exists(tasks_file):
            os.unlink(tasks_file)
        env = dict(os.environ, GPUDIRECT_BENCH_TASK_CPU=tasks_file, ANSIBLE_CALLBACK_PLUGINS=PROFILER,
                   ANSIBLE_CALLBACKS_ENABLED="gpudirect.gcp.preload,task_cpu")
    with open(log, "a") as fh:
        fh.write("\n$ %s\n" % " ".join(argv))
        fh.flush()
        cpu0, wall0 = children_cpu(), time.monotonic()
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT, env=env)
        main_peak, per_worker, most = 0, [], 0
        while proc.poll() is None:
            if memory is not None:
                main = pss_kib(proc.pid)
                main_peak = max(main_peak, main or 0)
                workers = [w for w in (pss_kib(k) for k in workers_of(proc.pid)) if w]
                most = max(most, len(workers))
                per_worker.extend(workers)
            time.sleep(0.5)
        rc = proc.returncode
        wall, cpu = time.monotonic() - wall0, children_cpu() - cpu0
    if memory is not None:
        memory.update(main_kib=main_peak, worker_kib=statistics.median(per_worker) if per_worker else 0,
                      workers=most)
    if check and rc != 0:
        sys.exit("bench: %s failed (exit %d), see %s" % (" ".join(argv[:3]), rc, log))
    if profile is not None:
        profile.append(task_profile(tasks_file))
    return wall, cpu


def results_per_node(log):
    """Task results of one node in the last run logged (its PLAY RECAP line: ok, skipped, failed)."""
    with open(log) as fh:
        text = fh.read()
    recap = text.rsplit("PLAY RECAP", 1)[-1]
    for line in recap.splitlines():
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if "-node" in line.split(":")[0] and "ok" in fields:
            return sum(int(fields.get(k, 0)) for k in ("ok", "skipped", "failed", "rescued", "ignored"))
    return 0


# the full path of each phase that keeps a record: included only where the node differs from it
FULL_PATHS = re.compile(r"^included: \S*/roles/(gpu_host|gpu_network|nccl_profile)/tasks/configure\.yml for (.*)$"
                        r"|^included: \S*/roles/(rxdm)/tasks/rxdm\.yml for (.*)$", re.M)


def full_paths(log):
    """(phase, node) pairs that took their phase's full path in the last run logged: none on a converged
    cluster. A re-run that took any is not the converged re-run the figure stands for (an edit of the
    collection during the benchmark changes every phase's digest)."""
    with open(log) as fh:
        text = fh.read().rsplit("\n$ ", 1)[-1]
    pairs = []
    for match in FULL_PATHS.finditer(text):
        phase, nodes = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        pairs.extend((phase, node.strip()) for node in nodes.split(","))
    return pairs


def median_pair(samples):
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def slope(small, large, small_nodes, large_nodes):
    """CPU seconds a node between two sizes, from samples [(wall, cpu), ...] of each: the median of the
    medians' slope, and its spread (the slope of the lowest and of the highest samples)."""
    def per_node(low, high):
        return (high - low) / float(large_nodes - small_nodes)
    cpu_small, cpu_large = sorted(s[1] for s in small), sorted(s[1] for s in large)
    return (per_node(statistics.median(cpu_small), statistics.median(cpu_large)),
            per_node(cpu_small[-1], cpu_large[0]), per_node(cpu_small[0], cpu_large[-1]))


def task_slopes(small_runs, large_runs, small_nodes, large_nodes):
    """[(CPU-s a node, task)] for each task, the largest first: the slope of its mean controller CPU
    over the runs of each size. A task whose cost grows with the cluster on every node (an expression
    over every node's variables, evaluated for each node) stands out from the rest here."""
    def mean(runs):
        tasks = {}
        for profile in runs:
            for task, cpu in profile.items():
                tasks[task] = tasks.get(task, 0.0) + cpu / len(runs)
        return tasks
    small, large = mean(small_runs), mean(large_runs)
    span = float(large_nodes - small_nodes)
    slopes = [((large.get(t, 0.0) - small.get(t, 0.0)) / span, t) for t in set(small) | set(large)]
    return sorted(slopes, key=lambda pair: (-pair[0], pair[1]))


def target_verdict(mid, target):
    """Whether a slope meets its target, compared at the CPU clock's resolution (0.01 s): the figures
    are differences of sums, and float arithmetic leaves 3.0 as 3.0000000000000004."""
    return "met" if round(mid, 2) <= target else "NOT met"


def measure(nodes, args, work):
    name = "bench-scale%d" % nodes
    log = os.path.join(work, "%s.log" % name)
    open(log, "w").close()
    inventory = os.path.join(ROOT, "build", "sandbox", name, "inventory.yml")
    floor = os.path.join(work, "floor.yml")
    floor_playbook(floor, args.tasks)
    result = {}
    up = SANDBOX + ["up", "--name", name, "--family", FAMILY, "--nodes", str(nodes)]
    down = SANDBOX + ["down", "--name", name]
    run(up, log)
    try:
        def play(skip):
            return [PLAYBOOK, "-i", inventory, floor, "-e", "bench_skip=%s" % skip]
        # one untimed run opens the SSH connections the timed runs reuse
        run(play("false"), log)
        skipped = median_pair([run(play("true"), log) for _r in range(args.repeat)])
        pinged = median_pair([run(play("false"), log) for _r in range(args.repeat)])
        result["floor"] = (pinged[0] - skipped[0], pinged[1] - skipped[1])
        if args.site:
            site = [PLAYBOOK, "-i", inventory, "gpudirect.gcp.site",
                    "-e", "nccl_tests_report_dir=%s" % os.path.join(work, name)]
            result["memory"] = {}
            result["results"] = {}
            result["tasks"] = {"site": [], "rerun": [], "diagnose": []}
            # cold: fresh nodes each time; the first sample also watches the controller's memory
            result["site"] = []
            for number in range(args.cold_repeat):
                if number:
                    run(down, log)
                    run(up, log)
                result["site"].append(run(site, log, memory=None if number else result["memory"],
                                          profile=result["tasks"]["site"]))
            result["results"]["site"] = results_per_node(log)
            # the median of --repeat re-runs: the figure most real runs are, and the noisiest on a shared machine
            reruns, taken = [], []
            for _r in range(args.repeat):
                reruns.append(run(site, log, profile=result["tasks"]["rerun"]))
                taken.extend(full_paths(log))
            result["rerun"] = median_pair(reruns)
            result["results"]["rerun"] = results_per_node(log)
            result["rerun_full_paths"] = taken
            result["diagnose"] = run([PLAYBOOK, "-i", inventory, "gpudirect.gcp.diagnose",
                                      "-e", "diagnose_nccl_tests=false", "-e", "diagnose_fail_on_findings=false",
                                      "-e", "diagnose_report_dir=%s" % os.path.join(work, name)], log,
                                     profile=result["tasks"]["diagnose"])
            result["results"]["diagnose"] = results_per_node(log)
    finally:
        if not args.keep:
            run(down, log, check=False)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2,6", help="node counts, the smallest first")
    parser.add_argument("--tasks", type=int, default=20, help="ping tasks in the floor playbook")
    parser.add_argument("--top", type=int, default=12, help="tasks listed by their slope, for each run")
    parser.add_argument("--repeat", type=int, default=3, help="floor runs and site.yml re-runs per size (median)")
    parser.add_argument("--cold-repeat", type=int, default=3,
                        help="site.yml runs on fresh nodes per size, with --site (median and spread)")
    parser.add_argument("--site", action="store_true",
                        help="also time site.yml, a re-run of it and diagnose once per size")
    parser.add_argument("--keep", action="store_true", help="leave the sandboxes running")
    parser.add_argument("--core", choices=sorted(CORES), default="oldest",
                        help="the ansible-core that runs the playbooks: oldest (.venv) or newest (build/venv-newest)")
    args = parser.parse_args()
    global PLAYBOOK  # pylint: disable=global-statement
    PLAYBOOK = os.path.join(CORES[args.core], "ansible-playbook")
    if not os.access(PLAYBOOK, os.X_OK):
        sys.exit("bench: no %s: run make %s" % (PLAYBOOK, "venv" if args.core == "oldest" else "venv-newest"))
    version = subprocess.run([PLAYBOOK, "--version"], capture_output=True, text=True, check=False).stdout
    core = version.splitlines()[0] if version else "ansible-core (version unknown)"
    # the checkout's configuration for every run (the collection is linked by scripts/link-collection.sh)
    os.environ.setdefault("ANSIBLE_CONFIG", os.path.join(ROOT, "ansible.cfg"))
    os.environ.setdefault("ANSIBLE_NOCOLOR", "1")
    sizes = [int(s) for s in args.sizes.split(",")]
    if len(sizes) < 2 or args.tasks < 1 or args.repeat < 1 or args.cold_repeat < 1:
        sys.exit("bench: --sizes needs two or more sizes, --tasks, --repeat and --cold-repeat at least 1")
    work = os.path.join(ROOT, "build", "bench-scaling", args.core)
    os.makedirs(work, exist_ok=True)
    results = {}
    for nodes in sizes:
        results[nodes] = measure(nodes, args, work)
        print("measured %d nodes: %s" % (nodes, ", ".join(
            "%s %.1f s wall, %.1f s controller CPU" % ((k,) + (median_pair(v) if k == "site" else v))
            for k, v in sorted(results[nodes].items())
            if k not in ("memory", "results", "rerun_full_paths", "tasks"))), flush=True)
    small, large = sizes[0], sizes[-1]
    print()
    print("scaling benchmark on %s, SANDBOX (podman nodes on this machine, %d CPU(s) shared by the "
          "controller and every node)" % (core, os.cpu_count() or 0))
    print("%-6s %22s %26s %16s %16s" % ("nodes", "floor: s per task", "floor: controller ms per",
                                        "site wall (s)", "site CPU (s)"))
    print("%-6s %22s %26s" % ("", "(all nodes)", "task and node"))
    for nodes in sizes:
        wall, cpu = results[nodes]["floor"]
        site = median_pair(results[nodes]["site"]) if "site" in results[nodes] else None
        print("%-6d %22.2f %26.0f %16s %16s" % (
            nodes, wall / args.tasks, 1000.0 * cpu / (args.tasks * nodes),
            "%.0f" % site[0] if site else "-", "%.0f" % site[1] if site else "-"))
    print()
    floor_ratio = results[large]["floor"][0] / results[small]["floor"][0]
    print("floor %d vs %d nodes: %.2fx (nodes %.1fx)" % (large, small, floor_ratio, float(large) / small))
    if args.site:
        site_ratio = median_pair(results[large]["site"])[0] / median_pair(results[small]["site"])[0]
        print("site.yml %d vs %d nodes: %.2fx wall, %s the floor's %.2fx" % (
            large, small, site_ratio, "within" if site_ratio <= floor_ratio else "over", floor_ratio))
        print()
        print("controller CPU per node (slope %d to %d nodes):" % (small, large))
        for key, label, target in (("site", "site.yml, cold", 8.0), ("rerun", "site.yml, converged re-run", 3.0),
                                   ("diagnose", "diagnose, no NCCL tests", 3.0)):
            samples = [results[n][key] if key == "site" else [results[n][key]] for n in (small, large)]
            mid, low, high = slope(samples[0], samples[1], small, large)
            spread = " (%d samples a size: %.1f to %.1f)" % (len(samples[0]), low, high) if key == "site" else ""
            print("  %-28s %6.1f CPU-s a node%s (target %.0f by the median: %s); %d task results a node" % (
                label, mid, spread, target, target_verdict(mid, target), results[large]["results"][key]))
        print()
        print("where a node's controller CPU goes: the tasks with the largest slope (%d to %d nodes; "
              "callbacks/task_cpu.py)" % (small, large))
        for key, label in (("site", "site.yml, cold"), ("rerun", "site.yml, converged re-run"),
                           ("diagnose", "diagnose, no NCCL tests")):
            slopes = task_slopes(results[small]["tasks"][key], results[large]["tasks"][key], small, large)
            total = sum(s for s, _t in slopes)
            print("  %s: %.1f CPU-s a node over %d tasks; the top %d:" % (label, total, len(slopes), args.top))
            for per_node, task in slopes[:args.top]:
                print("    %6.3f  %4.1f %%  %s" % (per_node, 100.0 * per_node / total if total else 0.0, task[:110]))
        for nodes in sizes:
            taken = results[nodes]["rerun_full_paths"]
            verdict = ("converged, no phase took its full path" if not taken else
                       "NOT converged, the figure is void: %d full path(s) (%s)" % (
                           len(taken), ", ".join("%s on %s" % t for t in taken[:6])))
            print("  re-run on %d nodes: %s" % (nodes, verdict))
        print()
        small_mem, large_mem = results[small]["memory"], results[large]["memory"]
        print("controller memory during a cold site.yml (PSS, forks %s):" % os.environ.get("ANSIBLE_FORKS", "from ansible.cfg"))
        for nodes in sizes:
            mem = results[nodes]["memory"]
            print("  %2d nodes: main process %.0f MiB at its peak; one forked worker %.0f MiB (median), "
                  "%d at once at most" % (nodes, mem["main_kib"] / 1024.0, mem["worker_kib"] / 1024.0, mem["workers"]))
        print("  main process per node (slope): %.1f MiB" % (
            (large_mem["main_kib"] - small_mem["main_kib"]) / 1024.0 / float(large - small)))
    print("logs: %s" % work)


if __name__ == "__main__":
    main()
