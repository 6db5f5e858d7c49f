#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: rxdm_container
short_description: Remove an RxDM container left in the node's container engine
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Removes the named container (stopping it first) when the engine has one; a node without it is left alone.
  - The RxDM systemd unit runs the container; this module is for the teardown, after the unit has stopped.
  - Works with docker and podman alike.
options:
  engine:
    description: Path of the container engine command.
    type: path
    required: true
  name:
    description: The container's name.
    type: str
    required: true
  state:
    description: Only C(absent) is supported; the unit, not this module, starts RxDM.
    type: str
    choices: [absent]
    default: absent
extends_documentation_fragment:
  - gpudirect.gcp.attributes
attributes:
  check_mode:
    support: full
    details: Reports whether the container would be removed; removes nothing.
  diff_mode:
    support: full
    details: Whether the container exists before and after.
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: Remove a left-over RxDM container
  gpudirect.gcp.rxdm_container:
    engine: /usr/bin/docker
    name: receive-datapath-manager
    state: absent
"""

RETURN = r"""
container_id:
  description: ID of the container that was (or in check mode would be) removed; null when there was none.
  returned: success
  type: str
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils.rxdm import rxdm_engine
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def main():
    gm = GpuModule(dict(engine=dict(type="path", required=True), name=dict(type="str", required=True),
                        state=dict(type="str", default="absent", choices=["absent"])))
    engine, name = gm.params["engine"], gm.params["name"]
    found = rxdm_engine.container_id(gm.run, engine, name)
    result = dict(container_id=found, changed=found is not None)
    if found is not None:
        result["diff"] = dict(before="container %s: present\n" % name, after="container %s: absent\n" % name)
        if not gm.check_mode:
            try:
                rxdm_engine.remove_container(gm.run, engine, name)
            except rxdm_engine.RxdmEngineError as exc:
                gm.fail("rxdm_container: %s" % exc)
    gm.exit(**result)


if __name__ == "__main__":
    main()
