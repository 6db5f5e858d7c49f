# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a node needs to build nccl-tests with MPI against the NCCL its plugin brings.

nccl-tests are compiled against NCCL's headers and run with the plugin's own
libnccl.so.2 first on LD_LIBRARY_PATH (the TCPX/TCPXO installers' --install-nccl
copy, gIB's pinned libnccl2).  The headers must be that NCCL's version: a newer
header can compile in calls the older library lacks.  Peers build inside NGC
containers that bring CUDA, NCCL and Open MPI [CT; DS]; on the host that means
Open MPI's development files and libnccl-dev from NVIDIA's CUDA repository.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils import families

MPI_PACKAGES = {
    "apt": ["openmpi-bin", "libopenmpi-dev"],
    "dnf": ["openmpi", "openmpi-devel"],
}
NCCL_DEV = {"apt": "libnccl-dev", "dnf": "libnccl-devel"}


def build_packages(family, pkg_mgr, plugin_version=None):
    """{packages: [...], nccl_version: str or None, warning: str or None} for building nccl-tests.

    plugin_version: the plugin the node runs (default: the family table's).
    """
    if family not in families.FAMILIES:
        raise ValueError("unknown GPU family %r; known: %s" % (family, ", ".join(families.family_names())))
    manager = "dnf" if pkg_mgr in ("dnf", "dnf5", "yum") else pkg_mgr
    if manager not in MPI_PACKAGES:
        raise ValueError("no nccl-tests build packages known for package manager %r (apt or dnf)" % (pkg_mgr,))
    plugin = families.FAMILIES[family]["plugin"]
    # an exact package version where the table pins one (gIB's libnccl2), else the plugin's NCCL release
    exact = plugin.get("nccl_package_version")
    release = families.plugin_nccl_version(family, plugin_version)
    dev = NCCL_DEV[manager]
    warning = None
    if exact:
        spec = "%s=%s" % (dev, exact) if manager == "apt" else "%s-%s" % (dev, exact.split("+")[0])
    elif release:
        # CUDA repository versions carry a -1+cudaX.Y suffix: match any build of that release
        spec = "%s=%s-*" % (dev, release) if manager == "apt" else "%s-%s*" % (dev, release)
    else:
        spec = dev
        warning = ("the NCCL version of the %s plugin %s is not published: nccl-tests are built against the "
                   "packaged %s, which may be newer than the plugin's NCCL" % (family, plugin_version or plugin.get("version"), dev))
    return {"packages": MPI_PACKAGES[manager] + [spec], "nccl_version": exact or release, "warning": warning}
