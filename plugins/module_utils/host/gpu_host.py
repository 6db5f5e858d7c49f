# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_host_info's logic: what the gpu_host role needs to know about a node, read in one pass.

Every function takes the paths it reads as arguments, so that the tests (and a node whose
files sit elsewhere) can point it at a tree of their own.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import systemd_show

PACKAGE_MANAGERS = (("dpkg", "/usr/bin/dpkg-query"), ("rpm", "/usr/bin/rpm"))
# udev's control socket: there while udevd runs
UDEV_CONTROL = "/run/udev/control"
MODULE_SUFFIXES = (".ko", ".ko.xz", ".ko.zst", ".ko.gz")


def module_names(name):
    """The file names a kernel module can have: kmod treats - and _ in a name alike."""
    stems = sorted(set([name, name.replace("-", "_")]))
    return set(stem + suffix for stem in stems for suffix in MODULE_SUFFIXES)


def module_files(module_dir, names, walk=os.walk):
    """{name: path of its module file under module_dir, or ''} (what `modinfo -n` finds: DKMS puts
    it under updates/dkms); a module_dir that does not exist finds none."""
    wanted = dict((name, module_names(name)) for name in names)
    found = dict((name, "") for name in names)
    for root, dirs, files in walk(module_dir):
        dirs.sort()
        for filename in sorted(files):
            for name, candidates in wanted.items():
                if not found[name] and filename in candidates:
                    found[name] = os.path.join(root, filename)
    return found


def kernel_modules(names, kernel, modules_root="/lib/modules", sys_module="/sys/module",
                   isdir=os.path.isdir, exists=os.path.exists, walk=os.walk):
    """{module_dir, modules: {name: {file, loaded, available}}}: a module is available when the running
    kernel has its file or has it loaded (built in, or loaded from elsewhere)."""
    module_dir = os.path.join(modules_root, kernel)
    has_dir = bool(names) and isdir(module_dir)
    files = module_files(module_dir, names, walk) if has_dir else dict((name, "") for name in names)
    modules = {}
    for name in names:
        loaded = exists(os.path.join(sys_module, name.replace("-", "_")))
        modules[name] = dict(file=files[name], loaded=loaded, available=bool(files[name]) or loaded)
    return dict(module_dir=has_dir, modules=modules)


def read_id(path):
    """A PCI id file's value (0x1ae0), lower case, or '' when it cannot be read."""
    try:
        with open(path) as fh:
            return fh.read().strip().lower()
    except (IOError, OSError, UnicodeDecodeError):
        return ""


def pci_functions(devices_dir, vendor, device, listdir=os.listdir, read=read_id):
    """The PCI functions (their addresses, sorted) whose vendor and device ids are the ones given."""
    try:
        names = sorted(listdir(devices_dir))
    except (IOError, OSError):
        return []
    vendor, device = vendor.lower(), device.lower()
    return [name for name in names
            if read(os.path.join(devices_dir, name, "vendor")) == vendor
            and read(os.path.join(devices_dir, name, "device")) == device]


def count_entries(directory, listdir=os.listdir):
    """How many entries directory holds (0 when it does not exist)."""
    try:
        return len(listdir(directory))
    except (IOError, OSError):
        return 0


def pci_rules(rules, devices_dir="/sys/bus/pci/devices", listdir=os.listdir, read=read_id):
    """For each rule ({name, pci_vendor, pci_device, target_dir}): the PCI functions it binds and the
    entries of the directory it binds them into."""
    out = []
    for rule in rules:
        functions = pci_functions(devices_dir, rule["pci_vendor"], rule["pci_device"], listdir, read)
        out.append(dict(name=rule["name"], functions=len(functions),
                        target_entries=count_entries(rule["target_dir"], listdir)))
    return out


def package_manager(exists=os.path.exists):
    """dpkg, rpm or none: the first whose query command the node has."""
    for name, path in PACKAGE_MANAGERS:
        if exists(path):
            return name
    return "none"


def existing(paths, exists=os.path.exists):
    """The paths that exist, in the order given."""
    return [path for path in paths if exists(path)]


def unit_load_states(text, units):
    """{unit: LoadState} from `systemctl show -p LoadState -- UNIT...` (systemd_show.show_argv); a unit
    without a block, or with an empty LoadState, is not-found."""
    found = systemd_show.parse_show(text, units, ("LoadState",))
    return dict((unit, found[unit].get("LoadState") or "not-found") for unit in units)
