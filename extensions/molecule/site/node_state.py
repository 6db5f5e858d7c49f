"""Print what site.yml may change on a node, one line per item, sorted: every file and
link under the directories the roles write to (files by content), the package holds,
and the enabled units.  Run before site.yml and after teardown; the two must match."""

import hashlib
import os
import subprocess

ROOTS = ["/etc", "/usr/local", "/opt", "/root", "/var/lib/tcpx", "/var/lib/tcpxo", "/var/lib/gib"]
# Ansible's own working files, not the roles'
SKIP = ("/root/.ansible", "/root/.cache")
# the shadow tools' copies of the account files before their last change: creating and removing
# the MPI user puts the account files back, but not these
BACKUPS = ("/etc/passwd-", "/etc/shadow-", "/etc/group-", "/etc/gshadow-")


def files():
    for top in ROOTS:
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if not os.path.join(dirpath, d).startswith(SKIP)]
            for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                path = os.path.join(dirpath, name)
                if path in BACKUPS:
                    continue
                if os.path.islink(path):
                    yield "link %s -> %s" % (path, os.readlink(path))
                elif os.path.isfile(path):
                    with open(path, "rb") as fh:
                        yield "file %s %s" % (path, hashlib.sha256(fh.read()).hexdigest())


def command(argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, universal_newlines=True, check=False).stdout.splitlines()


lines = list(files())
lines += ["hold %s" % line.split()[0] for line in command(["dpkg-query", "-W", "-f=${Package} ${db:Status-Abbrev}\n"])
          if line.split()[1:] and line.split()[1].startswith("h")]
lines += ["enabled %s" % line.split()[0] for line in command(["systemctl", "list-unit-files", "--state=enabled",
                                                              "--no-legend", "--plain"]) if line.strip()]
print("\n".join(sorted(lines)))
