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
options:
  name:
    description: Package names or shell patterns (C(nvidia-utils-*-server)), as dpkg-query and rpm take them.
    type: list
    elements: str
    required: true
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
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils import package_hold as logic
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


def main():
    gm = GpuModule(dict(
        name=dict(type="list", elements="str", required=True),
        state=dict(type="str", choices=["held", "unheld"], default="held"),
        manager=dict(type="str", choices=["auto", "dpkg", "rpm"], default="auto"),
    ))
    p = gm.params
    bad = logic.check_patterns(p["name"])
    if bad:
        gm.fail("package_hold: %s" % bad)
    manager = p["manager"]
    if manager == "auto":
        manager = "dpkg" if gm.which("dpkg-query") else ("rpm" if gm.which("rpm") else None)
        if manager is None:
            gm.fail("package_hold: neither dpkg-query nor rpm is installed")
    matched, held = (read_dpkg if manager == "dpkg" else read_rpm)(gm, p["name"])
    change = logic.plan(matched, held, p["state"])
    after = dict(held, **dict((n, p["state"] == "held") for n in change))
    result = dict(changed=bool(change), manager=manager, matched=matched, changed_packages=change,
                  not_installed=[pattern for pattern in p["name"] if not matched[pattern]],
                  held=sorted(n for n in after if after[n]))
    if change:
        result["diff"] = dict(before=logic.render(held), after=logic.render(after),
                              before_header="package holds", after_header="package holds")
    if change and not gm.check_mode:
        (apply_dpkg if manager == "dpkg" else apply_rpm)(gm, change, p["state"])
    gm.exit(**result)


if __name__ == "__main__":
    main()
