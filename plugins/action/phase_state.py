# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""phase_state: digest the phase's inputs and code on the controller, then run the module on the node
(documented in plugins/modules/phase_state.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.action_base import ActionError, GpuAction
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import phase_state
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import make_unsafe

PLUGINS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the code that runs on the nodes; a filter's effect shows in the inputs it resolved
CODE_DIRS = ("modules", "module_utils")
# what a role does (its README and tests are not)
ROLE_DIRS = ("defaults", "files", "handlers", "meta", "tasks", "templates", "vars")
# a phase's own result, and the switch that turns the record on or off, are not its inputs
SKIPPED_SUFFIXES = ("_result", "_phase_record")


class ActionModule(GpuAction):

    MODULE = "phase_state"
    # the record is on the node: the module runs there (its options are checked there)
    _requires_connection = True

    def _inputs(self, prefixes, excluded, extra, task_vars):
        values = {}
        for name in sorted(task_vars):
            if name.startswith(tuple(prefixes)) and not name.endswith(SKIPPED_SUFFIXES) and name not in excluded:
                try:
                    values[name] = self._templar.template(task_vars[name])
                except Exception as exc:  # pylint: disable=broad-except
                    # an input that cannot be resolved here fails the role's own task later, with its message
                    values[name] = "unresolved: %s" % type(exc).__name__
        values["extra inputs"] = extra
        return values

    def _content(self):
        """Hashes of the calling role's working directories and of the code that runs on the nodes."""
        role_path = getattr(getattr(self._task, "_role", None), "_role_path", None)
        return {
            "role": [phase_state.tree_hash(os.path.join(role_path, name)) if role_path else "" for name in ROLE_DIRS],
            "code": [phase_state.tree_hash(os.path.join(PLUGINS, name)) for name in CODE_DIRS],
        }

    def act(self, result, args, task_vars):
        args = dict(self._task.args)
        prefixes = args.pop("inputs_from", None) or []
        excluded = args.pop("inputs_exclude", None) or []
        extra = args.pop("inputs", None) or {}
        if not isinstance(prefixes, list) or not all(isinstance(p, str) and p for p in prefixes):
            raise ActionError("inputs_from: must be a list of variable name prefixes")
        if not isinstance(excluded, list):
            raise ActionError("inputs_exclude: must be a list of variable names")
        if not isinstance(extra, dict):
            raise ActionError("inputs: must be a mapping")
        # a record passes the digest its check worked out, before the phase set any fact of its own
        if not args.get("digest"):
            args["digest"] = phase_state.digest_of(self._inputs(prefixes, set(excluded), extra, task_vars),
                                                   self._content())
        result.update(self._execute_module(module_name="gpudirect.gcp.phase_state", module_args=args,
                                           task_vars=task_vars))
        # the record comes back from the node: what it says is data, never a template
        for key in ("result", "differences"):
            if key in result:
                result[key] = make_unsafe(result[key])
        return result
