# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node check's rxdm part (module_utils/health/node_health.py PARTS): rxdm_readiness takes the settings it
shares with it as options (DOCUMENTATION), node_health_info the whole part as its rxdm option (PART)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import textwrap

# Written once, at no indent, with a slot where the two modules' specs differ (rxdm_readiness has a default
# container name and keeps more log lines for its failure message). No O() or RV(): the same text sits at the
# top of one module's options and one level down in the other's.
_SHARED = r"""
container:
  description: The RxDM container's name.
  type: str
  %(container)s
unit:
  description:
    - The systemd unit that runs the container, with its C(.service) suffix. Its state and restart count are
      read, and its journal stands in for the container's log when no container exists.
  type: str
health_check_file:
  description:
    - Path, inside the container, of the health-check file RxDM writes when it is ready
      (C(HEALTH_CHECK_LOG_FILE), TCPXO); it is copied out of the running container, so a file from an earlier
      container never counts.
  type: str
ready_line:
  description: Text that marks readiness, in the health-check file or the log.
  type: str
log_lines:
  description:
    - How many of the last log lines (the unit's journal when no container exists) to keep, in C(log_tail),
      when RxDM is not ready.
  type: int
  default: %(log_lines)s
"""
# the node check's own settings, which rxdm_readiness has not or takes in another form (its engine is the
# engine command's path)
_PART_ONLY = r"""
engine:
  description: The container engine that runs RxDM; C(auto) prefers docker, as Google's GPU images ship it.
  type: str
  choices: [auto, docker, podman]
  default: auto
max_restarts:
  description: Automatic restarts of the unit beyond which RxDM counts as failing.
  type: int
  default: 0
"""


class ModuleDocFragment(object):

    DOCUMENTATION = "options:" + textwrap.indent(
        _SHARED % dict(container="default: receive-datapath-manager", log_lines=20), " " * 2)

    PART = r"""
options:
  rxdm:
    description: Check RxDM (TCPX and TCPXO families).
    type: dict
    suboptions:""" + textwrap.indent(_SHARED % dict(container="required: true", log_lines=5) + _PART_ONLY, " " * 6)
