"""The metadata server and Artifact Registry a sandbox's nodes reach.

One tests/emulator/guest_services.py process per sandbox listens on the
primary network's gateway address: the metadata server's token endpoint on
port 80 (nodes know it as metadata.google.internal) and, on port 5000, a front
that serves the shared local registry only to requests that carry a live
token (nodes know it as gpudirect-registry.sandbox:5000), as Artifact Registry
refuses anonymous pulls.  The metadata server also answers each node's
physical_host and physical_host_topology attributes, from the plan's placement,
telling the nodes apart by the address they call from (their nic0 address).
"""

import json
import os
import sys

from . import common, layout, registry

SERVICES = os.path.join(common.ROOT, "tests", "emulator", "guest_services.py")
METADATA_PORT = 80
METADATA_ALIAS = "metadata.google.internal"


def _paths(name):
    d = common.state_dir(name)
    return {"pid": os.path.join(d, "guest-services.pid"), "log": os.path.join(d, "guest-services.log"),
            "ready": os.path.join(d, "guest-services.json"), "placement": os.path.join(d, "placement.json")}


def placement(plan):
    """{nic0 address: the node's metadata placement attributes}, as the metadata server serves them."""
    out = {}
    for node in plan["nodes"]:
        topo = node.get("topology")
        if not topo:
            continue
        out[node["nics"][0]["ip"]] = {"physical_host": layout.physical_host(topo),
                                      "physical_host_topology": layout.physical_host_topology(topo)}
    return out


def start(plan):
    p = _paths(plan["name"])
    stop(plan["name"])
    with open(p["placement"], "w") as fh:
        json.dump(placement(plan), fh, indent=1, sort_keys=True)
    argv = [sys.executable, SERVICES, "--upstream", registry.host_address(), "--host", plan["registry_host"],
            "--metadata-port", str(METADATA_PORT), "--registry-port", str(registry.NODE_PORT),
            "--topology-file", p["placement"], "--ready-file", p["ready"]]
    proc = common.start_script(argv, p["pid"], p["log"], p["ready"], "metadata/registry stand-in", timeout_s=20)
    with open(p["ready"]) as fh:
        ready = json.load(fh)
    plan["guest_services"] = dict(ready, pid=proc.pid)
    return ready


def stop(name):
    p = _paths(name)
    return common.stop_script(p["pid"], SERVICES)
