# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waiting for RxDM to be ready.

Signals, in order of preference:
  - the health-check file RxDM writes when HEALTH_CHECK_LOG_FILE is set [CEA best-practice.md],
    copied out of the running container (`<engine> cp`, which needs no program in the image),
    so a file left by an earlier container never counts;
  - the readiness line in the container log [SG polls `docker logs` for it];
  - for RxDM builds with neither (TCPX): the same container running for a settle time [SG sleeps 10 s].
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import tempfile
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import container_engine as ce


def read_container_file(run, engine, name, path):
    """The text of a file inside a running container, or None when it cannot be read."""
    tmp = tempfile.mkdtemp(prefix="rxdm-ready-")
    dest = os.path.join(tmp, "file")
    try:
        rc, _out, _err = run(ce.copy_out_argv(engine, name, path, dest))
        if rc != 0 or not os.path.isfile(dest):
            return None
        with open(dest) as fh:
            return fh.read()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _check_once(run, engine, name, health_check_file, ready_line):
    """(running, container id, started, source or None)."""
    rc, out, _err = run(ce.inspect_state_argv(engine, name))
    running, cid, started = ce.parse_state(out) if rc == 0 else (False, None, None)
    if not running:
        return False, cid, started, None
    if health_check_file:
        out = read_container_file(run, engine, name, health_check_file)
        if out is not None and (ready_line in out if ready_line else out.strip()):
            return True, cid, started, "health_check_file"
    if ready_line:
        rc, out, err = run(ce.logs_argv(engine, name))
        if rc == 0 and ready_line in (out or "") + (err or ""):
            return True, cid, started, "log"
    return True, cid, started, None


def wait_ready(run, engine, name, health_check_file=None, ready_line=None, settle_s=0, timeout_s=120,
               interval_s=2.0, clock=time.time, sleep=time.sleep):
    """Poll until ready or timeout. Returns dict(ready, source, elapsed_s, container_id, started_at, reason)."""
    start = clock()
    seen_id = None
    seen_since = None
    reason = "container %s never ran" % name
    while True:
        running, cid, started, source = _check_once(run, engine, name, health_check_file, ready_line)
        now = clock()
        if running:
            if cid != seen_id:
                seen_id, seen_since = cid, now
            if source:
                return dict(ready=True, source=source, elapsed_s=round(now - start, 1), container_id=cid,
                            started_at=started, reason="")
            if not health_check_file and not ready_line and now - seen_since >= settle_s:
                return dict(ready=True, source="running", elapsed_s=round(now - start, 1), container_id=cid,
                            started_at=started, reason="")
            reason = "container %s is running but has not signalled readiness (%s)" % (
                name, " or ".join(s for s in (
                    health_check_file and "health-check file %s" % health_check_file,
                    ready_line and "log line %r" % ready_line) if s) or "settle time %ss" % settle_s)
        else:
            seen_id = None
            reason = "container %s is not running" % name
        if now - start >= timeout_s:
            return dict(ready=False, source=None, elapsed_s=round(now - start, 1), container_id=cid,
                        started_at=started, reason=reason)
        sleep(interval_s)


def last_log_lines(run, engine, name, lines=20, unit=None):
    """The container's last log lines; the unit's journal when the container is gone."""
    rc, out, err = run(ce.logs_argv(engine, name, tail=lines))
    text = ((out or "") + (err or "")).strip()
    if rc == 0 and text:
        return text.splitlines()[-lines:]
    if unit:
        jrc, jout, _jerr = run(["journalctl", "--no-pager", "--output=cat", "-n", str(lines), "-u", unit])
        if jrc == 0 and jout.strip():
            return jout.strip().splitlines()[-lines:]
    # the engine's own error (no such container) is no line of RxDM's log
    return []


def describe(run, engine, name, unit=None, systemctl=None):
    """What day-2 checks want beside readiness: the container's image, and the unit's
    state and automatic restart count (NRestarts), each None when it cannot be read."""
    out = {"image": None, "unit_state": None, "restarts": None}
    rc, text, _err = run(ce.image_argv(engine, name))
    if rc == 0 and text.strip():
        out["image"] = text.strip()
    if unit and systemctl:
        rc, text, _err = run([systemctl, "show", "--property=ActiveState,NRestarts", unit])
        if rc == 0:
            props = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
            out["unit_state"] = props.get("ActiveState") or None
            restarts = props.get("NRestarts", "")
            out["restarts"] = int(restarts) if restarts.isdigit() else None
    return out


def problems(state, container, unit=None, max_restarts=0):
    """[(severity, subject, cause)] of an RxDM state: the one rule set diagnose and the node health agent
    share. state: ready, reason, unit_state, restarts, log_tail (optional) and error (RxDM could not be
    looked at, such as no container engine: on a node that needs RxDM, that is RxDM not running)."""
    if state.get("error"):
        return [("fail", container, "cannot check RxDM: %s" % state["error"])]
    out = []
    if not state.get("ready"):
        cause = state.get("reason") or "not ready"
        if state.get("unit_state") and state["unit_state"] != "active":
            cause += "; unit %s is %s" % (unit or "", state["unit_state"])
        tail = [line for line in state.get("log_tail") or [] if line.strip()]
        if tail:
            cause += "; last log line: %s" % tail[-1].strip()
        out.append(("fail", container, cause))
    restarts = state.get("restarts")
    if restarts is not None and max_restarts is not None and restarts > max_restarts:
        out.append(("warn", unit or container, "systemd restarted RxDM %d times (more than %d): it keeps failing; "
                    "see journalctl -u %s" % (restarts, max_restarts, unit or container)))
    return out
