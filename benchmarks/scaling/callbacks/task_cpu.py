# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's CPU time of each task of a run, for the scaling benchmark (not shipped).

With the linear strategy a task runs on every host before the next starts, so the controller's
CPU time between two task starts (the main process's own, and that of the workers it has reaped)
is that task's: at each task start the workers of the one before are waited for and reaped.
Written as JSON lines to $GPUDIRECT_BENCH_TASK_CPU: {"task": "role : name", "cpu": seconds}, one
line a task start (a task run again, in a loop of includes, is a line each time)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import multiprocessing
import os
import resource
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: task_cpu
type: aggregate
short_description: the controller's CPU time of each task, for the scaling benchmark
description:
  - Writes one JSON line a task to the file named by E(GPUDIRECT_BENCH_TASK_CPU); nothing without it.
  - Meaningful with the linear strategy only, where one task runs on every host before the next.
"""


def controller_cpu(wait_s=2.0):
    """CPU seconds of this process and of its children (its forked workers and their SSH). A worker's
    time counts once it is reaped, and one may still be exiting when the next task starts: it is
    waited for (at most wait_s in all) so that its time falls to its own task."""
    until = time.monotonic() + wait_s
    for worker in multiprocessing.active_children():
        worker.join(max(0.0, until - time.monotonic()))
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "task_cpu"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self._path = os.environ.get("GPUDIRECT_BENCH_TASK_CPU")
        self._task = None
        self._since = None

    def _close(self):
        if self._path and self._task is not None:
            with open(self._path, "a") as fh:
                fh.write(json.dumps({"task": self._task, "cpu": round(controller_cpu() - self._since, 4)}) + "\n")
        self._task = None

    def _start(self, task):
        self._close()
        self._task = task.get_name()  # "role : name" for a role's task
        self._since = controller_cpu()

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._start(task)

    def v2_playbook_on_handler_task_start(self, task):
        self._start(task)

    def v2_playbook_on_stats(self, stats):
        self._close()
