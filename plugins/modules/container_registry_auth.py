#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: container_registry_auth
short_description: Point the container engine at a credential helper for some registries
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Sets (or removes) the C(credHelpers) entries of a docker config file (C(~/.docker/config.json)) so that docker,
    and podman when its own auth file has no entry, ask C(docker-credential-<helper>) for the credentials of each
    registry in O(registries). Every other key of the file is kept.
  - No credential is written; the helper fetches one when the engine needs it. In diffs, stored credentials that
    the file already holds are shown as C(<redacted>).
  - The file is written atomically with mode C(0600), its directory created with mode C(0700).
options:
  path:
    description: The docker config file.
    type: path
    default: /root/.docker/config.json
  registries:
    description: Registry hosts (for example C(us-docker.pkg.dev)).
    type: list
    elements: str
    required: true
  helper:
    description: The helper's suffix, as in C(docker-credential-<helper>).
    type: str
    required: true
  state:
    description:
      - C(present) sets the entries; C(absent) removes those that name O(helper), and the file itself when nothing
        is left in it (the engine reads no file as an empty one).
    type: str
    choices: [present, absent]
    default: present
extends_documentation_fragment:
  - gpudirect.gcp.attributes
attributes:
  check_mode:
    support: full
    details: Reports the change and its diff; writes nothing.
  diff_mode:
    support: full
    details: The file before and after, stored credentials redacted.
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: Pull from Artifact Registry with the VM service account's tokens
  gpudirect.gcp.container_registry_auth:
    registries: [us-docker.pkg.dev]
    helper: gce-metadata
"""

RETURN = r"""
cred_helpers:
  description: The file's C(credHelpers) after the run.
  returned: success
  type: dict
  sample: {"us-docker.pkg.dev": "gce-metadata"}
"""

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import registry_auth
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def main():
    gm = GpuModule(dict(
        path=dict(type="path", default="/root/.docker/config.json"),
        registries=dict(type="list", elements="str", required=True),
        helper=dict(type="str", required=True),
        state=dict(type="str", choices=["present", "absent"], default="present"),
    ))
    p = gm.params
    bad = [r for r in p["registries"] if not r or "/" in r or r.strip() != r]
    if bad:
        gm.fail("container_registry_auth: registries are host[:port] names, got %s" % ", ".join(repr(b) for b in bad))
    text = ""
    if os.path.exists(p["path"]):
        try:
            with open(p["path"]) as fh:
                text = fh.read()
        except (IOError, OSError) as exc:
            gm.fail("container_registry_auth: cannot read %s: %s" % (p["path"], exc))
    try:
        before = registry_auth.parse(text, p["path"])
    except registry_auth.ConfigError as exc:
        gm.fail("container_registry_auth: %s" % exc)
    after = registry_auth.apply(before, p["registries"], p["helper"], p["state"])
    remove = p["state"] == "absent" and not after and os.path.exists(p["path"])
    changed = after != before or remove or (p["state"] == "present" and not os.path.exists(p["path"]))
    result = dict(changed=changed, cred_helpers=after.get("credHelpers", {}))
    if changed:
        result["diff"] = gm.diff(registry_auth.dump(registry_auth.redacted(before)) if text else "",
                                 "" if remove else registry_auth.dump(registry_auth.redacted(after)), p["path"])
    if remove and not gm.check_mode:
        try:
            os.unlink(p["path"])
        except OSError as exc:
            gm.fail("container_registry_auth: cannot remove %s: %s" % (p["path"], exc))
    elif changed and not gm.check_mode:
        error = gm.write_file(p["path"], registry_auth.dump(after), 0o600, dir_mode=0o700)
        if error:
            gm.fail("container_registry_auth: %s" % error)
    gm.exit(**result)


if __name__ == "__main__":
    main()
