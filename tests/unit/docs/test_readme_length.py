# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The README is read in ten minutes: under 2,000 words (as wc -w counts them). Development, sandbox and
benchmark material lives in docs/."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_the_readme_is_under_two_thousand_words():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        words = len(fh.read().split())
    assert words < 2000, "README.md has %d words" % words


def test_the_readme_leads_to_the_development_doc():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        assert "(docs/development.md)" in fh.read()
