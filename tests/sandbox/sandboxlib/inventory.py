"""The static inventory of a sandbox: the host vars of the gce_gpu plugin, for real nodes."""

import json
import os

from . import common


def _group(value):
    return "".join(c if c.isalnum() else "_" for c in value)


def known_hosts_file(name):
    return os.path.join(common.state_dir(name), "known_hosts")


def ssh_common_args(name):
    # Host keys are checked as on a real cluster: the sandbox made each node's host key and
    # wrote them to its own known_hosts; the sandbox key is the only identity offered.
    return ("-o StrictHostKeyChecking=yes -o UserKnownHostsFile=%s -o IdentitiesOnly=yes "
            "-o LogLevel=ERROR -o ConnectTimeout=10" % known_hosts_file(name))


def gce_nics(plan, node):
    out = []
    for net, nic in zip(plan["networks"], node["nics"]):
        out.append({
            "name": nic["name"],
            "nic_type": net["nic_type"],
            "network": net["name"],
            "subnetwork": net["name"],
            "ip": nic["ip"],
            "public_ip": None,
            "mac": nic["mac"],
            "mtu": net["mtu"],
        })
    return out


def instance_id(plan, node):
    return str(4200000000000 + plan["slot"] * 1000 + node["index"])


def host_vars(plan, node, key_file):
    """What the gce_gpu plugin makes of the emulator's instance for this node (host_vars: minimal), plus SSH
    settings."""
    nics = gce_nics(plan, node)
    gpu = [nic for nic, net in zip(nics, plan["networks"]) if net["gpu"]]
    return {
        "ansible_host": nics[0]["ip"],
        "ansible_user": "root",
        "ansible_ssh_private_key_file": key_file,
        "ansible_ssh_common_args": ssh_common_args(plan["name"]),
        "ansible_python_interpreter": "/usr/bin/python3",
        "gpu_family": plan["family"],
        "gpu_transport": plan["transport"],
        "gce_project": plan["project"],
        "gce_zone": plan["zone"],
        "gce_name": node["name"],
        "gce_status": "RUNNING",
        "gce_topology": dict(node["topology"]),
        "gce_nics": nics,
        "gpu_nics": gpu,
    }


STANDIN_VARS = os.path.join(common.ROOT, "inventories", "sandbox", "group_vars", "all", "standins.yml")


def standin_vars():
    """The sandbox's stand-in settings (one file, shared with inventories/sandbox/)."""
    try:
        import yaml
        with open(STANDIN_VARS) as fh:
            return yaml.safe_load(fh) or {}
    except (ImportError, OSError):
        return {}


def render(plan, key_file):
    hosts = dict((n["name"], host_vars(plan, n, key_file)) for n in plan["nodes"])
    names = dict((n, {}) for n in hosts)
    groups = {
        "gpu_nodes": {"hosts": hosts, "vars": standin_vars()},
        "family_%s" % _group(plan["family"]): {"hosts": dict(names)},
        "transport_%s" % _group(plan["transport"]): {"hosts": dict(names)},
        "zone_%s" % _group(plan["zone"]): {"hosts": dict(names)},
        "project_%s" % _group(plan["project"]): {"hosts": dict(names)},
    }
    # the plugin's placement groups
    for node in plan["nodes"]:
        topo = node["topology"]
        for group in ("block_%s" % _group(topo["block"]),
                      "subblock_%s_%s" % (_group(topo["block"]), _group(topo["subblock"]))):
            groups.setdefault(group, {"hosts": {}})["hosts"][node["name"]] = {}
    return {"all": {"children": groups}}


def write(plan, key_file, path):
    data = render(plan, key_file)
    header = ("# Sandbox %s (%s, %d nodes): written by tests/sandbox/sandbox.py; do not edit.\n"
              % (plan["name"], plan["family"], len(plan["nodes"])))
    try:
        import yaml
        body = yaml.safe_dump(data, default_flow_style=False, sort_keys=False)
    except ImportError:  # JSON is YAML too
        body = json.dumps(data, indent=2)
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(header + body)
    os.replace(tmp, path)
    return path
