# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a node must have before the configuration phases can succeed.

Each check reads files or looks up commands only, so it behaves the same in
check mode, and names one missing prerequisite in one line with what to do.
The checks are the ones whose absence otherwise shows as a failure deep in a
later phase: a guest OS the phases can configure, the NVIDIA driver, A3 Mega's
dmabuf import helper, a container engine for RxDM, nccl-tests or a way to
build them, gIB's repository, the family's own host software (A4X Max: DOCA-OFED,
openibd, asapd-lite), and the image registry reachable from the node (the one
check that opens a connection, a TCP handshake and nothing more).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import socket

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import container_engine as engines
from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.common.sysfs import read_text

DRIVER_VERSION_FILE = "/sys/module/nvidia/version"
DMABUF_HELPER = "/dev/dmabuf_import_helper"
DMABUF_MODULE = "import-helper"
NVCC_PATHS = ("/usr/local/cuda/bin/nvcc",)
NCCL_TESTS_PROBE = "all_reduce_perf"
OS_RELEASE = "/etc/os-release"
APT_SOURCES = ("/etc/apt/sources.list", "/etc/apt/sources.list.d/*.list", "/etc/apt/sources.list.d/*.sources")
DNF_REPOS = ("/etc/yum.repos.d/*.repo",)


def problem(what, message, fix):
    return {"what": what, "message": message, "fix": fix, "line": "%s: %s; %s" % (what, message, fix)}


def _source(path, path_sources):
    """Where a path is really read: a stand-in's path where path_sources maps it."""
    return (path_sources or {}).get(path, path)


def driver(path_sources=None):
    """(version or None, problems)."""
    version = read_text(_source(DRIVER_VERSION_FILE, path_sources)) or None
    if version:
        return version, []
    return None, [problem("NVIDIA driver", "not loaded (%s missing)" % DRIVER_VERSION_FILE,
                          "use an image with the driver (Google's accelerator images, or the cluster-toolkit "
                          "A3/A4 images) or install it, then reboot")]


def _module_available(name, root="/"):
    """The kernel module is loaded, or its file is there for the running kernel (DKMS: updates/dkms)."""
    under = name.replace("-", "_")
    if os.path.isdir(os.path.join(root, "sys/module", under)):
        return True
    release = read_text(os.path.join(root, "proc/sys/kernel/osrelease"))
    if not release:
        return False
    top = os.path.join(root, "lib/modules", release)
    for dirpath, _dirs, files in os.walk(top):
        if any(f.split(".ko")[0].replace("-", "_") == under for f in files if ".ko" in f):
            return True
    return False


def dmabuf_helper(transport, path_sources=None, root="/"):
    """A3 Mega: the helper device, or the import-helper module that gpu_host loads to make it."""
    if transport != "tcpxo" or os.path.exists(_source(DMABUF_HELPER, path_sources)):
        return []
    if _module_available(DMABUF_MODULE, root):
        return []
    return [problem("dmabuf import helper", "%s is missing and no %s kernel module is there to make it; A3 Mega's "
                    "RxDM refuses to start without it" % (DMABUF_HELPER, DMABUF_MODULE),
                    "install the dmabuf-import-helper DKMS package for the running kernel (Google's A3 Mega images "
                    "ship it), or use such an image")]


def container_engine(transport, which):
    if transport not in ("tcpx", "tcpxo"):
        return []
    if any(which(name) for name in engines.ENGINES):
        return []
    return [problem("container engine", "none of %s is installed; RxDM and the plugin installer run as containers"
                    % ", ".join(engines.ENGINES), "install docker (with the NVIDIA container toolkit) or podman")]


def nccl_tests(binary_dir, which, root="/"):
    """nccl-tests programs in binary_dir, or (binary_dir empty) what building them needs."""
    if binary_dir:
        probe = os.path.join(binary_dir, NCCL_TESTS_PROBE)
        if os.path.exists(probe):
            return []
        return [problem("nccl-tests", "%s is missing" % probe,
                        "install the nccl-tests programs there, or leave nccl_tests_binary_dir empty to build them")]
    missing = []
    if not (which("nvcc") or any(os.path.exists(os.path.join(root, p.lstrip("/"))) for p in NVCC_PATHS)):
        missing.append("nvcc (the CUDA toolkit)")
    if not which("make"):
        missing.append("make")
    if not missing:
        return []
    return [problem("nccl-tests", "no programs given (nccl_tests_binary_dir) and no way to build them: %s missing"
                    % ", ".join(missing),
                    "install the CUDA toolkit and make, or set nccl_tests_binary_dir to where the programs are")]


def _repo_files(pkg_mgr, root="/"):
    patterns = APT_SOURCES if pkg_mgr == "apt" else DNF_REPOS
    out = []
    for pattern in patterns:
        out.extend(sorted(glob.glob(os.path.join(root, pattern.lstrip("/")))))
    return out


def gib_repository(family, pkg_mgr, root="/"):
    repos = families.FAMILIES[family]["plugin"].get("package_repos") or {}
    manager = "dnf" if pkg_mgr in ("dnf", "dnf5", "yum") else pkg_mgr
    name = repos.get(manager)
    if not repos:
        return []
    if not name:
        return [problem("gIB repository", "no gIB package repository is known for package manager %s" % pkg_mgr,
                        "use an apt or dnf based image, or install gIB from its image (nccl_plugin_gib_method: "
                        "image)")]
    for path in _repo_files(manager, root):
        # a source file is the admin's: undecodable bytes must not stop the check
        try:
            with open(path, "rb") as fh:
                text = fh.read().decode("utf-8", "replace")
        except (IOError, OSError):
            continue
        if any(name in line and not line.lstrip().startswith("#") for line in text.splitlines()):
            return []
    return [problem("gIB repository", "no %s source names %s, where the nccl-gib package comes from"
                    % (manager, name),
                    "add Google's %s repository (see docs/runtime.md), or install gIB from its image "
                    "(nccl_plugin_gib_method: image)" % name)]


def unit_enabled(unit, root="/"):
    """Whether a systemd unit is enabled: `systemctl enable` links it into a target's .wants directory."""
    for base in ("etc/systemd/system", "usr/lib/systemd/system", "lib/systemd/system"):
        if glob.glob(os.path.join(root, base, "*.wants", unit)):
            return True
    return False


def family_software(family, which, root="/"):
    """The host software the family's VMs need and no phase installs (the family table's host prerequisites)."""
    wanted = families.FAMILIES[family]["host"].get("prerequisites") or {}
    source = wanted.get("source", "the family table")
    out = []
    for command, what in sorted((wanted.get("commands") or {}).items()):
        if not which(command):
            out.append(problem(what, "not installed (no %s command)" % command,
                               "install it as the family's images do [%s]; the phases do not" % source))
    for unit in wanted.get("units") or []:
        if not unit_enabled(unit, root):
            out.append(problem(unit, "not enabled", "install and enable it as the family's images do [%s]; "
                               "the phases do not" % source))
    return out


GUEST_OS_CAUSE = ("Container-Optimized OS has a read-only root and resets /etc at every boot, so the MTUs, units "
                  "and files the configuration phases write would be lost at the next reboot")
GUEST_OS_FIX = ("use Google's Ubuntu, Debian or Rocky based accelerator images (or GKE's own installers on GKE); "
                "gpudirect.gcp.diagnose still reads such a node")


def os_release_id(text):
    """The ID field of an os-release text ('' when it has none)."""
    for line in (text or "").splitlines():
        if line.startswith("ID="):
            return line.split("=", 1)[1].strip().strip('"').strip("'")
    return ""


def refuses_configuration(text):
    """Whether an os-release text names Container-Optimized OS, which the configuration phases refuse."""
    return os_release_id(text) == "cos"


def guest_os(root="/"):
    """Container-Optimized OS cannot keep what the roles write: refuse it before anything changes."""
    if not refuses_configuration(read_text(os.path.join(root, OS_RELEASE.lstrip("/")))):
        return []
    return [problem("guest OS", GUEST_OS_CAUSE, GUEST_OS_FIX)]


def _host_port(registry):
    """'host[:port][/path]' -> (host, port); an Artifact Registry host is served on 443."""
    name = registry.split("/", 1)[0]
    if name.count(":") == 1:
        host, port = name.split(":")
        if port.isdigit():
            return host, int(port)
    return name, 443


def registries(names, connect=None, timeout_s=5.0):
    """Each registry the phases pull from must take a TCP connection from the node."""
    connect = connect or socket.create_connection
    out = []
    for name in names or []:
        host, port = _host_port(name)
        try:
            connect((host, port), timeout_s).close()
        except (OSError, socket.timeout) as exc:
            why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            out.append(problem("registry", "%s:%d cannot be reached from the node (%s); the phases pull RxDM and the "
                               "NCCL plugin from it" % (host, port, why),
                               "let the node reach it: Cloud NAT or an external address for the internet, or "
                               "Private Google Access on the node's subnet for Artifact Registry"))
    return out


def check(family, which, pkg_mgr=None, path_sources=None, nccl_tests_binary_dir=None, gib_repository_check=True,
          root="/", registry_names=None, connect=None):
    """{driver_version, problems: [{what, message, fix, line}]} for a node of a family."""
    transport = families.FAMILIES[family]["transport"]
    cos = guest_os(root)
    if cos:
        # nothing else matters on an image the phases cannot configure
        return {"driver_version": driver(path_sources)[0], "problems": cos}
    version, problems = driver(path_sources)
    problems += dmabuf_helper(transport, path_sources, root)
    problems += container_engine(transport, which)
    problems += nccl_tests(nccl_tests_binary_dir, which, root)
    problems += family_software(family, which, root)
    if transport == "gib" and gib_repository_check:
        problems += gib_repository(family, pkg_mgr, root)
    problems += registries(registry_names, connect)
    return {"driver_version": version, "problems": problems}
