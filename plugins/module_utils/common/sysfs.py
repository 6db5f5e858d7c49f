# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading one sysfs attribute file as stripped text."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def read_text_strict(path):
    """The file's content, stripped; IOError/OSError propagate to the caller."""
    with open(path) as handle:
        return handle.read().strip()


def read_text(path, default=None):
    """The file's content, stripped, or default when it cannot be read.

    Missing files are normal in sysfs, and some attributes answer EINVAL
    (a virtual NIC's speed, for one), so any IOError/OSError gives default.
    """
    try:
        return read_text_strict(path)
    except (IOError, OSError):
        return default
