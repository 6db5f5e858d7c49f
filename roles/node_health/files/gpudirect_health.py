# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpudirect-health: run this node's GPUDirect health checks (GPU NICs, RxDM, NCCL plugin files, NCCL
env file) and write the result as Prometheus metrics for node_exporter's textfile collector.

Installed by the gpudirect.gcp.node_health role, with the collection's check code beside it (--lib),
and run by the gpudirect-health command the role writes; what to expect comes from the JSON config
the role writes too. With --slurm prolog|epilog it is a Slurm hook (the gpudirect.gcp.slurm_hooks
role installs them): it starts or stops RxDM for the job first, and logs its line to the journal.
Prints one line; exit status:
  0  healthy, or only warnings (a check that could not run, or the time limit reached: a hung
     helper is no proof the node is bad, so a Slurm prolog lets the job run)
  1  a component failed (the line names it; a Slurm hook's non-zero status drains the node)
  2  the node could not be checked: the config or the options are unusable (the line names the option
     or key), or the checks themselves broke (the line names the error); never a verdict on the node
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import syslog
import time

DEFAULT_LIB = "/usr/local/lib/gpudirect-health"
DEFAULT_CONFIG = "/etc/gpudirect/health.json"
METRICS_FILE = "gpudirect_node_health.prom"
JOB_METRICS_FILE = "gpudirect_job_watch.prom"
# where systemd units and root's shell find the tools the checks call
SEARCH_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class TimeLimit(Exception):
    pass


def on_alarm(_signum, _frame):
    raise TimeLimit()


def make_run(deadline):
    def run(argv):
        if not isinstance(argv, list):
            raise TypeError("commands are argument lists")
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeLimit()
        try:
            # bytes that are not UTF-8 are kept (as surrogates) for the report to show, never a crash
            proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                  encoding="utf-8", errors="surrogateescape", timeout=left, check=False)
        except subprocess.TimeoutExpired:
            raise TimeLimit()
        except OSError as exc:
            return 127, "", str(exc)
        return proc.returncode, proc.stdout, proc.stderr
    return run


def which(name):
    return shutil.which(name, path=os.environ.get("PATH", "") + ":" + SEARCH_PATH)


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="gpudirect-health", description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=DEFAULT_CONFIG, help="what to expect (JSON the role writes)")
    parser.add_argument("--lib", default=DEFAULT_LIB, help="where the collection's check code is installed")
    parser.add_argument("--textfile-dir", help="write %s there (temporary file, then rename)" % METRICS_FILE)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before the run stops with a warning")
    parser.add_argument("--root", default="/", help="read sysfs and files under this root (tests)")
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON after the line")
    slurm = parser.add_argument_group("Slurm hook")
    slurm.add_argument("--slurm", choices=("prolog", "epilog"), help="run as this Slurm hook (job from SLURM_*)")
    slurm.add_argument("--rxdm-per-job", action="store_true",
                       help="RxDM runs only for multi-node jobs: the prolog starts it, the epilog stops it")
    slurm.add_argument("--rxdm-wait", type=float, default=120.0,
                       help="seconds RxDM may take to become ready after the prolog starts it")
    slurm.add_argument("--drain-reason", action="store_true",
                       help="on a failure, also set the line as the node's drain reason (scontrol)")
    slurm.add_argument("--drain-before-maintenance", action="store_true",
                       help="host maintenance due within the warning time fails the hook, so Slurm drains the "
                            "node before the maintenance stops it")
    jobs = parser.add_argument_group("Job watch (a service of its own: it runs until stopped)")
    jobs.add_argument("--watch-jobs", action="store_true",
                      help="watch the NCCL job on this node through NCCL RAS: hangs, dead and failing ranks "
                           "(writes %s)" % JOB_METRICS_FILE)
    jobs.add_argument("--ras-port", type=int, default=28028, help="NCCL RAS's client port (NCCL_RAS_ADDR)")
    jobs.add_argument("--poll", type=float, default=10.0, help="seconds between two RAS statuses")
    jobs.add_argument("--hang-after", type=float, default=600.0,
                      help="seconds without any rank issuing a collective, the ranks disagreeing, that make a hang")
    jobs.add_argument("--no-gpu-activity", action="store_true",
                      help="do not sample the job's GPUs (nvidia-smi, each poll): without them, ranks that all "
                           "wait in one collective are not told from an idle phase, and are not named")
    jobs.add_argument("--inspector-dir", help="where the jobs' NCCL Inspector writes its metrics files "
                                              "(NCCL_INSPECTOR_DUMP_DIR): publish the node's bandwidth from them")
    jobs.add_argument("--inspector-stale", type=float, default=120.0,
                      help="seconds after which an Inspector file not rewritten is left out")
    jobs.add_argument("--watch-for", type=float, default=0.0, help="stop after this many seconds (0: when stopped)")
    return parser.parse_args(argv)


def journal(line, failed=False):
    """Hooks have no terminal: their line goes to the journal (syslog socket)."""
    try:
        syslog.openlog("gpudirect-health", 0, syslog.LOG_DAEMON)
        syslog.syslog(syslog.LOG_ERR if failed else syslog.LOG_INFO, line)
    except (OSError, ValueError):
        pass


class Stop(BaseException):
    """SIGTERM: not an Exception, so that no guard that records failures and carries on keeps it."""


def on_term(_signum, _frame):
    raise Stop()


def gpu_sampler(args, gpu_activity):
    """activity(pids) for the job watch: the job's GPUs from nvidia-smi, each query within 5 s; None
    (no sampler) where the node has no nvidia-smi or the option says so."""
    nvidia_smi = None if args.no_gpu_activity else which("nvidia-smi")
    if not nvidia_smi:
        return None

    def activity(pids):
        try:
            return gpu_activity.sample(make_run(time.monotonic() + 5.0), nvidia_smi, pids)
        except TimeLimit:
            return None  # a lost sample: the watch's clocks neither start nor stop on it
    return activity


def watch_jobs(args, config, health_metrics, safe_text, job_watch, gpu_activity):
    """The job watch: poll RAS, read its events between polls, write the metrics and tell each new
    verdict (stdout, which systemd keeps in the journal) until stopped.

    The job writes what RAS answers: an answer the watch cannot read is recorded as "could not check
    the job" (told once, and in the metrics) and the watch carries on; it never exits for one, so
    systemd never restarts it in a loop."""
    standins = bool(config.get("standins"))
    names = config.get("node_names") if isinstance(config.get("node_names"), dict) else {}
    watch = job_watch.JobWatch(port=args.ras_port, hang_after_s=args.hang_after, names=names,
                               inspector_dir=args.inspector_dir, inspector_stale_s=args.inspector_stale,
                               activity=gpu_sampler(args, gpu_activity))
    label = " (SANDBOX: stand-ins, not Google Cloud)" if standins else ""

    def publish():
        try:
            lines = watch.news()
            text = watch.metrics(time.time(), standins) if args.textfile_dir else None
        except Exception as exc:  # pylint: disable=broad-except
            watch.failed(exc)
            lines, text = watch.news(), None
        for line in lines:
            print(safe_text.one_line("gpudirect-health: job: %s%s" % (line, label)), flush=True)
        if text is not None:
            try:
                health_metrics.write_textfile(args.textfile_dir, JOB_METRICS_FILE, text)
            except (IOError, OSError) as exc:
                print("gpudirect-health: --textfile-dir %s: cannot write %s: %s"
                      % (args.textfile_dir, JOB_METRICS_FILE, exc), flush=True)

    signal.signal(signal.SIGTERM, on_term)
    try:
        watch.run(args.poll, args.watch_for if args.watch_for > 0 else None, publish)
    except (Stop, KeyboardInterrupt):
        pass
    except Exception as exc:  # pylint: disable=broad-except
        # a bug outside the loop's guards: one line and exit 2, which the unit does not restart
        print(safe_text.one_line("gpudirect-health: job watch stopped: %s: %s" % (type(exc).__name__, exc)), flush=True)
        return 2
    return 0


def main(argv=None):
    args = parse_args(argv)
    for option, value in (("--timeout", args.timeout), ("--rxdm-wait", args.rxdm_wait), ("--poll", args.poll),
                          ("--hang-after", args.hang_after)):
        if value <= 0:
            print("gpudirect-health: %s must be more than 0, got %s" % (option, value))
            return 2
    sys.path.insert(0, args.lib)
    try:
        from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
        from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding
        from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import gpu_activity
        from ansible_collections.gpudirect.gcp.plugins.module_utils.health import health_metrics, node_health
        from ansible_collections.gpudirect.gcp.plugins.module_utils.health import slurm_hook
        from ansible_collections.gpudirect.gcp.plugins.module_utils.job import job_watch
    except ImportError as exc:
        print("gpudirect-health: --lib %s: the check code is not installed there (%s)" % (args.lib, exc))
        return 2
    try:
        with open(args.config) as fh:
            config = json.load(fh)
        node_health.validate(config)
        # where the node sits (the role's gce_topology), for the metrics' labels
        place = finding.place(config.get("place"))
    except (IOError, OSError) as exc:
        print("gpudirect-health: --config %s: cannot read it: %s" % (args.config, exc.strerror or exc))
        return 2
    except ValueError as exc:  # bad JSON, or node_health.ConfigError
        print("gpudirect-health: --config %s: %s" % (args.config, exc))
        return 2

    if args.watch_jobs:
        return watch_jobs(args, config, health_metrics, safe_text, job_watch, gpu_activity)

    start = time.monotonic()
    timed_out = False
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, args.timeout)
    run = make_run(start + args.timeout)
    try:
        if args.slurm:
            result = slurm_hook.run_hook(args.slurm, config, run, which, slurm_hook.job_nodes(os.environ),
                                         args.rxdm_per_job, args.rxdm_wait, root=args.root)
        else:
            # RxDM per job is down between jobs by design: only the hooks, around a job, judge it
            checked = dict(config, rxdm=None) if args.rxdm_per_job else config
            result = node_health.check(checked, run, which, root=args.root)
        if args.slurm and args.drain_before_maintenance:
            # the warning that maintenance is due becomes the hook's failure: drain now, not when it stops the VM
            for item in result["findings"]:
                if (item["component"], item["subject"], item["severity"]) == ("host", "maintenance", "warn") and \
                        not item["cause"].startswith("could not run"):
                    item["severity"] = "fail"
    except TimeLimit:
        timed_out = True
        result = node_health.empty_result(config["family"])
        result.update(findings=[node_health.finding("host", "node check", "warn",
                                                    "stopped at the time limit of %ss: a check hung" % args.timeout)],
                      duration_s=round(time.monotonic() - start, 3))
    except Exception as exc:  # pylint: disable=broad-except
        # a bug or input the checks did not expect says nothing about the node: exit 2, never a drain
        signal.setitimer(signal.ITIMER_REAL, 0)
        line = safe_text.one_line("gpudirect-health: %scould not check the node: %s: %s"
                                  % ("%s " % args.slurm if args.slurm else "", type(exc).__name__, exc))
        print(line)
        if args.slurm:
            journal(line, True)
        return 2
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)

    standins = bool(config.get("standins"))
    verdict = node_health.verdict(result["findings"])
    status = 0
    if args.textfile_dir:
        try:
            health_metrics.write_textfile(args.textfile_dir, METRICS_FILE,
                                          health_metrics.render(result, time.time(), timed_out, standins, place))
        except (IOError, OSError) as exc:
            print("gpudirect-health: --textfile-dir %s: cannot write %s: %s" % (args.textfile_dir, METRICS_FILE, exc))
            status = 2
    phase = "%s " % args.slurm if args.slurm else ""
    label = " (SANDBOX: stand-ins, not Google Cloud)" if standins else ""
    reason = node_health.one_line(result["findings"])
    line = "gpudirect-health: %s%s: %s%s" % (phase, verdict, reason, label)
    print(line)
    if args.slurm:
        for action in result.get("actions") or []:
            journal("gpudirect-health: %s: %s" % (args.slurm, action))
        journal(line, verdict == "fail")
        if verdict == "fail" and args.drain_reason:
            prefix = "gpudirect SANDBOX: " if standins else "gpudirect: "
            # the journal line's reason (one line, secrets masked); its own short deadline: the checks
            # may have used up the run's
            problem = slurm_hook.drain(make_run(time.monotonic() + 10), which, os.environ, prefix + reason)
            if problem:
                journal("gpudirect-health: %s: %s" % (args.slurm, problem))
    if args.json:
        print(json.dumps(result, sort_keys=True))
    return status or (1 if verdict == "fail" else 0)


if __name__ == "__main__":
    sys.exit(main())
