#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: gce_topology_info
short_description: Read where a GPU VM sits (cluster, block, sub-block, host) from its metadata server
version_added: 1.0.0
description:
  - "Asks the node's GCE metadata server for the instance attributes C(physical_host_topology)
    (JSON with C(cluster), C(block), C(subBlock) and C(host)) and C(physical_host) (C(/block/sub-block/host)),
    with the header C(Metadata-Flavor: Google)."
  - The JSON attribute wins when it places the node; otherwise C(physical_host) is used. Its sub-block key
    is read in any casing (C(subBlock), C(subblock)) and returned as C(subblock).
  - A VM without placement data (no compact placement or reserved block) has neither attribute; the server
    answers 404 and the module returns an empty placement, which fails only with O(required=true).
  - With O(expected) (for example the inventory's C(gce_topology) host variable) it compares each level both
    sides know. A difference is returned in RV(mismatches), said in RV(msg) and warned about, but it does not
    fail the module.
  - A metadata server that cannot be reached, answers an error other than 404, or gives a
    C(physical_host_topology) that is not a JSON object fails with one line naming the URL and the attribute.
  - Never changes the node.
author:
  - gpudirect.gcp contributors (@gpudirect)
extends_documentation_fragment:
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
options:
  metadata_url:
    description:
      - The metadata server's C(computeMetadata/v1) root. The module reads
        C(<metadata_url>/instance/attributes/physical_host_topology) and
        C(<metadata_url>/instance/attributes/physical_host).
      - Requests go to it directly, never through a proxy.
    type: str
    default: http://metadata.google.internal/computeMetadata/v1
  timeout:
    description: Seconds to wait for each answer of the metadata server.
    type: float
    default: 3
  expected:
    description:
      - The placement the node should have, for example the inventory's C(gce_topology) host variable.
      - Keys C(cluster), C(block), C(subblock) (also C(subBlock) or C(sub_block)) and C(host); a level either
        side lacks is not compared.
    type: dict
  required:
    description:
      - Fail when the metadata server has no placement data for the node.
      - When false, a node without placement data returns an empty RV(topology).
    type: bool
    default: false
notes:
  - Only some VMs have placement data; see Google's "View topology of a compute instance".
seealso:
  - plugin: gpudirect.gcp.gce_gpu
    plugin_type: inventory
"""

EXAMPLES = r"""
- name: Read the node's placement
  gpudirect.gcp.gce_topology_info:

- name: Check it against what the inventory says
  gpudirect.gcp.gce_topology_info:
    expected: "{{ gce_topology | default({}) }}"
  register: placement

- name: Say where the inventory and the node disagree
  ansible.builtin.debug:
    msg: "{{ placement.mismatches }}"
  when: not placement.consistent

- name: A node that must be placed (reserved block or compact placement)
  gpudirect.gcp.gce_topology_info:
    required: true
    timeout: 5
"""

RETURN = r"""
topology:
  description:
    - The node's placement, with the keys C(cluster), C(block), C(subblock) and C(host) (those known), or an
      empty mapping when the metadata server has none. An C(_info) module sets no facts; register it.
    - C(physical_host) gives no cluster.
  returned: always
  type: dict
  sample: {"cluster": "europe-west1-cluster-jfhb", "block": "3e8c1a9f0b2d4c6e8a0b1c2d3e4f5a6b",
           "subblock": "7d9e0f1a2b3c4d5e6f708192a3b4c5d6", "host": "0a1b2c3d4e5f60718293a4b5c6d7e8f9"}
source:
  description: The attribute the placement came from, C(physical_host_topology) or C(physical_host); C(none)
    when neither placed the node.
  returned: always
  type: str
  sample: physical_host_topology
mismatches:
  description:
    - "The levels where O(expected) and the node disagree, each as C(level: inventory says X, node says Y)."
    - Empty without O(expected) or when every level both sides know agrees.
  returned: always
  type: list
  elements: str
  sample: ["block: inventory says b1, node says b2"]
consistent:
  description: Whether RV(mismatches) is empty.
  returned: always
  type: bool
msg:
  description: One line with the placement and how it compares with O(expected).
  returned: always
  type: str
  sample: "placed at c1/b1/s1/h1 (from physical_host_topology); matches the expected placement"
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import metadata_topology
from ansible_collections.gpudirect.gcp.plugins.module_utils.host import topology
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule, ModuleInputError


def argument_spec():
    return dict(
        metadata_url=dict(type="str", default=metadata_topology.DEFAULT_URL),
        timeout=dict(type="float", default=3),
        expected=dict(type="dict"),
        required=dict(type="bool", default=False),
    )


def validate(params):
    if not params["timeout"] > 0:
        raise ModuleInputError("timeout must be more than 0 seconds, got %s" % params["timeout"])
    if not params["metadata_url"].strip():
        raise ModuleInputError("metadata_url is empty")


def run_module(opener=None):
    gm = GpuModule(argument_spec())
    p = gm.params
    try:
        validate(p)
        kwargs = {"opener": opener} if opener else {}
        result = metadata_topology.observe(p["metadata_url"], p["timeout"], p["expected"], **kwargs)
    except (ModuleInputError, metadata_topology.MetadataError) as exc:
        gm.fail(str(exc))
    out = dict(changed=False, topology=result["topology"],
               source=result["source"] or "none", mismatches=result["mismatches"],
               consistent=result["consistent"])
    if p["expected"] and not topology.normalize(p["expected"]):
        gm.warn("expected places nothing (no block, sub-block or host), so nothing was compared")
    if not result["topology"]:
        unplaced = metadata_topology.unplaced_answers(result["answers"])
        if unplaced:
            gm.warn("the metadata server answered without a placement: %s" % ", ".join(unplaced))
    msg = metadata_topology.summary(result, p["expected"], p["metadata_url"])
    if not result["topology"] and p["required"]:
        gm.fail("%s; required is true" % msg, **out)
    if result["mismatches"]:
        gm.warn(msg)
    gm.exit(msg=msg, **out)


def main():
    run_module()


if __name__ == "__main__":
    main()
