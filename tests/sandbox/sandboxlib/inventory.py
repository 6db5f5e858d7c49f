"""The static inventory of a sandbox: the host vars of the gce_gpu plugin, for real nodes."""

import json
import os

from . import common, instances


def known_hosts_file(name):
    return os.path.join(common.state_dir(name), "known_hosts")


def ssh_common_args(name):
    # Host keys are checked as on a real cluster: the sandbox made each node's host key and
    # wrote them to its own known_hosts; the sandbox key is the only identity offered.
    return ("-o StrictHostKeyChecking=yes -o UserKnownHostsFile=%s -o IdentitiesOnly=yes "
            "-o LogLevel=ERROR -o ConnectTimeout=10" % known_hosts_file(name))


def ssh_vars(plan, key_file):
    return {
        "ansible_user": common.SSH_USER,
        "ansible_ssh_private_key_file": key_file,
        "ansible_ssh_common_args": ssh_common_args(plan["name"]),
        "ansible_python_interpreter": "/usr/bin/python3",
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
    hosts, groups = {}, {}
    for node in plan["nodes"]:
        # the gce_gpu plugin's host vars for the emulator's instance of this node (host_vars: minimal)
        hvars, names = instances.inventory_host(plan, node)
        hvars.update(ssh_vars(plan, key_file))
        hosts[node["name"]] = hvars
        # the plugin's default groups (family, transport, zone, project, block, sub-block)
        for group in names:
            groups.setdefault(group, {"hosts": {}})["hosts"][node["name"]] = {}
    group_vars = standin_vars()
    # preflight reads the firewall rules from the sandbox's Compute API emulator, or not at all
    from . import emulator
    api = emulator.api_settings(plan)
    group_vars.update({"preflight_gce_api": api} if api else {"preflight_check_firewalls": False})
    return {"all": {"children": dict({"gpu_nodes": {"hosts": hosts, "vars": group_vars}}, **groups)}}


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
