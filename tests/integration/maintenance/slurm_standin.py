# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""sinfo and scontrol for the maintenance playbook's test: one JSON file is the cluster.

    {"nodes": {NAME: {"state": "idle", "user": "", "reason": ""}}, "reservations": ["scontrol -o line", ...],
     "calls": [argv, ...]}

Called as sinfo (-h -N -n NODE -o "%T %u %E") or scontrol (update nodename=N state=drain|resume [reason=R];
-o show reservation), by the name it is linked under; the file is GPUDIRECT_SLURM_STATE. Every call that
changes a node is logged in calls. A lock keeps the nodes' parallel calls apart."""

import fcntl
import json
import os
import sys


def main(argv):
    path = os.environ["GPUDIRECT_SLURM_STATE"]
    # the command it stands in for, as the test's wrapper names it: slurm_standin.py sinfo|scontrol ARGS...
    name = argv[1]
    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with open(path) as fh:
            state = json.load(fh)
        args = argv[2:]
        if name == "sinfo":
            node = state["nodes"].get(args[args.index("-n") + 1])
            if node:
                print("%s %s %s" % (node["state"], node.get("user") or "(null)", node.get("reason") or "none"))
            return 0
        if args[:3] == ["-o", "show", "reservation"]:
            print("\n".join(state.get("reservations") or []) or "No reservations in the system")
            return 0
        if args and args[0] == "update":
            fields = dict(a.split("=", 1) for a in args[1:])
            node = state["nodes"][fields["nodename"]]
            if fields["state"] == "drain":
                node.update(state="drained", user="root", reason=fields["reason"])
            else:
                node.update(state="idle", user="", reason="")
            state.setdefault("calls", []).append(args)
            with open(path, "w") as fh:
                json.dump(state, fh)
            return 0
        print("slurm stand-in: unexpected %s %s" % (name, " ".join(args)), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
