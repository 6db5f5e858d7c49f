"""The alert-to-remediation chain on this machine, for the sandbox: Prometheus and Alertmanager (Debian's
packages) and ansible-rulebook (PyPI, on Java), on loopback ports of their own, real processes all.

  eda_stack.py start --dir DIR --targets IP:9100,... --inventory INV     prints {"prometheus": port, ...}
  eda_stack.py stop --dir DIR

Prometheus scrapes the sandbox nodes' node_exporter every 2 s and evaluates the collection's own rules
(monitoring/prometheus/gpudirect.rules.yml) every 2 s; Alertmanager groups by instance and alert and
posts each group at once (group_wait 1 s), resolved alerts too, to the rulebook's source; ansible-rulebook
runs extensions/eda/rulebooks/gpudirect_remediate.yml with the inventory. Logs and state under DIR.
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RULES = os.path.join(ROOT, "monitoring", "prometheus", "gpudirect.rules.yml")
BIN = os.path.dirname(sys.executable)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def write(path, text):
    with open(path, "w") as handle:
        handle.write(text)


def wait(what, check, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit("eda_stack: %s did not come up within %d s" % (what, timeout))


def ready(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/-/ready" % port, timeout=2) as answer:
        return answer.status == 200


def listening(port):
    with socket.create_connection(("127.0.0.1", port), timeout=1):
        return True


def start(args):
    os.makedirs(args.dir, exist_ok=True)
    ports = {"prometheus": free_port(), "alertmanager": free_port(), "eda": free_port()}
    targets = [t for t in args.targets.split(",") if t]
    write(os.path.join(args.dir, "prometheus.yml"), json.dumps({
        "global": {"scrape_interval": "2s", "evaluation_interval": "2s"},
        "rule_files": [RULES],
        "alerting": {"alertmanagers": [{"static_configs": [{"targets": ["127.0.0.1:%d" % ports["alertmanager"]]}]}]},
        # the node's name as the instance label, as a relabelled real cluster has it
        "scrape_configs": [{"job_name": "gpu_nodes", "static_configs": [
            {"targets": [t.split("=", 1)[1]], "labels": {"instance": t.split("=", 1)[0]}} for t in targets]}],
    }))
    write(os.path.join(args.dir, "alertmanager.yml"), json.dumps({
        "route": {"receiver": "eda", "group_by": ["instance", "alertname"], "group_wait": "1s",
                  "group_interval": "2s", "repeat_interval": "1h"},
        "receivers": [{"name": "eda", "webhook_configs": [
            {"url": "http://127.0.0.1:%d/gpudirect" % ports["eda"], "send_resolved": True}]}],
    }))
    env = dict(os.environ, GPUDIRECT_EDA_PORT=str(ports["eda"]),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, "build", "collections"),
               ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), PATH=BIN + os.pathsep + os.environ["PATH"])
    commands = {
        "prometheus": ["prometheus", "--config.file=prometheus.yml", "--storage.tsdb.path=tsdb",
                       "--web.listen-address=127.0.0.1:%d" % ports["prometheus"]],
        "alertmanager": ["prometheus-alertmanager", "--config.file=alertmanager.yml", "--storage.path=am",
                         "--cluster.listen-address=", "--web.listen-address=127.0.0.1:%d" % ports["alertmanager"]],
        "rulebook": [os.path.join(BIN, "ansible-rulebook"), "-r", "gpudirect.gcp.gpudirect_remediate",
                     "-i", args.inventory, "--env-vars", "GPUDIRECT_EDA_PORT", "-v"],
    }
    pids = {}
    for name, argv in commands.items():
        log = open(os.path.join(args.dir, name + ".log"), "w")
        pids[name] = subprocess.Popen(argv, cwd=args.dir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True).pid
    write(os.path.join(args.dir, "stack.json"), json.dumps({"ports": ports, "pids": pids}))
    wait("Prometheus", lambda: ready(ports["prometheus"]))
    wait("Alertmanager", lambda: ready(ports["alertmanager"]))
    wait("ansible-rulebook's source", lambda: listening(ports["eda"]))
    print(json.dumps(ports))


def stop(args):
    path = os.path.join(args.dir, "stack.json")
    if not os.path.exists(path):
        return
    with open(path) as handle:
        pids = json.load(handle)["pids"]
    for pid in pids.values():
        try:
            os.killpg(pid, signal.SIGTERM)
        except OSError:
            pass
    os.unlink(path)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Prometheus, Alertmanager and ansible-rulebook for the sandbox")
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("start")
    up.add_argument("--dir", required=True)
    up.add_argument("--targets", required=True, help="NODE=IP:PORT,... node_exporter of each node")
    up.add_argument("--inventory", required=True)
    down = sub.add_parser("stop")
    down.add_argument("--dir", required=True)
    args = parser.parse_args(argv)
    (start if args.command == "start" else stop)(args)


if __name__ == "__main__":
    main()
