# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a node's NVIDIA driver libraries are, and how a container gets them.

COS puts the driver in /var/lib/nvidia/lib64 and has no container toolkit:
containers mount that directory and get the GPUs as devices.  Ubuntu and Debian
images with the packaged driver keep libcuda.so.1 in the system library
directory and run nvidia-container-toolkit, which injects the libraries and
devices into a container started with `--gpus all`.  Pure functions over a
root path, so unit tests can point them at a fake tree.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

LIBCUDA = "libcuda.so.1"
COS_LIB_DIR = "/var/lib/nvidia/lib64"
HOST_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib")
# what `--gpus` needs: the OCI hook docker calls, or a CDI spec (podman)
TOOLKIT_COMMANDS = ("nvidia-container-runtime-hook", "nvidia-ctk")
CDI_SPECS = ("/etc/cdi/nvidia.yaml", "/etc/cdi/nvidia.json", "/var/run/cdi/nvidia.yaml", "/var/run/cdi/nvidia.json")

COS = "cos_driver_dir"
TOOLKIT = "container_toolkit"
HOST = "host_driver_dir"


def _under(root, path):
    return os.path.join(root, path.lstrip("/")) if root not in ("", "/") else path


def find(which, root="/", cos_lib_dir=COS_LIB_DIR, host_lib_dirs=HOST_LIB_DIRS, exists=os.path.exists):
    """Describe the node's driver and how RxDM's container gets it.

    which(name) -> path or None looks a command up on PATH.
    Returns a dict: cos_lib_dir and host_lib_dir (the directories holding libcuda.so.1,
    or None), container_toolkit (what provides `--gpus`, or None), source (one of
    COS, TOOLKIT, HOST, or None when nothing was found), mount (the host directory to
    mount where RxDM looks for the libraries, or None), gpus_flag (whether `--gpus all`
    can work), summary (one line for the operator).
    """
    cos = cos_lib_dir if cos_lib_dir and exists(_under(root, os.path.join(cos_lib_dir, LIBCUDA))) else None
    host = next((d for d in host_lib_dirs if exists(_under(root, os.path.join(d, LIBCUDA)))), None)
    toolkit = next((p for p in (which(c) for c in TOOLKIT_COMMANDS) if p), None)
    if not toolkit:
        toolkit = next((s for s in CDI_SPECS if exists(_under(root, s))), None)
    out = {"cos_lib_dir": cos, "host_lib_dir": host, "container_toolkit": toolkit, "gpus_flag": bool(toolkit)}
    if cos:
        out.update(source=COS, mount=cos, summary="%s mounted from %s (COS-style driver directory)%s"
                   % (LIBCUDA, cos, "; --gpus all through %s" % toolkit if toolkit else
                      "; GPUs passed as devices (no NVIDIA container toolkit)"))
    elif toolkit:
        out.update(source=TOOLKIT, mount=None, summary="injected by the NVIDIA container toolkit (%s) with "
                   "--gpus all; the driver's %s is in %s" % (toolkit, LIBCUDA, host or "no directory searched"))
    elif host:
        out.update(source=HOST, mount=host, summary="%s mounted from %s (packaged driver, no container toolkit); "
                   "GPUs passed as devices" % (LIBCUDA, host))
    else:
        out.update(source=None, mount=None, summary="no NVIDIA driver found: no %s in %s, and no NVIDIA container "
                   "toolkit (%s, or a CDI spec)" % (LIBCUDA, ", ".join([cos_lib_dir] + list(host_lib_dirs)),
                                                    ", ".join(TOOLKIT_COMMANDS)))
    return out
