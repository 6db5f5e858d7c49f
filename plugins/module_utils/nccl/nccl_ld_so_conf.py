# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A dynamic linker entry for the NCCL plugin's library directory, and whether ld.so.cache is stale.

ldconfig rewrites the cache on every run, so the cache is up to date when it is
newer than everything it is built from here: the entry, the directory that
holds the entries (a removed entry changes it) and the library directory.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

HEADER = "# Managed by Ansible (gpudirect.gcp.nccl_plugin): gIB NCCL net plugin\n"


def conf_text(lib_dir):
    return "%s%s\n" % (HEADER, lib_dir)


def cache_stale(cache, sources, getmtime=os.path.getmtime, exists=os.path.exists):
    """True when cache is missing or older than any of the sources that exist."""
    if not exists(cache):
        return True
    built = getmtime(cache)
    return any(getmtime(path) > built for path in sources if exists(path))
