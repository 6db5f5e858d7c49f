# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter docs carry only documentation keys.  In a YAML flow mapping, an
unquoted description with a comma in it ends at the comma, and the rest becomes
a stray key: ansible-doc shows it and a docsite build (antsibull-docs) rejects
the file."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
FILES = sorted(glob.glob(os.path.join(ROOT, "plugins", "filter", "*.yml")))
OPTION_KEYS = {"description", "type", "elements", "required", "default", "choices", "aliases", "version_added",
               "suboptions", "positional"}
RETURN_KEYS = {"description", "type", "elements", "returned", "sample", "contains", "version_added"}


def stray_keys(entries, allowed, nested, where):
    """Keys of each documented entry that are not documentation keys, as 'where.name: key'."""
    found = []
    for name, entry in (entries or {}).items():
        if not isinstance(entry, dict):
            found.append("%s.%s: not a mapping" % (where, name))
            continue
        found += ["%s.%s: %s" % (where, name, key) for key in sorted(set(entry) - allowed)]
        found += stray_keys(entry.get(nested), allowed, nested, "%s.%s" % (where, name))
    return found


def test_every_filter_has_a_doc_file():
    assert len(FILES) >= 10


@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_doc_entries_hold_only_doc_keys(path):
    with open(path, encoding="utf-8") as fh:
        doc = yaml.safe_load(fh)
    found = stray_keys(doc["DOCUMENTATION"].get("options"), OPTION_KEYS, "suboptions", "options")
    ret = doc.get("RETURN") or {}
    found += stray_keys(ret, RETURN_KEYS, "contains", "return")
    assert found == []


def test_a_comma_in_an_unquoted_flow_description_is_caught():
    doc = yaml.safe_load("_value: {description: The rest, after the pid., type: str}")
    assert stray_keys(doc, RETURN_KEYS, "contains", "return") == ["return._value: after the pid."]
