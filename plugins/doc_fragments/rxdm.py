# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node check's rxdm part (module_utils/health/node_health.py PARTS): rxdm_readiness takes the settings it
shares with it as options (DOCUMENTATION), node_health_info the whole part as its rxdm option (PART)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


# Literal text, as ansible-test reads a fragment. PART repeats the options of DOCUMENTATION one level
# down (defaults may differ); tests/unit/docs/test_shared_options.py fails where their texts part.
class ModuleDocFragment(object):

    DOCUMENTATION = r"""
options:
  container:
    description: The RxDM container's name.
    type: str
    default: receive-datapath-manager
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
    default: 20
"""

    PART = r"""
options:
  rxdm:
    description: Check RxDM (TCPX and TCPXO families).
    type: dict
    suboptions:
      container:
        description: The RxDM container's name.
        type: str
        required: true
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
        default: 5

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
