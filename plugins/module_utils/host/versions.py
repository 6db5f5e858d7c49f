# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU software versions of a node, read from files only (gpudirect.gcp.gpu_versions_info).

Each reader takes the file's text (None when the file is absent) and returns the version, or None
when the component is not there or says nothing usable. Plain Python (no ansible import).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

KERNEL_FILE = "/proc/sys/kernel/osrelease"
CUDA_FILE = "/usr/local/cuda/version.json"
NCCL_PREFIX = "libnccl.so."
NCCL_PATTERN = re.compile(r"^libnccl\.so\.2\..+")


def driver_file(sys_dir="/sys"):
    """The driver's version file under a sysfs root (a test bed without GPUs has a stand-in one)."""
    return os.path.join(sys_dir or "/sys", "module", "nvidia", "version")


def first_line(text):
    return text.strip() or None if text is not None else None


def cuda(text):
    """CUDA's version.json: {"cuda": {"version": "12.8.1"}}."""
    try:
        return str(json.loads(text)["cuda"]["version"]) if text else None
    except (ValueError, KeyError, TypeError):
        return None


def plugin(text):
    """The NCCL net plugin's install record: the tag it installed."""
    try:
        tag = json.loads(text).get("tag") if text else None
    except (ValueError, AttributeError):
        return None
    return str(tag) if tag else None


def rxdm(text, image):
    """The tag (or digest) of RxDM's image in its systemd unit."""
    if not text or not image:
        return None
    found = re.search(re.escape(image.rstrip("/").split("/")[-1]) + r"[:@]([A-Za-z0-9_.:-]+)", text)
    return found.group(1) if found else None


def nccl(names):
    """The NCCL releases the libnccl.so.2.* file names in names give, joined by commas, or None."""
    found = sorted(set(name[len(NCCL_PREFIX):] for name in names if NCCL_PATTERN.match(name)))
    return ",".join(found) or None


def nccl_names(lib_dirs):
    names = []
    for directory in lib_dirs:
        if os.path.isdir(directory):
            try:
                names.extend(os.listdir(directory))
            except OSError:
                continue
    return names
