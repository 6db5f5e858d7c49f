"""The Compute API emulator for a running sandbox.

`up` describes the real nodes as Compute API instances of the family's
machine type (their real addresses and MACs, one VPC per NIC at the family
MTU), starts tests/emulator/compute_api.py on that fixture, and writes
build/sandbox/NAME/gce_gpu.yml, a gpudirect.gcp.gce_gpu plugin config for it.
"""

import json
import os
import sys

from . import common, instances, inventory

EMULATOR = os.path.join(common.ROOT, "tests", "emulator", "compute_api.py")
TOKEN = "sandbox-token-not-a-secret"
# the Cloud Storage bucket reports can be uploaded to (gpudirect_report_bucket)
REPORT_BUCKET = "gpudirect-sandbox-reports"


def available():
    return os.path.isfile(EMULATOR)


def _paths(name):
    d = common.state_dir(name)
    return {"fixture": os.path.join(d, "emulator-fixture.json"), "url": os.path.join(d, "emulator.url"),
            "pid": os.path.join(d, "emulator.pid"), "log": os.path.join(d, "emulator.log"),
            "config": os.path.join(d, "gce_gpu.yml")}


def fixture(plan):
    reg, project = instances.region(plan["zone"]), plan["project"]
    servers = [instances.instance(plan, node) for node in plan["nodes"]]
    networks = dict((n["name"], {"name": n["name"], "mtu": n["mtu"]}) for n in plan["networks"])
    subnets = dict(("%s/%s" % (reg, n["name"]), {
        "name": n["name"], "region": reg, "ipCidrRange": n["subnet"], "gatewayAddress": n["gateway"],
        "network": "projects/%s/global/networks/%s" % (project, n["name"])}) for n in plan["networks"])
    # what a cluster's VPCs need and Google's docs create: ingress from the network's own subnet
    # (one a network: the GPU NICs of A4X Max share one)
    firewalls = list(dict((n["name"], {
        "name": "%s-internal" % n["name"], "network": n["name"], "sourceRanges": [n["subnet"]],
        "allowed": [{"IPProtocol": "icmp"}, {"IPProtocol": "tcp"}, {"IPProtocol": "udp"}]})
        for n in plan["networks"]).values())
    return {"projects": {project: {"instances": servers, "networks": networks, "subnetworks": subnets,
                                   "firewalls": firewalls}},
            "buckets": {REPORT_BUCKET: {}}}


def api_settings(plan):
    """preflight_gce_api for this sandbox: its emulator, with the sandbox's token."""
    url = (plan.get("emulator") or {}).get("url")
    return {"api_endpoint": url, "auth_kind": "accesstoken", "access_token": TOKEN} if url else None


def plugin_config(plan, url, key_file):
    def lit(value):
        return "'%s'" % value
    cfg = {
        "plugin": "gpudirect.gcp.gce_gpu",
        "api_endpoint": url,
        "auth_kind": "accesstoken",
        "access_token": TOKEN,
        "projects": [plan["project"]],
        "groups": {"gpu_nodes": "true"},
        "compose": {
            "ansible_user": lit(common.SSH_USER),
            "ansible_ssh_private_key_file": lit(key_file),
            "ansible_ssh_common_args": lit(inventory.ssh_common_args(plan["name"])),
            "ansible_python_interpreter": lit("/usr/bin/python3"),
            "preflight_gce_api": json.dumps({"api_endpoint": url, "auth_kind": "accesstoken", "access_token": TOKEN}),
        },
    }
    head = ("# Sandbox %s: the gce_gpu inventory plugin pointed at the Compute API emulator that\n"
            "# serves this sandbox's nodes (SANDBOX, not Google Cloud).  Written by tests/sandbox/sandbox.py.\n"
            % plan["name"])
    return head + json.dumps(cfg, indent=2) + "\n"


def start(plan):
    if not available():
        return None
    from . import cluster
    p = _paths(plan["name"])
    with open(p["fixture"], "w") as fh:
        json.dump(fixture(plan), fh, indent=2)
    stop(plan["name"])
    proc = common.start_script([sys.executable, EMULATOR, "--fixture", p["fixture"], "--host", "127.0.0.1",
                                "--port", "0", "--ready-file", p["url"]],
                               p["pid"], p["log"], p["url"], "Compute API emulator")
    with open(p["url"]) as fh:
        url = fh.read().strip()
    with open(p["config"], "w") as fh:
        fh.write(plugin_config(plan, url, cluster.key_file(plan["name"])))
    plan["emulator"] = {"url": url, "pid": proc.pid, "plugin_config": p["config"]}
    return url


def stop(name):
    p = _paths(name)
    return common.stop_script(p["pid"], EMULATOR, p["url"])
