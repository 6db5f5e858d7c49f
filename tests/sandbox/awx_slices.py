"""Run a configuration playbook as AWX runs a sliced job template, then the
unsliced cross-node playbook, with ansible-runner and no AWX.

  awx_slices.py --inventory INV --project DIR --slices N --work DIR
                [--configure configure.yml] [--fabric fabric.yml] [-e KEY=VALUE ...]

AWX splits a sliced job's inventory the way slice_hosts() does: the hosts in
name order, slice k (from 1) taking every N-th one from the k-th.  Each slice
job gets an inventory holding only its own hosts (groups keep their names,
with the other slices' hosts left out), as an executable that prints it, as
AWX hands a job its inventory; the slices run side by side, as AWX starts
them on its execution nodes.  The unsliced job then gets the whole
inventory.

Prints one JSON document (each job's hosts, status, rc and recap) and exits
0 only when every node was configured by exactly one slice, no slice and no
node failed, and the unsliced job saw every node and proved its GPU NICs
ready; otherwise each problem is one line on stderr and the exit status is 1
(2: the inventory could not be read).  ansible-runner's own records stay
under --work.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

# the configuration playbook's last phase, its play, and the play's last task:
# the nodes that task records went through every configuration phase there
LAST_PHASE = "nccl_profile"
LAST_CONFIG_PLAY = "Phase nccl_profile"
LAST_TASK = "Record the nodes that finished this phase"
# the report's summary play runs on the controller
CONTROLLER = {"localhost"}
# the unsliced job's readiness phase proves every node's GPU NICs itself: no
# configuration phase ran in its process, so there is no earlier proof to keep
PROOF_PLAY = "Phase readiness"
PROOF_TASK = "Prove every GPU NIC is up, addressed and at its VPC MTU"


def slice_hosts(names, number, count):
    """The hosts of slice `number` (1..count) of `count`, as AWX picks them."""
    if count < 1 or not 1 <= number <= count:
        raise ValueError("slice %d of %d does not exist" % (number, count))
    return sorted(names)[number - 1::count]


def slice_inventory(inventory, hosts):
    """`ansible-inventory --list` output cut down to `hosts` (AWX's slice inventory)."""
    keep = set(hosts)
    out = {"_meta": {"hostvars": {h: v for h, v in inventory.get("_meta", {}).get("hostvars", {}).items()
                                  if h in keep}}}
    for group, body in inventory.items():
        if group == "_meta":
            continue
        body = dict(body)
        if "hosts" in body:
            body["hosts"] = [h for h in body["hosts"] if h in keep]
        out[group] = body
    return out


def write_inventory_script(path, inventory):
    """An executable that prints the inventory, as AWX hands a job its inventory (the script plugin reads it)."""
    with open(path, "w") as fh:
        fh.write("#!%s\nimport sys\nsys.stdout.write(%r)\n" % (sys.executable, json.dumps(inventory)))
    os.chmod(path, 0o700)
    return path


def all_hosts(inventory):
    return sorted(inventory.get("_meta", {}).get("hostvars", {}))


def ok_results(events, play, task):
    """The event data of each successful run of `task` in a play whose name starts with `play`."""
    for event in events:
        data = event.get("event_data") or {}
        if event.get("event") == "runner_on_ok" and data.get("play", "").startswith(play) and data.get("task") == task:
            yield data


def finished_last_phase(events):
    """The nodes the configuration's last play recorded as finished (one record, on the controller)."""
    done = []
    for data in ok_results(events, LAST_CONFIG_PLAY, LAST_TASK):
        facts = (data.get("res") or {}).get("ansible_facts") or {}
        done = list((facts.get("gpudirect_phases_done") or {}).get(LAST_PHASE) or [])
    return done


def proved_nics(events):
    """The nodes whose GPU NICs the readiness phase proved ready."""
    return sorted({data.get("host") for data in ok_results(events, PROOF_PLAY, PROOF_TASK)})


def job_summary(name, hosts, runner, events):
    """A job's outcome from its status and its events (read once: runner.events reads every file again)."""
    # the play recap event, which carries set_stats data too (AWX's job artifacts)
    stats = {}
    for event in events:
        if event.get("event") == "playbook_on_stats":
            stats = event.get("event_data") or {}
    return {
        "job": name,
        "hosts": hosts,
        "status": runner.status,
        "rc": runner.rc,
        "processed": sorted(stats.get("processed", {})),
        "failures": sorted(h for h, n in stats.get("failures", {}).items() if n),
        "dark": sorted(h for h, n in stats.get("dark", {}).items() if n),
        "artifact_data": stats.get("artifact_data", {}),
    }


def problems(nodes, slices, fabric):
    """One line per broken promise of the sliced path."""
    out = []
    seen = {}
    for job in slices:
        for host in job["finished"]:
            seen.setdefault(host, []).append(job["job"])
        if job["status"] != "successful" or job["rc"] != 0:
            out.append("%s: status %s, rc %s" % (job["job"], job["status"], job["rc"]))
        strangers = sorted(set(job["processed"]) - set(job["hosts"]) - CONTROLLER)
        if strangers:
            out.append("%s: ran on %s, outside its slice" % (job["job"], ", ".join(strangers)))
    for node in nodes:
        where = seen.get(node, [])
        if len(where) != 1:
            out.append("%s: configured by %d slice(s) (%s), not exactly one"
                       % (node, len(where), ", ".join(where) or "none"))
    if fabric["status"] != "successful" or fabric["rc"] != 0:
        out.append("%s: status %s, rc %s" % (fabric["job"], fabric["status"], fabric["rc"]))
    missed = sorted(set(nodes) - set(fabric["processed"]))
    if missed:
        out.append("%s: never saw %s" % (fabric["job"], ", ".join(missed)))
    unproved = sorted(set(nodes) - set(missed) - set(fabric["proved"]))
    if unproved:
        out.append("%s: never proved the GPU NICs of %s" % (fabric["job"], ", ".join(unproved)))
    for job in slices + [fabric]:
        bad = sorted(set(job["failures"]) | set(job["dark"]))
        if bad:
            out.append("%s: failed or unreachable: %s" % (job["job"], ", ".join(bad)))
    return out


def read_inventory(path):
    run = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-inventory"), "-i", path, "--list"],
                         capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise RuntimeError("ansible-inventory -i %s: %s" % (path, (run.stderr.strip().splitlines() or ["failed"])[-1]))
    return json.loads(run.stdout)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--inventory", required=True)
    parser.add_argument("--project", required=True, help="the project directory (awx/project)")
    parser.add_argument("--slices", type=int, default=3)
    parser.add_argument("--work", required=True)
    parser.add_argument("--configure", default="configure.yml")
    parser.add_argument("--fabric", default="fabric.yml")
    parser.add_argument("-e", "--extra-var", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    extravars = dict(item.split("=", 1) for item in args.extra_var)

    import ansible_runner  # pylint: disable=import-outside-toplevel

    try:
        inventory = read_inventory(args.inventory)
    except (RuntimeError, ValueError) as exc:
        print("awx_slices: %s" % exc, file=sys.stderr)
        return 2
    nodes = all_hosts(inventory)
    if len(nodes) < args.slices:
        print("awx_slices: %d node(s) cannot make %d slices" % (len(nodes), args.slices), file=sys.stderr)
        return 2
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    # a job sees the project's ansible.cfg and none of the caller's ANSIBLE_* settings (a Molecule run
    # has its own), as in AWX; the collections come from the checkout
    for name in [n for n in os.environ if n.startswith("ANSIBLE_") and n != "ANSIBLE_COLLECTIONS_PATH"]:
        del os.environ[name]
    env = {"ANSIBLE_NOCOLOR": "1", "ANSIBLE_CONFIG": os.path.join(os.path.abspath(args.project), "ansible.cfg")}

    def start(job, playbook, inv):
        pdd = os.path.join(args.work, job)
        os.makedirs(os.path.join(pdd, "inventory"))
        script = write_inventory_script(os.path.join(pdd, "inventory", "hosts"), inv)
        return ansible_runner.run_async(private_data_dir=pdd, project_dir=args.project, playbook=playbook,
                                        inventory=script, extravars=extravars, envvars=env, ident=job, quiet=True)

    # the slices side by side, as AWX runs them
    started = []
    for number in range(1, args.slices + 1):
        hosts = slice_hosts(nodes, number, args.slices)
        job = "slice-%d-of-%d" % (number, args.slices)
        started.append((job, hosts) + tuple(start(job, args.configure, slice_inventory(inventory, hosts))))
    slices = []
    for job, hosts, thread, runner in started:
        thread.join()
        events = list(runner.events)
        summary = job_summary(job, hosts, runner, events)
        summary["finished"] = finished_last_phase(events)
        slices.append(summary)
    # the cross-node phases, once over every node
    thread, runner = start("unsliced", args.fabric, inventory)
    thread.join()
    events = list(runner.events)
    fabric = job_summary("unsliced", nodes, runner, events)
    fabric["proved"] = proved_nics(events)
    found = problems(nodes, slices, fabric)
    print(json.dumps({"nodes": nodes, "slices": slices, "unsliced": fabric, "problems": found}, indent=1))
    for line in found:
        print("awx_slices: %s" % line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
