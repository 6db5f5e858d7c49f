# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The remediate role's filter (plugins/plugin_utils/remediation/ladder.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import make_unsafe
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import ladder


def remediate_plan(failing, floor=None, allowed=None):
    if not isinstance(failing, (list, tuple)) or not all(isinstance(item, dict) for item in failing):
        raise AnsibleFilterError("_remediate_plan: expects a list of findings, got %r" % (failing,))
    if allowed is not None and not isinstance(allowed, (list, tuple)):
        raise AnsibleFilterError("_remediate_plan: allowed must be a list of rungs, got %r" % (allowed,))
    return make_unsafe(ladder.plan(list(failing), floor, ladder.fd.RUNGS if allowed is None else list(allowed)))


class FilterModule(object):
    def filters(self):
        return {"_remediate_plan": remediate_plan}
