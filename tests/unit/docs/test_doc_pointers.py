# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every pointer in the docs and comments leads somewhere that exists.

A Markdown link names a file of the tree (and, after #, one of its headings);
a comment never sends the reader to a numbered section of a document the
project does not ship.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SKIP_DIRS = {".git", ".venv", "build", ".cache", "tests/output", "node_modules", ".pytest_cache"}
TEXT_SUFFIXES = (".md", ".py", ".yml", ".yaml", ".j2", ".sh", ".cfg", ".txt")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)
NUMBERED_SECTION = re.compile(r"\b(?:section|§)\s*\d+(?:\.\d+)+", re.I)


def _files(suffixes):
    for top, dirs, names in os.walk(ROOT):
        rel = os.path.relpath(top, ROOT)
        dirs[:] = [d for d in dirs if os.path.normpath(os.path.join(rel, d)) not in SKIP_DIRS
                   and d not in SKIP_DIRS]
        for name in names:
            if name.endswith(suffixes):
                yield os.path.join(top, name)


def _slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path):
    with open(path, encoding="utf-8") as fh:
        return {_slug(h) for h in HEADING.findall(fh.read())}


def broken_links(paths):
    problems = []
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        for target in LINK.findall(text):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # http:, https:, mailto:
            file_part, anchor = target.partition("#")[::2]
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            where = os.path.relpath(path, ROOT)
            if not os.path.exists(dest):
                problems.append("%s: link to %s: no such file" % (where, target))
            elif anchor and dest.endswith(".md") and anchor not in _anchors(dest):
                problems.append("%s: link to %s: no such heading" % (where, target))
    return problems


def numbered_section_pointers(paths):
    problems = []
    for path in paths:
        if os.path.abspath(path) == os.path.abspath(__file__):
            continue
        with open(path, encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, 1):
                match = NUMBERED_SECTION.search(line)
                if match:
                    problems.append("%s:%d: points at %r, which no shipped document has"
                                    % (os.path.relpath(path, ROOT), number, match.group(0)))
    return problems


def test_markdown_links_lead_to_existing_files_and_headings():
    assert broken_links(_files((".md",))) == []


def test_no_comment_points_at_a_numbered_section():
    assert numbered_section_pointers(_files(TEXT_SUFFIXES)) == []


def test_the_checks_see_a_broken_link_and_a_stale_section(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Real heading\n[a](page.md#real-heading) [b](page.md#gone) [c](missing.md)\n")
    code = tmp_path / "code.yml"
    code.write_text("# the same names (reference section 9.3)\n")
    assert broken_links([str(page)]) == [
        "%s: link to page.md#gone: no such heading" % os.path.relpath(str(page), ROOT),
        "%s: link to missing.md: no such file" % os.path.relpath(str(page), ROOT),
    ]
    assert len(numbered_section_pointers([str(code)])) == 1
