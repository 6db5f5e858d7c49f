# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The remediate role's filter (plugins/plugin_utils/remediation/ladder.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import make_unsafe
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import ladder


def remediate_plan(failing, floor=None, allow=None, services=None, gpu_holders=None):
    if not isinstance(failing, (list, tuple)) or not all(isinstance(item, dict) for item in failing):
        raise AnsibleFilterError("_remediate_plan: expects a list of findings, got %r" % (failing,))
    for name, value, kind in (("allow", allow, dict), ("services", services, dict), ("gpu_holders", gpu_holders, list)):
        if value is not None and not isinstance(value, (kind, tuple) if kind is list else kind):
            raise AnsibleFilterError("_remediate_plan: %s must be a %s, got %r" % (name, kind.__name__, value))
    # the role passes every rung's setting (roles/remediate/vars/main.yml): a name no rung has is a mistake
    unknown = sorted(set(allow or {}) - set(ladder.allow_settings()))
    if unknown:
        raise AnsibleFilterError("_remediate_plan: allow names %s, which no rung has (the rungs' settings: %s)"
                                 % (", ".join(unknown), ", ".join(ladder.allow_settings())))
    return make_unsafe(ladder.plan(list(failing), floor, allow, services, list(gpu_holders or [])))


class FilterModule(object):
    def filters(self):
        return {"_remediate_plan": remediate_plan}
