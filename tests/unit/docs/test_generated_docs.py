# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The generated parts of the docs match the code they are generated from."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_readme_and_role_readmes_are_current():
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_docs.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _gen_docs():
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    try:
        import gen_docs  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.pop(0)
    return gen_docs


def test_the_markup_becomes_markdown():
    md = _gen_docs().markdown
    assert md("C(a) O(b=c) M(x.y.z) P(x.y.r#role) V(true) RV(r[].s) I(it) B(bold)") == \
        "`a` `b=c` `x.y.z` `x.y.r` `true` `r[].s` *it* **bold**"
    assert md("L(the docs, https://example.com/a) U(https://example.com/b)") == \
        "[the docs](https://example.com/a) <https://example.com/b>"


def test_no_role_readme_shows_raw_markup_and_each_has_an_example_play():
    import re  # pylint: disable=import-outside-toplevel
    raw = re.compile(r"\b(?:C|O|M|P|V|RV|E|I|B|U|L)\([^)]*\)")
    roles = os.path.join(ROOT, "roles")
    for role in sorted(os.listdir(roles)):
        with open(os.path.join(roles, role, "README.md"), encoding="utf-8") as fh:
            text = fh.read()
        assert raw.findall(text) == [], role
        if not role.startswith("_"):
            assert "- role: gpudirect.gcp.%s\n" % role in text, role
