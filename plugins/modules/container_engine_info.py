#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: container_engine_info
short_description: Find the node's container engine (docker or podman)
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Looks for C(docker), then C(podman) (or only the one asked for) in the node's PATH and reports its path,
    whether it is podman (also when C(docker) is podman's compatibility command) and the systemd unit a
    service that runs containers must start after.
  - Changes nothing.
options:
  engine:
    description: Which engine to use; C(auto) prefers docker, as Google's GPU images ship it.
    type: str
    choices: [auto, docker, podman]
    default: auto
extends_documentation_fragment:
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
"""

EXAMPLES = r"""
- name: Find the container engine
  gpudirect.gcp.container_engine_info:
  register: engine

- name: Use podman
  gpudirect.gcp.container_engine_info:
    engine: podman
"""

RETURN = r"""
name:
  description: C(docker) or C(podman), the command name found.
  returned: success
  type: str
  sample: docker
path:
  description: Absolute path of the engine command.
  returned: success
  type: str
  sample: /usr/bin/docker
podman:
  description: True when the command is podman (also a C(docker) command provided by podman).
  returned: success
  type: bool
version:
  description: First line of C(<engine> --version).
  returned: success
  type: str
daemon_unit:
  description: The systemd unit of the engine's daemon (C(docker.service)), or null for podman.
  returned: success
  type: str
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule
from ansible_collections.gpudirect.gcp.plugins.module_utils.host.container_engine import EngineError, find_engine


def main():
    gm = GpuModule(dict(engine=dict(type="str", default="auto", choices=["auto", "docker", "podman"])))
    try:
        found = find_engine(gm.which, gm.run, gm.params["engine"])
    except EngineError as exc:
        gm.fail(str(exc))
    gm.exit(changed=False, **found)


if __name__ == "__main__":
    main()
