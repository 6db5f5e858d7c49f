#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: package_hold
short_description: Hold installed packages at their version (dpkg selections or dnf versionlock)
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Expands each name or pattern in O(name) to the installed packages it matches (C(dpkg-query -W), C(rpm -qa)) and
    holds them, so that an upgrade does not replace them; or releases the hold.
  - On dpkg systems a hold is the selection C(hold) (C(dpkg --set-selections)); on RPM systems it is a
    C(dnf versionlock) entry, which needs the versionlock plugin of dnf.
  - A name or pattern that matches no installed package is returned in RV(not_installed), not held and not an error.
  - With O(record), holding adds the packages this run held to a record file, and releasing with O(state=unheld)
    and no O(name) releases exactly the recorded packages and removes the record, so that a teardown undoes the
    holds it placed and never one that was there before.
options:
  name:
    description:
      - Package names or shell patterns (C(nvidia-utils-*-server)), as dpkg-query and rpm take them.
      - Required unless O(state=unheld) with O(record).
    type: list
    elements: str
  record:
    description: A JSON file listing the packages this module held (see above).
    type: path
  state:
    description: V(held) holds the matched packages; V(unheld) releases them.
    type: str
    choices: [held, unheld]
    default: held
  manager:
    description: The package manager; V(auto) takes dpkg where C(dpkg-query) exists, else rpm.
    type: str
    choices: [auto, dpkg, rpm]
    default: auto
extends_documentation_fragment:
  - gpudirect.gcp.attributes
attributes:
  check_mode:
    support: full
    details: Queries the package database and reports which holds would change; changes nothing.
  diff_mode:
    support: full
    details: Each matched package's hold before and after.
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: Keep the NVIDIA driver at its version
  gpudirect.gcp.package_hold:
    name: [nvidia-utils-*-server, nvidia-fabricmanager-*]
"""

RETURN = r"""
manager:
  description: The package manager used.
  returned: success
  type: str
  sample: dpkg
matched:
  description: Each name or pattern and the installed packages it matches.
  returned: success
  type: dict
  sample: {"nvidia-utils-*-server": ["nvidia-utils-580-server"], "nvidia-fabricmanager-*": []}
not_installed:
  description: The names or patterns that match no installed package.
  returned: success
  type: list
  elements: str
  sample: ["nvidia-fabricmanager-*"]
held:
  description: The matched packages that are held after the run (in check mode, would be).
  returned: success
  type: list
  elements: str
  sample: ["nvidia-utils-580-server"]
changed_packages:
  description: The packages whose hold this run changed (in check mode, would change).
  returned: success
  type: list
  elements: str
  sample: ["nvidia-utils-580-server"]
recorded:
  description: The packages the record lists after the run (in check mode, would list); with O(record) only.
  returned: when record is set
  type: list
  elements: str
"""

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import package_hold as logic
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def _tool(gm, name):
    path = gm.which(name)
    if not path:
        gm.fail("package_hold: %s is not installed" % name)
    return path


def read_dpkg(gm, patterns):
    query = _tool(gm, "dpkg-query")
    matched, held = {}, {}
    for pattern in patterns:
        # rc 1 and a message on stderr when nothing matches: that is "not installed"
        _rc, out, _err = gm.run([query, "-W", "-f=" + logic.DPKG_FORMAT, pattern])
        found = logic.parse_dpkg_query(out)
        matched[pattern] = sorted(found)
        held.update(found)
    return matched, held


def read_rpm(gm, patterns):
    rpm = _tool(gm, "rpm")
    matched = {}
    for pattern in patterns:
        _rc, out, _err = gm.run([rpm, "-qa", "--qf", "%{NAME}\\n", pattern])
        matched[pattern] = logic.parse_rpm_names(out)
    names = sorted(set(n for found in matched.values() for n in found))
    held = {}
    if names:
        rc, out, err = gm.run([_tool(gm, "dnf"), "versionlock", "list"])
        if rc != 0:
            gm.fail("package_hold: dnf versionlock list failed (is the versionlock plugin installed?): %s"
                    % err.strip())
        locked = logic.locked_names(out, names)
        held = dict((n, n in locked) for n in names)
    return matched, held


def apply_dpkg(gm, names, state):
    selection = "hold" if state == "held" else "install"
    data = "".join("%s %s\n" % (n, selection) for n in names)
    rc, _out, err = gm.module.run_command([_tool(gm, "dpkg"), "--set-selections"], data=data)
    if rc != 0:
        gm.fail("package_hold: dpkg --set-selections failed: %s" % err.strip())


def apply_rpm(gm, names, state):
    rc, _out, err = gm.run([_tool(gm, "dnf"), "versionlock", "add" if state == "held" else "delete"] + names)
    if rc != 0:
        gm.fail("package_hold: dnf versionlock failed: %s" % err.strip())


def _read_record(gm, path):
    if not path or not os.path.exists(path):
        return []
    try:
        with open(path) as fh:
            return logic.parse_record(fh.read(), path)
    except (IOError, OSError, ValueError) as exc:
        gm.fail("package_hold: %s" % exc)


def main():
    gm = GpuModule(dict(
        name=dict(type="list", elements="str"),
        state=dict(type="str", choices=["held", "unheld"], default="held"),
        manager=dict(type="str", choices=["auto", "dpkg", "rpm"], default="auto"),
        record=dict(type="path"),
    ), required_if=[("state", "held", ("name",))])
    p = gm.params
    recorded = _read_record(gm, p["record"])
    if p["name"] is None and not p["record"]:
        gm.fail("package_hold: name is required unless state is unheld with a record")
    # releasing from the record: exactly the packages it lists
    names = p["name"] if p["name"] is not None else recorded
    bad = logic.check_patterns(names)
    if bad:
        gm.fail("package_hold: %s" % bad)
    manager = p["manager"]
    if manager == "auto":
        manager = "dpkg" if gm.which("dpkg-query") else ("rpm" if gm.which("rpm") else None)
        # an empty record needs no package manager (a teardown on a node gpu_host held nothing on)
        if manager is None and names:
            gm.fail("package_hold: neither dpkg-query nor rpm is installed")
    matched, held = (read_dpkg if manager == "dpkg" else read_rpm)(gm, names) if names else ({}, {})
    change = logic.plan(matched, held, p["state"])
    after = dict(held, **dict((n, p["state"] == "held") for n in change))
    result = dict(changed=bool(change), manager=manager, matched=matched, changed_packages=change,
                  not_installed=[pattern for pattern in names if not matched[pattern]],
                  held=sorted(n for n in after if after[n]))
    if change:
        result["diff"] = dict(before=logic.render(held), after=logic.render(after),
                              before_header="package holds", after_header="package holds")
    record_changed = False
    if p["record"]:
        result["recorded"] = logic.record_after(recorded, change, p["state"])
        exists = os.path.exists(p["record"])
        # the record goes with the last hold it lists; an empty record is never written
        record_changed = (result["recorded"] != recorded) or (exists and not result["recorded"])
        result["changed"] = result["changed"] or record_changed
    if change and not gm.check_mode:
        (apply_dpkg if manager == "dpkg" else apply_rpm)(gm, change, p["state"])
    if record_changed and not gm.check_mode:
        if result["recorded"]:
            error = gm.write_file(p["record"], logic.dump_record(result["recorded"]), 0o644)
            if error:
                gm.fail("package_hold: %s" % error)
        elif os.path.exists(p["record"]):
            os.unlink(p["record"])
    gm.exit(**result)


if __name__ == "__main__":
    main()
