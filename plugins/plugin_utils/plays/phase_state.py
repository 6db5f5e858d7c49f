# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's half of gpudirect.gcp.phase_state: the digest of a phase's inputs and code.

The node's half (the record and the comparison) is module_utils/common/phase_state.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os


def digest_of(inputs, content_hashes):
    """One digest of a phase's resolved inputs and the hashes of the code that acts on them."""
    payload = json.dumps({"inputs": inputs, "content": content_hashes}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def tree_hash(root, skip_dirs=("__pycache__", "tests", "molecule")):
    """sha256 over every file's relative path and content under root (sorted); '' when root is absent."""
    if not root or not os.path.isdir(root):
        return ""
    digest = hashlib.sha256()
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in skip_dirs)
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(directory, name)
            digest.update(os.path.relpath(path, root).encode("utf-8") + b"\0")
            try:
                with open(path, "rb") as fh:
                    digest.update(fh.read())
            except (IOError, OSError):
                digest.update(b"unreadable")
            digest.update(b"\0")
    return digest.hexdigest()
