# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: preload
type: aggregate
short_description: Cut the controller's CPU per task and node by loading plugins once, before the workers fork
version_added: 1.1.0
description:
  - ansible-playbook runs each task on each node in a worker process forked from its main process. A worker
    imports every plugin the main process has not imported yet, and collects garbage across the main process's
    objects, copying their memory.
  - At the start of a playbook this callback imports the collection's filter and action plugins, and the core
    connection, become, shell and action plugins nearly every task uses, and ansible-core's Jinja tests and
    filters, so that every worker inherits them.
    At the start of each play it collects the garbage and freezes the objects still alive (C(gc.freeze())),
    which the workers then leave alone.
  - On the collection's 2-core test machine this takes about 0.5 CPU-s a node off a converged C(site.yml) run
    and about 1.5 CPU-s off a run's fixed cost (docs/scale.md). It changes nothing in what a task does or reports.
  - It prints nothing, unless a plugin cannot be imported; the task that uses that plugin still fails on its own.
author:
  - gpudirect.gcp contributors (@gpudirect)
requirements:
  - Enable it in C(ansible.cfg) with C(callbacks_enabled = gpudirect.gcp.preload) (as this collection's
    sample AWX project does), or with E(ANSIBLE_CALLBACKS_ENABLED).
"""

from ansible.plugins.callback import CallbackBase
from ansible.plugins.loader import (
    action_loader, become_loader, connection_loader, filter_loader, shell_loader, test_loader)

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core import preload


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpudirect.gcp.preload"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self.loaded = False

    def v2_playbook_on_start(self, playbook):
        if self.loaded:
            return
        self.loaded = True
        _imported, problems = preload.import_collection_plugins()
        for problem in problems:
            self._display.warning("gpudirect.gcp.preload: cannot import %s" % problem)
        preload.load_core_plugins({"action": action_loader, "become": become_loader,
                                   "connection": connection_loader, "shell": shell_loader})
        preload.load_jinja_plugins({"filter": filter_loader, "test": test_loader})

    def v2_playbook_on_play_start(self, play):
        preload.freeze_heap()
