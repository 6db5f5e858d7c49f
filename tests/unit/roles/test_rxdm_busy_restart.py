# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rxdm role's restart of a running RxDM after a change, run by ansible-playbook on the local host:
nvidia-smi answers with a real capture (a job's process on the GPUs, or none), systemctl is a stand-in
that logs what it is asked. A node that runs a job keeps its RxDM running, is named in one line with what
changed and the job, and is marked (rxdm_restart_pending and a marker file) so that a later run on the idle
node restarts it; an idle node restarts; an RxDM that does not run yet is not restarted and the node is
not read. The role restarts RxDM only in its rolled task, never from a handler."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

from ansible_collections.gpudirect.gcp.tests.unit.roles import _job_stand_ins as stand_ins

ROLE = os.path.join(stand_ins.ROOT, "roles", "rxdm")
UNIT = "/etc/systemd/system/receive-datapath-manager.service"
BUSY_CHECK = "Look whether the node runs a job before RxDM restarts"

PLAY = """
- name: RxDM restart after a change
  hosts: n0
  gather_facts: false
  tasks:
    - name: What the earlier steps of the role registered
      ansible.builtin.set_fact:
        _rxdm_unit: {changed: %(unit_changed)s}
        _rxdm_topology: {skipped: true, changed: false}
        _rxdm_unit_before: {stat: {exists: %(unit_existed)s}}
        gpudirect_profile: {rxdm: {gpu_processes: [fastrak_gpumem_manager]}}

    - name: The restart step
      ansible.builtin.include_role:
        name: gpudirect.gcp.rxdm
        tasks_from: restart

    - name: Show the mark
      ansible.builtin.debug:
        msg: "pending={{ rxdm_restart_pending }}"
"""


# logs its arguments; `show --value` prints the state, `show` the properties systemd_service reads
SYSTEMCTL = """#!/bin/sh
echo "$@" >> "%s"
if [ "$1" = show ]; then
  case "$*" in
    *--value*) echo "%s" ;;
    *) printf 'Id=receive-datapath-manager.service\\nLoadState=loaded\\nActiveState=%s\\nSubState=running\\n'
       printf 'UnitFileState=enabled\\nDescription=RxDM\\n' ;;
  esac
fi
"""


def run(tmp_path, capture, unit_changed=True, unit_existed=True, active="active", check=False):
    """The restart step with nvidia-smi printing capture and systemctl saying RxDM is `active`."""
    bins = stand_ins.bin_dir(tmp_path)
    stand_ins.gpus(tmp_path, capture)
    stand_ins.script(bins / "systemctl", SYSTEMCTL % (tmp_path / "systemctl.log", active, active))
    play = PLAY % {"unit_changed": str(unit_changed).lower(), "unit_existed": str(unit_existed).lower()}
    return stand_ins.run(tmp_path, play, extra_vars={"_rxdm_pending_file": str(tmp_path / "state" / "pending"),
                                                     "gpu_family": "a3-mega"},
                         args=["--check"] if check else [])


def calls(tmp_path):
    log = tmp_path / "systemctl.log"
    return log.read_text().splitlines() if log.exists() else []


def restarted(tmp_path):
    return [c for c in calls(tmp_path) if c.startswith("restart ")]


def test_a_busy_node_keeps_its_rxdm_and_is_named_and_marked(tmp_path):
    rc, out = run(tmp_path, stand_ins.BUSY)
    assert rc == 0, out
    assert restarted(tmp_path) == [], calls(tmp_path)
    (line,) = [ln for ln in out.splitlines() if "rxdm: restart held back on n0" in ln]
    assert "the unit %s changed" % UNIT in line
    assert "n0 runs a job (busy: %s" % stand_ins.JOB in line
    assert "rxdm_restart_busy=skip" in line
    assert "pending=True" in out
    assert (tmp_path / "state" / "pending").read_text().startswith("the unit %s changed; held back " % UNIT)

    # the files no longer change, yet the next run on the idle node makes the restart
    rc, out = run(tmp_path, stand_ins.IDLE, unit_changed=False)
    assert rc == 0, out
    assert restarted(tmp_path) == ["restart receive-datapath-manager.service"], calls(tmp_path)
    assert "pending=False" in out
    assert not (tmp_path / "state" / "pending").exists()


def test_a_busy_node_stays_marked_run_after_run_with_its_first_line(tmp_path):
    assert run(tmp_path, stand_ins.BUSY)[0] == 0
    first = (tmp_path / "state" / "pending").read_text()
    rc, out = run(tmp_path, stand_ins.BUSY, unit_changed=False)
    assert rc == 0, out
    assert restarted(tmp_path) == []
    assert "a change an earlier run held back (%s) changed" % first.strip() in out
    assert (tmp_path / "state" / "pending").read_text() == first


def test_an_idle_node_restarts_once(tmp_path):
    rc, out = run(tmp_path, stand_ins.IDLE)
    assert rc == 0, out
    assert restarted(tmp_path) == ["restart receive-datapath-manager.service"], calls(tmp_path)
    assert "rxdm: restart held back" not in out and "pending=False" in out
    assert not (tmp_path / "state").exists()


def test_a_node_that_cannot_be_read_is_not_restarted(tmp_path):
    rc, out = run(tmp_path, str(tmp_path / "no-such-capture.xml"))
    assert rc == 0, out
    assert restarted(tmp_path) == []
    assert "n0 is not known to be idle (unknown: could not read the GPU processes" in out, out


def test_a_first_run_or_a_stopped_rxdm_is_no_restart_and_reads_no_job(tmp_path):
    for existed, active in ((False, "active"), (True, "inactive")):
        rc, out = run(tmp_path, stand_ins.BUSY, unit_existed=existed, active=active)
        assert rc == 0, out
        assert restarted(tmp_path) == [] and "rxdm: restart held back" not in out and "pending=False" in out
        assert stand_ins.task_results(out, BUSY_CHECK) == ["skipping: [n0]"], out


def test_check_mode_names_the_busy_node_and_writes_nothing(tmp_path):
    rc, out = run(tmp_path, stand_ins.BUSY, check=True)
    assert rc == 0, out
    assert restarted(tmp_path) == []
    assert "rxdm: restart held back on n0" in out
    assert not (tmp_path / "state").exists()


def _tasks(path):
    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh) or []


def _flat(tasks):
    for task in tasks:
        yield task
        for key in ("block", "rescue", "always"):
            yield from _flat(task.get(key) or [])


def test_rxdm_restarts_only_in_its_rolled_task_after_the_busy_check():
    restarts = []
    for folder in ("tasks", "handlers"):
        for name in sorted(os.listdir(os.path.join(ROLE, folder))):
            for task in _flat(_tasks(os.path.join(ROLE, folder, name))):
                args = task.get("ansible.builtin.systemd_service") or {}
                if args.get("state") == "restarted":
                    restarts.append((folder, name, task))
    assert [(folder, name) for folder, name, _task in restarts] == [("tasks", "restart.yml")]
    task = restarts[0][2]
    assert task["throttle"] == 1
    assert "not rxdm_restart_pending" in task["when"]
    # nothing notifies a restart any more
    for name in os.listdir(os.path.join(ROLE, "tasks")):
        assert all("notify" not in t or "Restart RxDM" not in str(t["notify"])
                   for t in _flat(_tasks(os.path.join(ROLE, "tasks", name)))), name
