# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters that read what GPU tools print (code in module_utils/gpu/)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import nvidia_smi, xid


def _text(data, what):
    if hasattr(data, "get") and "stdout" in data:
        data = data.get("stdout") or ""  # a registered command result
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    if not isinstance(data, str):
        raise AnsibleFilterError("%s: expected text or a registered command result, got %s"
                                 % (what, type(data).__name__))
    return data


def nvidia_smi_parse(data):
    try:
        return nvidia_smi.parse(_text(data, "nvidia_smi_parse"))
    except nvidia_smi.ParseError as exc:
        raise AnsibleFilterError("nvidia_smi_parse: %s" % exc)


def xid_events(data):
    return xid.events(_text(data, "xid_events"))


class FilterModule(object):
    def filters(self):
        return {"nvidia_smi_parse": nvidia_smi_parse, "xid_events": xid_events}
