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
import sys

from . import common, registry

SERVICES = os.path.join(common.ROOT, "tests", "emulator", "guest_services.py")
METADATA_PORT = 80
METADATA_ALIAS = "metadata.google.internal"


def _paths(name):
    d = common.state_dir(name)
    return {"pid": os.path.join(d, "guest-services.pid"), "log": os.path.join(d, "guest-services.log"),
            "ready": os.path.join(d, "guest-services.json")}


def start(plan):
    p = _paths(plan["name"])
    stop(plan["name"])
    argv = [sys.executable, SERVICES, "--upstream", registry.host_address(), "--host", plan["registry_host"],
            "--metadata-port", str(METADATA_PORT), "--registry-port", str(registry.NODE_PORT),
            "--ready-file", p["ready"]]
    proc = common.start_script(argv, p["pid"], p["log"], p["ready"], "metadata/registry stand-in", timeout_s=20)
    with open(p["ready"]) as fh:
        ready = json.load(fh)
    plan["guest_services"] = dict(ready, pid=proc.pid)
    return ready


def stop(name):
    p = _paths(name)
    return common.stop_script(p["pid"], SERVICES)
