# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_host_info's logic, on a node tree of files: modules, PCI functions, tools and units."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import gpu_host

KERNEL = "6.8.0-1015-gcp"


def write(path, text=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_module_file_anywhere_under_the_kernel_directory_counts_with_dash_or_underscore(tmp_path):
    write(tmp_path / "modules" / KERNEL / "updates" / "dkms" / "import_helper.ko.zst")
    (tmp_path / "sys" / "module" / "nvidia").mkdir(parents=True)
    found = gpu_host.kernel_modules(["import-helper", "nvidia", "gve"], KERNEL, str(tmp_path / "modules"),
                                    str(tmp_path / "sys" / "module"))
    assert found["module_dir"] is True
    helper = found["modules"]["import-helper"]
    assert helper["file"].endswith("updates/dkms/import_helper.ko.zst")
    assert (helper["loaded"], helper["available"]) == (False, True)
    # loaded without a file (built in): available
    assert found["modules"]["nvidia"] == {"file": "", "loaded": True, "available": True}
    assert found["modules"]["gve"] == {"file": "", "loaded": False, "available": False}


def test_a_kernel_without_a_module_directory_finds_only_loaded_modules(tmp_path):
    (tmp_path / "sys" / "module" / "import_helper").mkdir(parents=True)
    found = gpu_host.kernel_modules(["import-helper"], "5.15.0-other", str(tmp_path / "modules"),
                                    str(tmp_path / "sys" / "module"))
    assert found["module_dir"] is False
    assert found["modules"]["import-helper"] == {"file": "", "loaded": True, "available": True}
    # a name like the module's but another module is not it
    write(tmp_path / "modules" / KERNEL / "import-helper-extra.ko")
    other = gpu_host.kernel_modules(["import-helper"], KERNEL, str(tmp_path / "modules"), str(tmp_path / "none"))
    assert other["modules"]["import-helper"]["available"] is False


def pci_tree(tmp_path, functions):
    devices = tmp_path / "pci"
    for address, (vendor, device) in functions.items():
        write(devices / address / "vendor", vendor + "\n")
        write(devices / address / "device", device + "\n")
    return devices


def test_pci_functions_match_vendor_and_device_and_the_target_directory_is_counted(tmp_path):
    devices = pci_tree(tmp_path, {"0000:05:00.1": ("0x1ae0", "0x0084"), "0000:06:00.1": ("0x1AE0", "0x0084"),
                                  "0000:07:00.0": ("0x1ae0", "0x0042"), "0000:08:00.0": ("0x10de", "0x0084")})
    (devices / "0000:09:00.0").mkdir()  # a function whose ids cannot be read
    target = tmp_path / "aperture_devices"
    for name in ("0000:05:00.1", "0000:06:00.1"):
        write(target / name)
    rule = {"name": "00-a3-megagpu.rules", "pci_vendor": "0x1ae0", "pci_device": "0x0084", "target_dir": str(target)}
    assert gpu_host.pci_rules([rule], str(devices)) == [
        {"name": "00-a3-megagpu.rules", "functions": 2, "target_entries": 2}]
    missing = dict(rule, target_dir=str(tmp_path / "none"))
    assert gpu_host.pci_rules([missing], str(tmp_path / "no-pci")) == [
        {"name": "00-a3-megagpu.rules", "functions": 0, "target_entries": 0}]


def test_package_manager_and_engines_are_the_paths_that_exist():
    have = {"/usr/bin/rpm", "/usr/bin/podman", "/usr/local/bin/docker"}.__contains__
    assert gpu_host.package_manager(have) == "rpm"
    assert gpu_host.package_manager({"/usr/bin/dpkg-query", "/usr/bin/rpm"}.__contains__) == "dpkg"
    assert gpu_host.package_manager(set().__contains__) == "none"
    assert gpu_host.existing(["/usr/bin/docker", "/usr/local/bin/docker", "/usr/bin/podman"], have) == [
        "/usr/local/bin/docker", "/usr/bin/podman"]


def test_unit_load_states_come_in_the_order_asked_and_a_missing_block_is_not_found():
    units = ["nvidia-persistenced.service", "nvidia-imex.service"]
    assert gpu_host.unit_load_states("LoadState=loaded\n\nLoadState=masked\n", units) == {
        "nvidia-persistenced.service": "loaded", "nvidia-imex.service": "masked"}
    assert gpu_host.unit_load_states("LoadState=loaded\n", units)["nvidia-imex.service"] == "not-found"
    assert gpu_host.unit_load_states("", units) == dict((unit, "not-found") for unit in units)
