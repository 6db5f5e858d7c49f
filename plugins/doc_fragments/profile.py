# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node check's profile part (module_utils/health/node_health.py PARTS): nccl_env_check takes the
settings it shares with it as options (DOCUMENTATION), node_health_info the whole part as its profile option
(PART)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


# Literal text, as ansible-test reads a fragment. PART repeats the options of DOCUMENTATION one level
# down (defaults may differ); tests/unit/docs/test_shared_options.py fails where their texts part.
class ModuleDocFragment(object):

    DOCUMENTATION = r"""
options:
  iface_vars:
    description:
      - Variables whose value is a comma-separated list of interface names, each of which the node must have.
    type: list
    elements: str
    default: []
  binding_vars:
    description:
      - Variables that bind interfaces to CPUs, of the form C(<iface>:<cpus>;<iface>:<cpus>), each of whose
        interfaces the node must have.
    type: list
    elements: str
    default: []
  plugin_lib_dir:
    description: The installed plugin's library directory, which must exist and be the first C(LD_LIBRARY_PATH) entry.
    type: path
  plugin_library:
    description: A file that must exist in the plugin's library directory (C(libnccl-net.so)).
    type: str
"""

    PART = r"""
options:
  profile:
    description: Check the NCCL env file.
    type: dict
    suboptions:
      path:
        description: The NCCL env file.
        type: path
        required: true

      iface_vars:
        description:
          - Variables whose value is a comma-separated list of interface names, each of which the node must have.
        type: list
        elements: str
        default: []
      binding_vars:
        description:
          - Variables that bind interfaces to CPUs, of the form C(<iface>:<cpus>;<iface>:<cpus>), each of whose
            interfaces the node must have.
        type: list
        elements: str
        default: []
      plugin_lib_dir:
        description: The installed plugin's library directory, which must exist and be the first C(LD_LIBRARY_PATH) entry.
        type: path
      plugin_library:
        description: A file that must exist in the plugin's library directory (C(libnccl-net.so)).
        type: str
"""
