"""The metadata server and Artifact Registry a sandbox's nodes reach.

One tests/emulator/guest_services.py process per sandbox listens on the
primary network's gateway address: the metadata server's token endpoint on
port 80 (nodes know it as metadata.google.internal) and, on port 5000, a front
that serves the shared local registry only to requests that carry a live
token (nodes know it as gpudirect-registry.sandbox:5000), as Artifact Registry
refuses anonymous pulls.
"""

import json
import os
import subprocess
import sys
import time

from . import common, registry

SERVICES = os.path.join(common.ROOT, "tests", "emulator", "guest_services.py")
METADATA_PORT = 80
METADATA_ALIAS = "metadata.google.internal"


def _paths(name):
    d = common.state_dir(name)
    return {"pid": os.path.join(d, "guest-services.pid"), "log": os.path.join(d, "guest-services.log"),
            "ready": os.path.join(d, "guest-services.json")}


def _alive(pid_file):
    try:
        with open(pid_file) as fh:
            pid = int(fh.read().strip())
        with open("/proc/%d/cmdline" % pid, "rb") as fh:
            cmd = fh.read()
    except (OSError, ValueError):
        return None
    return pid if SERVICES.encode() in cmd else None


def start(plan):
    p = _paths(plan["name"])
    stop(plan["name"])
    for key in ("ready",):
        if os.path.exists(p[key]):
            os.unlink(p[key])
    argv = [sys.executable, SERVICES, "--upstream", registry.host_address(), "--host", plan["registry_host"],
            "--metadata-port", str(METADATA_PORT), "--registry-port", str(registry.NODE_PORT),
            "--ready-file", p["ready"]]
    with open(p["log"], "ab") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
    with open(p["pid"], "w") as fh:
        fh.write(str(proc.pid))
    deadline = time.time() + 20
    while time.time() < deadline and not os.path.exists(p["ready"]):
        if proc.poll() is not None:
            with open(p["log"], "rb") as fh:
                tail = fh.read().decode("utf-8", "replace").strip().splitlines()[-1:]
            raise common.SandboxError("metadata/registry stand-in did not start: %s" % (tail[0] if tail else "exit"))
        time.sleep(0.1)
    with open(p["ready"]) as fh:
        ready = json.load(fh)
    plan["guest_services"] = dict(ready, pid=proc.pid)
    return ready


def stop(name):
    p = _paths(name)
    pid = _alive(p["pid"])
    if pid:
        common.terminate(pid)
    if os.path.exists(p["pid"]):
        os.unlink(p["pid"])
    return bool(pid)
