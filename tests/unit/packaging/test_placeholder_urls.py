# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the collection and its AWX project are published is not known here: every such URL is a clear
placeholder (a host under example.com, which is reserved for examples), never someone else's real
organisation."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _load(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def test_galaxy_urls_are_placeholders():
    galaxy = _load("galaxy.yml")
    for key in ("repository", "documentation", "homepage", "issues"):
        assert re.match(r"https://[\w.-]*example\.com/", galaxy[key]), (key, galaxy[key])


def test_the_awx_project_points_at_placeholders():
    urls = [c["name"] for c in _load("awx", "project", "collections", "requirements.yml")["collections"]]
    with open(os.path.join(ROOT, "awx", "controller", "projects.yml"), encoding="utf-8") as fh:
        urls += re.findall(r"scm_url:\s*(\S+)", fh.read())
    assert urls and all(re.match(r"https://[\w.-]*example\.com/", u) for u in urls), urls
