# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""make_unsafe: strings from outside (Compute API answers, text built from them) are never templated.

As community.docker does it, with the public API of the installed ansible-core:
- ansible-core >= 2.19 templates only what ansible.template.trust_as_template() marked, so a
  value is left as it is unless it carries that mark; a marked string is wrapped with wrap_var,
  which drops the mark.
- Older cores template every plain string, so each string that could hold a template ('{' or
  '}') is wrapped with wrap_var (ansible.utils.unsafe_proxy, their public API for it); the
  others are left as they are, which keeps a large inventory cheap.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from collections.abc import Mapping, Set

from ansible.module_utils.common.collections import is_sequence
from ansible.utils.unsafe_proxy import wrap_var

try:
    from ansible.template import is_trusted_as_template
except ImportError:  # ansible-core < 2.19: no trust marks; every plain string may be templated
    is_trusted_as_template = None

_TEMPLATE_CHARS = re.compile(u"[{}]")
_TEMPLATE_CHARS_BYTES = re.compile(b"[{}]")

# ansible-core >= 2.19 trusts no value an inventory plugin sets (trusted_by_default = False)
UNTRUSTED_BY_DEFAULT = is_trusted_as_template is not None


def _needs_wrap(value):
    if is_trusted_as_template is not None:
        return is_trusted_as_template(value)
    pattern = _TEMPLATE_CHARS_BYTES if isinstance(value, bytes) else _TEMPLATE_CHARS
    return bool(pattern.search(value))


def make_unsafe(value):
    """value, with every string in it (keys included) that could be templated marked unsafe."""
    if value is None:
        return value
    if isinstance(value, Mapping):
        return dict((make_unsafe(key), make_unsafe(item)) for key, item in value.items())
    if isinstance(value, Set):
        return set(make_unsafe(item) for item in value)
    if isinstance(value, (str, bytes)):
        return wrap_var(value) if _needs_wrap(value) else value
    if is_sequence(value):
        return type(value)(make_unsafe(item) for item in value)
    return value
