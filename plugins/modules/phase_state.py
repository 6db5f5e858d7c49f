#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: phase_state
short_description: Tell in one call whether a configuration phase would change anything on a node
version_added: 1.1.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - A configuration phase that finished on a node records, with O(state=record), a digest of its inputs, the state
    of the paths it manages or sets at run time and of its systemd units, and the result it reported.
  - With O(state=check) a later run compares the node with that record. The same digest and the same state give
    RV(converged) and the recorded result, since the phase's full path would change nothing there. Anything else gives
    the differences, one line each, and the phase takes its full path. Outside check mode the check also removes
    such a record, which is not reported as a change, so that a full run that then fails leaves none and the next
    run takes the full path again rather than trusting the last good run.
  - Files are compared by content, mode and owner, directories by their entries and the sizes and times of their
    files; values under C(/proc/sys) and C(/sys) are files too, so a runtime setting that was reverted shows as a
    difference.
  - The action plugin works out O(digest) on the controller from O(inputs_from), O(inputs) and the code of the
    calling role and of the collection's modules, so a changed option, family table entry or collection release
    never passes for converged. The record holds that digest, never the inputs themselves.
options:
  phase:
    description: The phase's name (lower-case letters, digits and C(_)); it names the record (C(<directory>/<phase>.json)).
    type: str
    required: true
  state:
    description:
      - V(check) compares the node with the record; V(record) writes the record of the run that just finished;
        V(absent) removes the record (a teardown).
    type: str
    choices: [check, record, absent]
    default: check
  inputs_from:
    description:
      - Prefixes of the variables that are the phase's inputs (V(gpu_host_)). The action plugin resolves every
        variable whose name starts with one, except those ending in C(_result), and digests them.
    type: list
    elements: str
    default: []
  inputs_exclude:
    description: Variables that match O(inputs_from) but are the phase's outputs, such as the facts it sets.
    type: list
    elements: str
    default: []
  inputs:
    description: Further inputs to digest, such as the shared facts the phase reads.
    type: dict
    default: {}
  digest:
    description:
      - Set by the action plugin from O(inputs_from), O(inputs) and the code. A record passes the RV(digest) its
        check returned, so facts the phase set in between do not count as inputs.
    type: str
  paths:
    description: With O(state=record), the paths whose state the record keeps.
    type: list
    elements: path
    default: []
  units:
    description: With O(state=record), the systemd units whose load, active and enablement states the record keeps.
    type: list
    elements: str
    default: []
  result:
    description: With O(state=record), the phase's result, returned by a later check that finds the node converged.
    type: dict
    default: {}
  directory:
    description: Where the records are kept (root only).
    type: path
    default: /var/lib/gpudirect/state
extends_documentation_fragment:
  - gpudirect.gcp.attributes
attributes:
  check_mode:
    support: full
    details: V(check) only reads. V(record) reports whether the record would change and writes nothing.
  diff_mode:
    support: full
    details: The record before and after, with O(state=record).
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: Compare the node with the state the last full run left
  gpudirect.gcp.phase_state:
    phase: gpu_host
    inputs_from: [gpu_host_]
  register: _state

- name: Record what the full run left
  gpudirect.gcp.phase_state:
    phase: gpu_host
    state: record
    digest: "{{ _state.digest }}"
    paths: [/etc/sysctl.d/90-gpudirect.conf, /proc/sys/net/core/optmem_max]
    units: [nvidia-persistenced.service]
    result: "{{ gpu_host_result }}"
  when: not _state.converged
"""

RETURN = r"""
converged:
  description: Whether the node is as the recorded run left it, with the same inputs (V(state=check)).
  returned: success
  type: bool
  sample: true
differences:
  description: Why the node is not converged, one line each (V(state=check)).
  returned: success
  type: list
  elements: str
  sample: ["/proc/sys/net/core/optmem_max: changed"]
result:
  description: The result the recorded run reported, when RV(converged).
  returned: success
  type: dict
digest:
  description: The digest the check compared (V(state=check)), for the record of the same run.
  returned: success
  type: str
recorded_at:
  description: When the record was written (UTC, ISO 8601), when there is one.
  returned: success
  type: str
  sample: "2026-11-27T10:31:30Z"
"""

import os
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import phase_state as logic
from ansible_collections.gpudirect.gcp.plugins.module_utils.common import systemd_show
from ansible_collections.gpudirect.gcp.plugins.module_utils.common.files import read_or_none
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def unit_states(gm, units):
    if not units:
        return {}
    systemctl = gm.which("systemctl")
    if not systemctl:
        return dict((unit, "no systemctl") for unit in units)
    _rc, out, _err = gm.run(systemd_show.show_argv(systemctl, units, logic.UNIT_PROPERTIES))
    return logic.parse_unit_states(units, out)


def discard(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def remove(gm, path):
    exists = os.path.lexists(path)
    result = dict(changed=exists, converged=False, differences=[], result={})
    if gm.diff_mode:
        result["diff"] = gm.diff(read_or_none(path) if exists else "", "", path)
    if exists and not gm.check_mode:
        try:
            os.unlink(path)
        except OSError as exc:
            gm.fail("phase_state: cannot remove %s: %s" % (path, exc))
    gm.exit(**result)


def main():
    gm = GpuModule(dict(
        phase=dict(type="str", required=True),
        state=dict(type="str", choices=["check", "record", "absent"], default="check"),
        inputs_from=dict(type="list", elements="str", default=[]),
        inputs_exclude=dict(type="list", elements="str", default=[]),
        inputs=dict(type="dict", default={}),
        digest=dict(type="str"),
        paths=dict(type="list", elements="path", default=[]),
        units=dict(type="list", elements="str", default=[]),
        result=dict(type="dict", default={}),
        directory=dict(type="path", default="/var/lib/gpudirect/state"),
    ))
    p = gm.params
    if not logic.PHASE_NAME.match(p["phase"]):
        gm.fail("phase_state: phase: %r is not a phase name (lower-case letters, digits and _)" % p["phase"])
    path = logic.record_path(p["directory"], p["phase"])
    if p["state"] == "absent":
        remove(gm, path)
    if not p["digest"]:
        gm.fail("phase_state: digest: not set; call the module through its action plugin (gpudirect.gcp.phase_state)")
    text = read_or_none(path)

    if p["state"] == "check":
        record, why = logic.load_record(text, p["phase"])
        if record is None:
            gm.exit(changed=False, converged=False, differences=[why], result={}, digest=p["digest"])
        paths_now = dict((item, logic.fingerprint(item)) for item in record["paths"])
        found = logic.differences(record, p["digest"], paths_now, unit_states(gm, sorted(record["units"])))
        if found and not gm.check_mode:
            # the record no longer describes the node: without it, a full run that fails leaves none,
            # and the next run takes the full path again instead of trusting the last good one
            discard(path)
        gm.exit(changed=False, converged=not found, differences=found,
                result=(record.get("result") or {}) if not found else {},
                recorded_at=record.get("recorded_at", ""), digest=p["digest"])

    record = logic.build_record(p["phase"], p["digest"],
                                dict((item, logic.fingerprint(item)) for item in p["paths"]),
                                unit_states(gm, p["units"]), p["result"])
    changed = not logic.same_record(text, record)
    record["recorded_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    result = dict(changed=changed, converged=True, differences=[], result=p["result"],
                  recorded_at=record["recorded_at"])
    if gm.diff_mode:
        result["diff"] = gm.diff(text, logic.dump_record(record) if changed else text, path)
    if changed and not gm.check_mode:
        error = gm.write_file(path, logic.dump_record(record), 0o600, dir_mode=0o700)
        if error:
            gm.fail("phase_state: %s" % error)
    gm.exit(**result)


if __name__ == "__main__":
    main()
