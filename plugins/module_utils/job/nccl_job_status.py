# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the NCCL job running on a node is doing, from NCCL RAS read over a window (the nccl_job_status module).

The statuses are read and judged by job_watch's one loop (WindowWatch): every interval_s over watch_s,
the window counted from the start and read once more at its end, stopping at a hang. The job writes
RAS's answers: one RAS does not give (too slow, too large, malformed) is the state unknown with the
reason, never a traceback.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.job import job_watch, nccl_ras


def _could_not_check(reason, job, reads):
    return {"state": "unknown", "reason": "could not check the job: %s" % safe_text.one_line(reason, 500), "job": job,
            "communicators": [], "verdicts": [], "findings": [], "reads": reads}


def watch(params, clock=time.monotonic, sleep=time.sleep, ask=nccl_ras.status):
    """The module's result (without msg and inspector): the statuses read over watch_s, judged."""
    window = job_watch.WindowWatch(ask, params, params["hang_threshold_s"], clock=clock, find_job=True)
    window.run(params["interval_s"], params["watch_s"], sleep=sleep)
    exc, reads, job = window.error, window.reads, window.job
    if isinstance(exc, nccl_ras.NoRas) and reads == 0:
        return {"state": "none", "reason": str(exc), "job": None,
                "communicators": [], "verdicts": [], "findings": [], "reads": 0}
    if isinstance(exc, nccl_ras.RasError) and reads == 0:
        return _could_not_check(exc, None, 0)
    if window.error_in == "status":
        # a status read but not of RAS's shape: counted as read, and nothing of it judged
        why = "NCCL RAS's status: %s" % exc if isinstance(exc, ValueError) else "%s: %s" % (type(exc).__name__, exc)
        return _could_not_check(why, job, reads + 1)
    if exc is not None and not isinstance(exc, nccl_ras.RasError):
        return _could_not_check("%s: %s" % (type(exc).__name__, exc), job, reads)
    # a RAS that stopped answering mid-watch (the job ended): what was read is judged
    verdicts = window.verdicts
    return {"state": window.state(), "nccl_version": window.version, "job": job,
            "communicators": nccl_ras.summary(window.comms),
            "verdicts": verdicts, "findings": [v["finding"] for v in verdicts], "reads": reads}


def message(result):
    if result["state"] in ("none", "unknown"):
        return "%s: %s" % (result["state"], result["reason"])
    head = "%s: %d communicator(s)%s, %d status read(s)" % (
        result["state"], len(result["communicators"]), " of job %s" % result["job"] if result["job"] else "",
        result["reads"])
    return "; ".join([head] + [f["cause"] for f in result["findings"][:3]])
