# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every configuration file in the plugin's EXAMPLES (the first as YAML, the others commented, since a
YAML document holds one) parses and sets only the plugin's own options."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import yaml
from ansible.plugins.loader import fragment_loader
from ansible.utils.plugin_docs import get_docstring

from ansible_collections.gpudirect.gcp.plugins.inventory import gce_gpu


def examples():
    first = yaml.safe_load(gce_gpu.EXAMPLES)
    blocks, current = [], None
    for line in gce_gpu.EXAMPLES.splitlines():
        if line.startswith("#   plugin:"):
            current = []
            blocks.append(current)
        if current is not None and line.startswith("#   "):
            current.append(line[4:])
        elif current is not None and not line.startswith("#") or not line:
            current = None
    return [first] + [yaml.safe_load("\n".join(block)) for block in blocks]


def test_every_example_is_a_configuration_of_this_plugin():
    # the options with the documentation fragments' (constructed, inventory cache)
    doc = get_docstring(gce_gpu.__file__, fragment_loader, collection_name="gpudirect.gcp", plugin_type="inventory")[0]
    options = set(doc["options"])
    found = examples()
    assert len(found) == 4
    for config in found:
        assert config["plugin"] == "gpudirect.gcp.gce_gpu"
        assert set(config) - options == set(), config
        assert config["groups"]["gpu_nodes"] == "gpu_family is not none"
