# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run the gce_gpu plugin in-process against an emulator served from a thread."""

import os
import sys

import pytest
import yaml

from ansible.inventory.data import InventoryData
from ansible.parsing.dataloader import DataLoader
from ansible.plugins.loader import init_plugin_loader, inventory_loader
from ansible.utils.collection_loader import AnsibleCollectionConfig

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
# The collection loader must own ansible_collections (as under ansible-test units).
# Test modules collected earlier may have imported it as a plain package: drop
# those entries so the loader re-imports them with collection metadata.
if AnsibleCollectionConfig.collection_finder is None:
    for _name in [m for m in sys.modules if m == "ansible_collections" or m.startswith("ansible_collections.")]:
        del sys.modules[_name]
    init_plugin_loader([os.path.join(ROOT, "build", "collections")])
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))

import compute_fleet as fx  # noqa: E402
import compute_harness as harness  # noqa: E402


standard_fixture = fx.mixed_fleet


@pytest.fixture
def emulator():
    with harness.ThreadEmulator(standard_fixture(), page_size=2) as emu:
        yield emu


@pytest.fixture
def make_emulator():
    started = []

    def start(fixture, page_size=None):
        emu = harness.ThreadEmulator(fixture, page_size=page_size).__enter__()
        started.append(emu)
        return emu

    yield start
    for emu in started:
        emu.__exit__()


class Run(object):
    def __init__(self, plugin, inventory, warnings):
        self.plugin = plugin
        self.inventory = inventory
        self.warnings = warnings

    @property
    def hosts(self):
        return dict((name, host.get_vars()) for name, host in self.inventory.hosts.items())

    def group(self, name):
        group = self.inventory.groups.get(name)
        return sorted(h.name for h in group.get_hosts()) if group else None


@pytest.fixture
def run_plugin(tmp_path, monkeypatch):
    """run_plugin(config, cache=True, name=...) -> Run; warnings are collected, not printed."""
    for var in ("GCP_PROJECT", "GCE_PROJECT", "GCP_AUTH_KIND", "GOOGLE_APPLICATION_CREDENTIALS",
                "GCP_SERVICE_ACCOUNT_FILE", "GCE_CREDENTIALS_FILE_PATH", "GCP_ACCESS_TOKEN"):
        monkeypatch.delenv(var, raising=False)

    def run(config, cache=True, name="test.gce_gpu.yml", env=None):
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        path = tmp_path / name
        path.write_text(yaml.safe_dump(config))
        plugin = inventory_loader.get("gpudirect.gcp.gce_gpu")
        module = sys.modules[type(plugin).__module__]
        # fast backoff keeps the retry tests short; the delays' shape is tested in module_utils
        monkeypatch.setattr(module.gce_api, "BACKOFF_BASE", 0.01)
        warnings = []
        monkeypatch.setattr(module.display, "warning", lambda msg, *a, **k: warnings.append(msg))
        inventory = InventoryData()
        plugin.parse(inventory, DataLoader(), str(path), cache=cache)
        try:  # as the inventory manager does after parse()
            plugin.update_cache_if_changed()
        except AttributeError:  # no cache configured
            pass
        return Run(plugin, inventory, warnings)

    return run


def base_config(emu, **extra):
    config = {"plugin": "gpudirect.gcp.gce_gpu", "api_endpoint": emu.url, "auth_kind": "accesstoken",
              "access_token": "test-token", "projects": ["proj-a"], "retry_max_time": 5}
    config.update(extra)
    return config


@pytest.fixture
def config():
    return base_config


@pytest.fixture
def fixture_data():
    return standard_fixture
