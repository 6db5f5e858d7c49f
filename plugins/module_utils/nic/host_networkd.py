# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_networkd_info's logic: which .network file systemd-networkd applies to each interface."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

_FILE_LINE = re.compile(r"^\s*Network File:\s*(/\S+)", re.MULTILINE)


class NetworkctlError(ValueError):
    """networkctl output that cannot be read (one line)."""


def parse_json_status(text):
    """{name: network file or ''} from networkctl --json=short status (systemd 250 and later)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise NetworkctlError("networkctl --json=short status printed no JSON: %s" % exc)
    if not isinstance(data, dict) or not isinstance(data.get("Interfaces"), list):
        raise NetworkctlError("networkctl --json=short status has no Interfaces list")
    return dict((i.get("Name"), i.get("NetworkFile") or "") for i in data["Interfaces"]
                if isinstance(i, dict) and i.get("Name"))


def parse_text_status(text):
    """The network file in networkctl status <iface> output, or ''."""
    found = _FILE_LINE.search(text)
    return found.group(1) if found else ""
