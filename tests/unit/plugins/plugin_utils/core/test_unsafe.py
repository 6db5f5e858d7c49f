# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""make_unsafe: a string from outside is never templated, whatever the ansible-core."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.core.unsafe import make_unsafe

try:
    from ansible.template import trust_as_template
except ImportError:  # ansible-core < 2.19: every plain string is trusted
    def trust_as_template(value):
        return value


def _templated(value):
    return Templar(loader=DataLoader()).template(value)


def test_a_trusted_template_string_comes_out_as_text():
    assert str(_templated(trust_as_template("{{ 6 * 7 }}"))) == "42"  # the same text, trusted, is evaluated
    data = make_unsafe({"k": [trust_as_template("{{ 6 * 7 }}"), ("{{ 1 }}",)], "n": 5, "none": None})
    assert _templated(data["k"][0]) == "{{ 6 * 7 }}"
    assert isinstance(data["k"][1], tuple) and data["n"] == 5 and data["none"] is None


@pytest.mark.parametrize("value", ["plain", b"bytes", 7, None, {"a": {"b": ["c"]}}, {"s"}])
def test_values_keep_their_value(value):
    assert make_unsafe(value) == value
