#!/usr/bin/env python
"""Write the machine-family choices of the roles' argument specs from the family table.

Every `choices: [...]` line in roles/*/meta/argument_specs.yml that lists a family of
plugins/module_utils/families.py is rewritten to list exactly the table's families, so a
family added to (or dropped from) the table reaches every role that validates one.
Only those lines change.

`--check` writes nothing and exits 1 when a file is out of date.
"""

import argparse
import glob
import importlib.util
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAMILIES_PY = os.path.join(ROOT, "plugins", "module_utils", "families.py")
SPECS = os.path.join(ROOT, "roles", "*", "meta", "argument_specs.yml")
CHOICES = re.compile(r"^(?P<indent>\s*)choices:\s*\[(?P<items>[^\]]*)\](?P<rest>.*)$")


def family_names():
    """The table's family names, from its file (it imports nothing of Ansible or the collection)."""
    spec = importlib.util.spec_from_file_location("gpudirect_families", FAMILIES_PY)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.family_names()


def render(text, names):
    """text with every family choices line listing names; the rest untouched."""
    out = []
    for line in text.splitlines(True):
        match = CHOICES.match(line.rstrip("\n"))
        if match:
            items = [i.strip().strip("'\"") for i in match.group("items").split(",") if i.strip()]
            if set(items) & set(names):
                end = "\n" if line.endswith("\n") else ""
                line = "%schoices: [%s]%s%s" % (match.group("indent"), ", ".join(names), match.group("rest"), end)
        out.append(line)
    return "".join(out)


def sync(pairs, check, command):
    """Write each (path, text) whose file differs; with check, write nothing and name them.

    Returns the exit status: 1 when check found a stale file, else 0.
    """
    stale = []
    for path, text in pairs:
        current = None
        if os.path.exists(path):
            with open(path) as fh:
                current = fh.read()
        if current == text:
            continue
        if check:
            stale.append(os.path.relpath(path, ROOT))
        else:
            with open(path, "w") as fh:
                fh.write(text)
            print("wrote %s" % os.path.relpath(path, ROOT))
    if stale:
        print("out of date (run %s): %s" % (command, ", ".join(stale)))
        return 1
    return 0


def targets():
    names = family_names()
    for path in sorted(glob.glob(SPECS)):
        with open(path) as fh:
            yield path, render(fh.read(), names)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail when a file is out of date")
    args = parser.parse_args()
    return sync(targets(), args.check, "scripts/gen_family_choices.py")


if __name__ == "__main__":
    sys.exit(main())
