#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: rxdm_image
short_description: Make sure the pinned RxDM image is in the node's container engine
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Looks for the image reference (C(image:tag) or C(image@sha256:...)) in the engine's store and pulls it
    when it is missing. A pinned reference that is present is that image, so it is never pulled again.
  - Works with docker and podman alike (M(gpudirect.gcp.container_engine_info) finds the engine).
options:
  engine:
    description: Path of the container engine command.
    type: path
    required: true
  ref:
    description: The image reference, pinned by tag or digest.
    type: str
    required: true
extends_documentation_fragment:
  - gpudirect.gcp.attributes
attributes:
  check_mode:
    support: full
    details: Reports whether the image would be pulled; pulls nothing.
  diff_mode:
    support: full
    details: Whether the image is present before and after.
  idempotent:
    support: full
"""

EXAMPLES = r"""
- name: Pull the pinned RxDM image
  gpudirect.gcp.rxdm_image:
    engine: /usr/bin/docker
    ref: us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.23
"""

RETURN = r"""
ref:
  description: The image reference.
  returned: always
  type: str
image_id:
  description: The engine's ID of the image after the run; null in check mode when it would be pulled.
  returned: success
  type: str
pulled:
  description: True when the image was (or in check mode would be) pulled.
  returned: success
  type: bool
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils.rxdm import rxdm_engine
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def main():
    gm = GpuModule(dict(engine=dict(type="path", required=True), ref=dict(type="str", required=True)))
    engine, ref = gm.params["engine"], gm.params["ref"]
    if not ref.strip() or ref.endswith((":", "@")):
        gm.fail("rxdm_image: image reference %r has no tag or digest; pin one" % (ref,), ref=ref)
    before = rxdm_engine.image_id(gm.run, engine, ref)
    result = dict(ref=ref, image_id=before, pulled=before is None, changed=before is None)
    if before is None:
        result["diff"] = dict(before="%s: absent\n" % ref, after="%s: present\n" % ref)
        if not gm.check_mode:
            try:
                rxdm_engine.pull(gm.run, engine, ref)
            except rxdm_engine.RxdmEngineError as exc:
                gm.fail("rxdm_image: %s" % exc, ref=ref)
            result["image_id"] = rxdm_engine.image_id(gm.run, engine, ref)
    gm.exit(**result)


if __name__ == "__main__":
    main()
