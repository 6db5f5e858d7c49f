# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parallel lists to a list of records, so a role builds one without a set_fact loop."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError


def zip_records(columns, keys):
    columns = [list(column) for column in (columns or [])]
    keys = list(keys or [])
    if len(columns) != len(keys):
        raise AnsibleFilterError("_zip_records: %d column(s) for %d key(s) %s" % (len(columns), len(keys), keys))
    lengths = sorted(set(len(column) for column in columns))
    if len(lengths) > 1:
        raise AnsibleFilterError("_zip_records: the columns for %s differ in length (%s)"
                                 % (", ".join(keys), ", ".join(str(n) for n in lengths)))
    return [dict(zip(keys, row)) for row in zip(*columns)]


class FilterModule(object):
    def filters(self):
        return {"_zip_records": zip_records}
