# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.filter.zip_records import FilterModule

ZIP = FilterModule().filters()["_zip_records"]


def test_rows_become_records():
    assert ZIP([["/dev/a", "/dev/b"], [True, False]], ["path", "present"]) == [
        {"path": "/dev/a", "present": True}, {"path": "/dev/b", "present": False}]


def test_no_rows_is_an_empty_list():
    assert ZIP([[], []], ["path", "present"]) == []


def test_mismatched_input_is_one_line():
    with pytest.raises(AnsibleFilterError, match="1 column"):
        ZIP([[1]], ["a", "b"])
    with pytest.raises(AnsibleFilterError, match="differ in length"):
        ZIP([[1, 2], [1]], ["a", "b"])
