# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Time `ansible-inventory --list` with gpudirect.gcp.gce_gpu (cold, warm cache)
and google.cloud.gcp_compute against the same emulated fleet.

Both plugins talk to https://compute.googleapis.com; HTTPS_PROXY sends them
through a local CONNECT proxy to the emulator (HTTPS, throwaway CA trusted via
REQUESTS_CA_BUNDLE), which adds a fixed latency to every request and counts them.
Run through benchmarks/inventory/run.sh.
"""

from __future__ import absolute_import, division, print_function

import argparse
import json
import math
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))

import compute_harness as harness  # noqa: E402
import make_fixture  # noqa: E402
import tls_proxy  # noqa: E402
from compute_fleet import families  # noqa: E402

PAGE = 500
FETCH_LINE = re.compile(r"gce_gpu: \d+ hosts from \d+ API requests \(\d+ retries\) in (?P<total>[0-9.]+) s "
                        r"\(client set-up (?P<setup>[0-9.]+) s, API calls (?P<api>[0-9.]+) s\)")


def _yaml(path, data):
    with open(path, "w") as handle:
        json.dump(data, handle, indent=1)  # JSON is YAML


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=4)
    parser.add_argument("--instances", type=int, default=2500, help="instances per project")
    parser.add_argument("--latency-ms", type=float, default=30.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--gcp-venv", required=True, help="virtualenv holding the community ansible package")
    parser.add_argument("--skip-gcp-compute", action="store_true")
    parser.add_argument("--sweep", default="100,300",
                        help="further latencies (ms, comma-separated) at which to time gce_gpu's API calls")
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "bench-inventory"))
    args = parser.parse_args()

    out = args.out
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    fleet = make_fixture.fleet(args.projects, args.instances)
    fixture_path = os.path.join(out, "fleet.json")
    with open(fixture_path, "w") as handle:
        json.dump(fleet, handle)
    gpu_per_project = [sum(1 for i in p["instances"] if families.family_for_machine_type(i["machineType"]))
                       for p in fleet["projects"].values()]
    pki = tls_proxy.make_ca_and_cert(out)
    projects = sorted(fleet["projects"])

    emu = harness.ProcessEmulator(fixture_path, out, latency_ms=args.latency_ms,
                                  extra_args=["--tls-cert", pki["cert"], "--tls-key", pki["key"]])
    with emu:
        port = int(emu.url.rsplit(":", 1)[1])
        proxy = tls_proxy.ConnectProxy("127.0.0.1", port).start()
        # control calls go straight to the emulator, trusting the throwaway CA
        import ssl
        ctx = ssl.create_default_context(cafile=pki["ca"])
        ctx.check_hostname = False
        emu.url = "https://127.0.0.1:%d" % port
        _orig = harness.urlopen
        harness.urlopen = lambda req, timeout=10: _orig(req, timeout=timeout, context=ctx)

        base_env = dict(os.environ)
        for var in list(base_env):
            if var.lower() in ("http_proxy", "https_proxy", "no_proxy", "all_proxy") or var.startswith("GCP_"):
                del base_env[var]
        base_env.update({"HTTPS_PROXY": proxy.url, "https_proxy": proxy.url, "REQUESTS_CA_BUNDLE": pki["ca"],
                         "ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOCAL_TEMP": os.path.join(out, "tmp")})

        ours_cfg = {"plugin": "gpudirect.gcp.gce_gpu", "projects": projects, "auth_kind": "accesstoken",
                    "access_token": "bench-token"}
        cached_cfg = dict(ours_cfg, cache=True, cache_plugin="ansible.builtin.jsonfile",
                          cache_connection=os.path.join(out, "cache"), cache_timeout=3600)
        gcp_cfg = {"plugin": "google.cloud.gcp_compute", "projects": projects, "auth_kind": "accesstoken",
                   "access_token": "bench-token"}
        regex = ".*/(%s)" % "|".join(sorted(families.MACHINE_TYPES))
        gcp_filtered_cfg = dict(gcp_cfg, filters=['machineType eq "%s"' % regex, 'status eq "RUNNING"'])
        paths = {}
        for name, cfg in (("ours", ours_cfg), ("cached", cached_cfg)):
            paths[name] = os.path.join(out, "%s.gce_gpu.yml" % name)
            _yaml(paths[name], cfg)
        for name, cfg in (("gcp", gcp_cfg), ("gcp_filtered", gcp_filtered_cfg)):
            paths[name] = os.path.join(out, "%s.gcp.yml" % name)
            _yaml(paths[name], cfg)
        gcp_cfg_file = os.path.join(out, "gcp-ansible.cfg")
        with open(gcp_cfg_file, "w") as handle:
            handle.write("[inventory]\nenable_plugins = google.cloud.gcp_compute\n")

        ours_env = dict(base_env, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
                        PATH=os.path.join(ROOT, ".venv", "bin") + os.pathsep + base_env.get("PATH", ""))
        gcp_env = dict(base_env, ANSIBLE_CONFIG=gcp_cfg_file,
                       PATH=os.path.join(args.gcp_venv, "bin") + os.pathsep + base_env.get("PATH", ""))

        def run(label, binary, path, env, extra=()):
            emu.reset()
            tunnels0 = proxy.tunnels
            cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.monotonic()
            proc = subprocess.run([binary, "-i", path, "--list"] + list(extra), env=env, capture_output=True, check=False,
                                  text=True, timeout=900)
            wall = time.monotonic() - started
            cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
            if proc.returncode != 0:
                sys.stderr.write(proc.stderr[-3000:])
                raise SystemExit("%s failed (rc %d)" % (label, proc.returncode))
            hosts = None
            if "-vvv" not in extra:
                hosts = len(json.loads(proc.stdout).get("_meta", {}).get("hostvars", {}))
            stats = emu.stats()
            return {"wall": wall, "cpu": cpu, "api": stats["api"], "token": stats["token"], "hosts": hosts,
                    "late": stats.get("late", 0), "busy_ms_max": stats.get("busy_ms_max", 0.0),
                    "tunnels": proxy.tunnels - tunnels0, "stdout": proc.stdout, "stderr": proc.stderr}

        def series(label, binary, path, env, extra=()):
            runs = [run(label, binary, path, env, extra) for dummy in range(args.repeat)]
            best = dict(runs[0])
            best["wall"] = statistics.median(r["wall"] for r in runs)
            best["cpu"] = statistics.median(r["cpu"] for r in runs)
            best["walls"] = [round(r["wall"], 2) for r in runs]
            best["late"] = sum(r["late"] for r in runs)
            best["busy_ms_max"] = max(r["busy_ms_max"] for r in runs)
            print("%-40s median %6.2f s (cpu %5.2f s)  runs %s  requests %d  hosts %s" % (
                label, best["wall"], best["cpu"], best["walls"], best["api"], best["hosts"]), flush=True)
            return best

        results = {}
        ours_bin = os.path.join(ROOT, ".venv", "bin", "ansible-inventory")

        def fetch_timing():
            """Medians of the plugin's own fetch measures (-vvv): total, client set-up, API calls."""
            found = []
            for dummy in range(args.repeat):
                verbose = run("gce_gpu cold -vvv", ours_bin, paths["ours"], ours_env, ["-vvv"])
                match = FETCH_LINE.search(verbose["stdout"] + verbose["stderr"])
                if not match:
                    raise SystemExit("gce_gpu -vvv printed no fetch timing line")
                found.append([float(match.group(k)) for k in ("total", "setup", "api")])
            return [statistics.median(col) for col in zip(*found)]

        results["ours"] = series("gce_gpu cold", ours_bin, paths["ours"], ours_env)
        fetch, setup, api = fetch_timing()
        run("gce_gpu fill cache", ours_bin, paths["cached"], ours_env)
        verbose = run("gce_gpu warm -vvv", ours_bin, paths["cached"], ours_env, ["-vvv"])
        match = re.search(r"gce_gpu: parse took ([0-9.]+) s \(cache hit\)", verbose["stdout"] + verbose["stderr"])
        cached_parse = float(match.group(1)) if match else None
        results["cached"] = series("gce_gpu warm cache", ours_bin, paths["cached"], ours_env)
        # ansible-core's own cost for the same output: the hosts and vars of the cold run
        # as a static YAML inventory (no plugin, no API)
        static = {"all": {"hosts": json.loads(results["ours"]["stdout"])["_meta"]["hostvars"]}}
        paths["static"] = os.path.join(out, "static-hosts.yml")
        _yaml(paths["static"], static)
        results["static"] = series("static YAML of the same hosts", ours_bin, paths["static"], ours_env)
        sweep = []
        for latency in [float(v) for v in args.sweep.split(",") if v.strip()]:
            emu.set_faults({"latency_ms": latency})
            sweep.append((latency,) + tuple(fetch_timing()))
            print("gce_gpu at %.0f ms latency: fetch %.3f s, API calls %.3f s"
                  % (latency, sweep[-1][1], sweep[-1][3]), flush=True)
        emu.set_faults({"latency_ms": args.latency_ms})
        if not args.skip_gcp_compute:
            gcp_bin = os.path.join(args.gcp_venv, "bin", "ansible-inventory")
            results["gcp"] = series("google.cloud.gcp_compute", gcp_bin, paths["gcp"], gcp_env)
            results["gcp_filtered"] = series("google.cloud.gcp_compute + GPU filter", gcp_bin,
                                             paths["gcp_filtered"], gcp_env)
        proxy.stop()

    floor_pages = max(int(math.ceil(n / float(PAGE))) for n in gpu_per_project)
    unfiltered_pages = int(math.ceil(args.instances / float(PAGE)))
    gcp_wall = results.get("gcp", {}).get("wall")
    rows = [("`gce_gpu` cold", results["ours"]), ("`gce_gpu` warm cache", results["cached"])]
    if "gcp" in results:
        rows += [("`gcp_compute` (all VMs, as configured by default)", results["gcp"]),
                 ("`gcp_compute` + the same GPU filter", results["gcp_filtered"])]
    rows.append(("static YAML file of the same hosts and vars (no plugin, no API)", results["static"]))
    lines = [
        "Fleet: %d projects x %d instances (%d A3/A4 VMs per project), %.0f ms latency per request, "
        "HTTPS through a CONNECT proxy; median of %d runs of `ansible-inventory --list`."
        % (args.projects, args.instances, gpu_per_project[0], args.latency_ms, args.repeat),
        "Host load while measuring: %s (load average over 1, 5, 15 min)." % ", ".join(
            "%.1f" % v for v in os.getloadavg()),
        "",
        "| run | wall time (s) | CPU time (s) | API requests | TLS connections | hosts | speed-up vs gcp_compute |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, res in rows:
        speed = ("%.1fx" % (gcp_wall / res["wall"])) if gcp_wall else "n/a"
        lines.append("| %s | %.2f | %.2f | %d | %d | %d | %s |" % (
            label, res["wall"], res["cpu"], res["api"] + res["token"], res["tunnels"], res["hosts"], speed))
    late = [(label, res) for label, res in rows if res["late"]]
    lines += ["", "Emulator: its busiest answer took %.0f ms of its own work; answers that overran the latency: %s." % (
        max(res["busy_ms_max"] for dummy, res in rows),
        ", ".join("%d in %s" % (res["late"], label) for label, res in late) if late else "none")]
    lines += [
        "",
        "Fetch time against the floor (slowest project's page count for the GPU VMs, %d page of %d, x latency; "
        "listing every VM would need %d pages). `gce_gpu`'s own `-vvv` measures, median of %d runs: API calls = "
        "first request to last answer decoded; fetch = also importing google-auth and requests, building "
        "credentials and turning instances into hosts." % (floor_pages, PAGE, unfiltered_pages, args.repeat),
        "",
        "| latency | floor | API calls | API calls / floor | fetch | fetch / floor |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for latency, total, dummy_setup, api_s in [(args.latency_ms, fetch, setup, api)] + sweep:
        lfloor = floor_pages * latency / 1000.0
        lines.append("| %.0f ms | %.0f ms | %.0f ms | %.2fx | %.0f ms | %.2fx |" % (
            latency, lfloor * 1000, api_s * 1000, api_s / lfloor, total * 1000, total / lfloor))
    if cached_parse is not None:
        lines += ["", "`gce_gpu` warm cache: the plugin's whole parse (read the cache, add %d hosts) took "
                  "%.3f s; the rest of that run is ansible-inventory start-up, variable resolution and JSON "
                  "output." % (results["cached"]["hosts"], cached_parse)]
    table = "\n".join(lines)
    print()
    print(table)
    with open(os.path.join(out, "results.md"), "w") as handle:
        handle.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
