# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The frame of the collection's action plugins (plugins/action/*.py), so each one is only its own work.

GpuAction validates the task's arguments against the module's argument spec (with_gce_auth() adds the
options of the doc fragment gpudirect.gcp.gce_auth to it), tells the work whether this is a check-mode run,
fills the Google credentials from the environment as the gce_gpu inventory plugin does, and turns every
error it knows (bad arguments, ActionError, the exception types in ERRORS) into a `failed` result whose msg
is one line starting with the module's name - never a traceback.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase

from ansible_collections.gpudirect.gcp.plugins.module_utils.common.safe_text import one_line
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import make_unsafe
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_api


def with_gce_auth(spec):
    """A module's options plus those of the doc fragment gpudirect.gcp.gce_auth (the Google credentials)."""
    return dict(spec, **gce_api.AUTH_ARGUMENT_SPEC)


class ActionError(Exception):
    """A problem the action reports as its one-line failure (the module's name is put before it)."""


class GpuAction(ActionBase):
    """Subclasses set MODULE and ARGUMENT_SPEC (and ERRORS) and implement act()."""

    TRANSFERS_FILES = False
    # the work is on the controller; an action that runs a module on the node sets it back to True
    _requires_connection = False

    # the module's short name, the first word of every error line
    MODULE = ""
    # the module's options (as documented in plugins/modules/<MODULE>.py); None: act() reads the task's
    # arguments itself
    ARGUMENT_SPEC = None
    # exception types whose message is the action's one-line failure
    ERRORS = ()

    check_mode = False

    def run(self, tmp=None, task_vars=None):
        result = super(GpuAction, self).run(tmp, task_vars)
        self.check_mode = bool(self._task.check_mode)
        known = (ActionError,) + tuple(self.ERRORS)
        try:
            args = None
            if self.ARGUMENT_SPEC is not None:
                try:
                    _validation, args = self.validate_argument_spec(argument_spec=self.ARGUMENT_SPEC)
                except AnsibleActionFail as exc:
                    raise ActionError(to_text(exc))
            return self.act(result, args, task_vars or {})
        except known as exc:
            return self.failed(result, exc)

    def act(self, result, args, task_vars):
        """The action's work: the result, updated. args: the validated arguments (None without ARGUMENT_SPEC)."""
        raise NotImplementedError

    def failed(self, result, error):
        """result as a failure whose msg is one line: the module's name, then the error."""
        text = one_line(to_text(error)) or type(error).__name__
        # the text may quote what the API or a file said: never templated
        result.update(failed=True, msg=make_unsafe("%s: %s" % (self.MODULE, text) if self.MODULE else text))
        return result

    @staticmethod
    def gce_auth(result, args, endpoint=None):
        """Fill the unset gce_auth options from the environment and put the credentials' warnings in result.

        endpoint: where the calls go (and the bearer token with them); the Compute API's, by default.
        Returns it, without a trailing /."""
        compute = gce_api.auth_from_env(args, os.environ)
        endpoint = (endpoint or compute).rstrip("/")
        result["warnings"] = gce_api.auth_warnings(args["auth_kind"], endpoint, args.get("service_account_file"))
        return endpoint

    @staticmethod
    @contextlib.contextmanager
    def gce_client(args, endpoint, scopes=None):
        """A Compute API client from the auth options, closed after; ActionError where the Python packages it
        needs are missing, gce_api.GceApiError where the credentials cannot be built."""
        missing = gce_api.check_dependencies()
        if missing:
            raise ActionError(missing)
        client = gce_api.client_for(args, endpoint, scopes=scopes) if scopes else gce_api.client_for(args, endpoint)
        try:
            yield client
        finally:
            client.close()
