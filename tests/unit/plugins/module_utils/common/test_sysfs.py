# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""read_text and read_text_strict: one sysfs attribute file as stripped text."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import sysfs


def test_read_text_strips_the_content(tmp_path):
    path = tmp_path / "mtu"
    path.write_text(u"  8244\n")
    assert sysfs.read_text(str(path)) == "8244"
    assert sysfs.read_text_strict(str(path)) == "8244"


def test_read_text_gives_none_for_a_missing_file(tmp_path):
    assert sysfs.read_text(str(tmp_path / "missing")) is None


def test_read_text_gives_the_default_it_is_passed(tmp_path):
    assert sysfs.read_text(str(tmp_path / "operstate"), "unknown") == "unknown"
    assert sysfs.read_text(str(tmp_path), "") == ""  # a directory cannot be read either


def test_read_text_strict_lets_the_error_through(tmp_path):
    with pytest.raises((IOError, OSError)):
        sysfs.read_text_strict(str(tmp_path / "missing"))
