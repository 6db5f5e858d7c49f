# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Prometheus text exposition format, as node_exporter's textfile collector reads it.

No sample timestamps (the collector skips a file that has them); a family with no sample is left
out (the format has no empty family); one series per label set. Plain Python, no ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text

# a label value's most characters: label text often comes from a job (an Inspector communicator's
# name), and a long one costs Prometheus memory in every sample it stores
MAX_LABEL_CHARS = 256


def escape(value):
    """A label value as the format wants it: one line of valid UTF-8 (control characters and undecodable
    bytes shown as escapes, secrets masked) of at most MAX_LABEL_CHARS, backslash and double quote escaped."""
    text = safe_text.one_line(safe_text.mask_text(value), MAX_LABEL_CHARS)
    return text.replace("\\", "\\\\").replace("\"", "\\\"")


def labels(pairs):
    if not pairs:
        return ""
    return "{%s}" % ",".join('%s="%s"' % (k, escape(v)) for k, v in pairs)


def number(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value)
    return str(int(value))


def render(families, data):
    """families: ((name, type, help), ...) in file order; data: {name: [(label pairs, value)]}."""
    lines = []
    for name, kind, text in families:
        seen = set()
        samples = []
        for pairs, value in data.get(name) or []:
            if value is None or tuple(pairs) in seen:
                continue
            seen.add(tuple(pairs))
            samples.append("%s%s %s" % (name, labels(pairs), number(value)))
        if samples:
            lines += ["# HELP %s %s" % (name, text), "# TYPE %s %s" % (name, kind)] + samples
    return "\n".join(lines) + "\n"
