#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: rxdm_readiness
short_description: Wait until the Receive Datapath Manager (RxDM) container is ready
version_added: 1.0.0
author:
  - gpudirect.gcp contributors (@gpudirect)
description:
  - Polls the running RxDM container for its readiness signal - the health-check file RxDM writes when
    C(HEALTH_CHECK_LOG_FILE) is set (copied out of the running container with C(<engine> cp), so a file from an
    earlier container never counts and the image needs no shell),
    or the readiness line in its log. For RxDM builds with neither (TCPX), the same container must stay up for
    O(settle_s) seconds.
  - On timeout it fails and shows the last lines of the RxDM log (the unit's journal when no container exists).
  - Also reports the container's image and, with O(unit), the unit's state and restart count, so a day-2 check
    can pair the image with the installed plugin and notice a crash loop. O(timeout_s=0) reads the state once.
  - Changes nothing.
options:
  engine:
    description: Path or name of the container engine command.
    type: str
    required: true
  settle_s:
    description: Seconds the container must run when there is no file and no line to wait for.
    type: int
    default: 10
  timeout_s:
    description: Give up after this many seconds.
    type: int
    default: 120
  interval_s:
    description: Seconds between polls.
    type: float
    default: 2.0
extends_documentation_fragment:
  - gpudirect.gcp.rxdm
  - gpudirect.gcp.attributes
  - gpudirect.gcp.attributes.READ_ONLY
"""

EXAMPLES = r"""
- name: Wait for RxDM (A3 Mega)
  gpudirect.gcp.rxdm_readiness:
    engine: /usr/bin/docker
    unit: receive-datapath-manager.service
    health_check_file: /run/health-check
    ready_line: Buffer manager initialization complete
    timeout_s: 120
"""

RETURN = r"""
ready:
  description: Whether RxDM signalled readiness.
  returned: always
  type: bool
source:
  description: Which signal proved readiness (C(health_check_file), C(log) or C(running)).
  returned: success
  type: str
elapsed_s:
  description: Seconds waited.
  returned: always
  type: float
container_id:
  description: ID of the container that became ready.
  returned: always
  type: str
started_at:
  description: When that container started, as the engine reports it.
  returned: always
  type: str
reason:
  description: Why RxDM is not ready (empty when it is).
  returned: always
  type: str
  sample: container receive-datapath-manager is not running
image:
  description: The image reference of the container, null when there is no container.
  returned: always
  type: str
  sample: us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21
unit_state:
  description: The unit's systemd C(ActiveState) (C(active), C(failed), ...), null without O(unit).
  returned: always
  type: str
restarts:
  description: How often systemd restarted the unit on its own (C(NRestarts)), null without O(unit).
  returned: always
  type: int
log_tail:
  description: Last lines of the RxDM log (only on failure).
  returned: failure
  type: list
  elements: str
"""

from ansible_collections.gpudirect.gcp.plugins.module_utils.rxdm import rxdm_readiness as rr
from ansible_collections.gpudirect.gcp.plugins.module_utils._module import GpuModule


def main():
    gm = GpuModule(
        dict(
            engine=dict(type="str", required=True),
            container=dict(type="str", default="receive-datapath-manager"),
            unit=dict(type="str"),
            health_check_file=dict(type="str"),
            ready_line=dict(type="str"),
            settle_s=dict(type="int", default=10),
            timeout_s=dict(type="int", default=120),
            interval_s=dict(type="float", default=2.0),
            log_lines=dict(type="int", default=20),
        ),
    )
    p = gm.params
    engine = gm.executable(p["engine"])
    result = rr.wait_ready(gm.run, engine, p["container"], p["health_check_file"], p["ready_line"],
                           settle_s=p["settle_s"], timeout_s=p["timeout_s"], interval_s=p["interval_s"])
    reason = result["reason"]
    result.update(rr.describe(gm.run, engine, p["container"], p["unit"], gm.which("systemctl")))
    if not result["ready"]:
        tail = rr.last_log_lines(gm.run, engine, p["container"], p["log_lines"], p["unit"])
        gm.fail("RxDM not ready after %ss: %s. Last %d log lines:\n%s"
                % (p["timeout_s"], reason, len(tail), "\n".join(tail)), log_tail=tail, **result)
    gm.exit(changed=False, **result)


if __name__ == "__main__":
    main()
