"""A3/A4-shaped sandbox cluster on one machine: podman nodes with systemd,
one network per VPC at the family's MTU, real SSH.  It is a SANDBOX: no GPU,
no RDMA, and Google's images are replaced by clearly labelled stand-ins.

Run it with Python 3 as root: python3 tests/sandbox/sandbox.py COMMAND ...

  sandbox.py up --name NAME [--family a3-mega] [--nodes 2] [--variant ubuntu|el|cos]
  sandbox.py down --name NAME | --all
  sandbox.py restart --name NAME --node HOST      (like a VM reboot)
  sandbox.py status --name NAME [--json]
  sandbox.py fault --name NAME --node HOST KIND [ARGS...]   (seed a GPU fault; KIND clear undoes them)
  sandbox.py images                               (build the images only)
  sandbox.py prune-images                         (remove cached images and caches)

State lives under build/sandbox/NAME/ (inventory.yml, ssh key, state.json).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sandboxlib import cluster, common, images, layout  # noqa: E402  pylint: disable=wrong-import-position


def _name(value):
    ok = value and value[0].isalpha() and len(value) <= 30 and all(c.isalnum() or c == "-" for c in value)
    if not ok or value != value.lower():
        raise argparse.ArgumentTypeError("%r: use lower-case letters, digits and '-', starting with a letter, "
                                         "at most 30 characters" % value)
    return value


def parse(argv):
    ap = argparse.ArgumentParser(prog="sandbox.py", description=__doc__.split("\n\n", 1)[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("up", help="build images (cached) and start a sandbox")
    p.add_argument("--name", required=True, type=_name)
    p.add_argument("--family", default=os.environ.get("FAMILY", "a3-mega"))
    p.add_argument("--nodes", type=int, default=int(os.environ.get("NODES", "2")))
    p.add_argument("--variant", default=os.environ.get("VARIANT", layout.DEFAULT_VARIANT),
                   help="ubuntu: Google's Ubuntu accelerator image (enp*, netplan, packaged driver, container "
                        "toolkit); el: its Rocky Linux one (enp*, NetworkManager); cos: Container-Optimized OS (eth*, "
                        "systemd-networkd, /var/lib/nvidia, read-only root, /etc reset at boot)")
    p = sub.add_parser("add-node", help="add one node to a running sandbox, as a VM added to a cluster "
                                        "(docs/add-nodes.md)")
    p.add_argument("--name", required=True, type=_name)
    p = sub.add_parser("down", help="remove a sandbox's nodes, networks and processes")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--name", type=_name)
    g.add_argument("--all", action="store_true", help="every sandbox, and the shared registry")
    p = sub.add_parser("restart", help="restart one node, like a VM reboot")
    p.add_argument("--name", required=True, type=_name)
    p.add_argument("--node", required=True)
    p = sub.add_parser("fault", help="seed a fault into a node's STAND-IN GPUs (see docs/sandbox.md)",
                       description="An unknown KIND gets the list of kinds; docs/sandbox.md explains each.")
    p.add_argument("--name", required=True, type=_name)
    p.add_argument("--node", required=True)
    p.add_argument("kind")
    p.add_argument("args", nargs="*")
    p = sub.add_parser("status", help="nodes, addresses and link MTUs")
    p.add_argument("--name", required=True, type=_name)
    p.add_argument("--json", action="store_true")
    sub.add_parser("images", help="build (or reuse) the node and stand-in images")
    sub.add_parser("prune-images", help="remove the cached images, registry storage and package cache "
                                        "(only when no sandbox is running)")
    return ap.parse_args(argv)


def _print_status(st):
    print("sandbox %s (%s, VPC MTU %s): SANDBOX, stand-ins instead of GPUs and Google images"
          % (st["name"], st["family"], st["vpc_mtu"]))
    for node in st["nodes"]:
        mtus = " ".join("%s=%s" % kv for kv in sorted(node["mtu"].items()) if kv[0] != "lo")
        print("  %-20s %-8s %-15s %s" % (node["name"], node["state"], node["ip"], mtus))
    print("  inventory: %s" % st["inventory"])
    for key in ("registry", "emulator"):
        if st.get(key):
            print("  %s: %s" % (key, st[key]))


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    try:
        _load_extras()
        if args.cmd == "up":
            plan = cluster.up(args.name, args.family, args.nodes, args.variant)
            print("sandbox %s is up (SANDBOX: %d %s-shaped %s-like nodes, stand-ins, no GPUs)"
                  % (args.name, len(plan["nodes"]), args.family, args.variant))
            print("inventory: %s" % cluster.inventory_file(args.name))
        elif args.cmd == "add-node":
            plan, node = cluster.add_node(args.name)
            print("%s added to sandbox %s (%s; now %d nodes)"
                  % (node["name"], args.name, node["nics"][0]["ip"], len(plan["nodes"])))
            print("inventory: %s" % cluster.inventory_file(args.name))
        elif args.cmd == "down":
            names = common.sandbox_names() if args.all else [args.name]
            for name in names:
                res = cluster.down(name)
                print("sandbox %s removed (%d containers, %d networks)" % (name, res["containers"], res["networks"]))
            for hook in cluster.AFTER_DOWN_ALL:
                hook(args.all)
            for entry in images.clean_leftovers():
                print("removed image-build leftover %s" % entry)
        elif args.cmd == "restart":
            node = cluster.restart(args.name, args.node)
            print("%s restarted (%s)" % (node["name"], node["nics"][0]["ip"]))
        elif args.cmd == "fault":
            print(cluster.fault(args.name, args.node, args.kind, args.args))
        elif args.cmd == "status":
            st = cluster.status(args.name)
            if args.json:
                print(json.dumps(st, indent=2))
            else:
                _print_status(st)
        elif args.cmd == "prune-images":
            for line in images.prune():
                print(line)
        elif args.cmd == "images":
            for variant in images.VARIANT_IMAGES:
                print(images.node_image(variant))
            for hook in cluster.IMAGE_HOOKS:
                hook()
    except common.SandboxError as exc:
        print("sandbox: error: %s" % exc, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("sandbox: interrupted", file=sys.stderr)
        return 130
    return 0


def _load_extras():
    """Registry, stand-ins and emulator plug into the life cycle when present."""
    for mod in ("services",):
        try:
            __import__("sandboxlib.%s" % mod)
        except ImportError as exc:
            if exc.name != "sandboxlib.%s" % mod:
                raise


if __name__ == "__main__":
    sys.exit(main())
