# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run the gce_gpu plugin in-process against an emulator served from a thread."""

import os
import sys

import pytest
import yaml

from ansible.inventory.data import InventoryData
from ansible.parsing.dataloader import DataLoader
from ansible import constants as C
from ansible.plugins.loader import fragment_loader
from ansible.utils.plugin_docs import get_docstring

from ansible_collections.gpudirect.gcp.plugins.inventory import gce_gpu

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "emulator"))

import compute_fleet as fx  # noqa: E402
import compute_harness as harness  # noqa: E402

NAME = "gpudirect.gcp.gce_gpu"
_DEFS = []


def new_plugin():
    """A plugin instance with its option definitions registered, as the plugin loader makes one.

    Through ansible-core's public config and doc APIs rather than the loader itself, so these tests need
    not install the collection loader, which would change how other test modules import the collection.
    """
    if not _DEFS:
        doc = get_docstring(gce_gpu.__file__, fragment_loader, collection_name="gpudirect.gcp",
                            plugin_type="inventory")[0]
        C.config.initialize_plugin_configuration_definitions("inventory", NAME, doc["options"])
        _DEFS.append(True)
    plugin = gce_gpu.InventoryModule()
    plugin._load_name = NAME  # the name the loader gives a plugin it loads; options are looked up by it
    plugin._redirected_names = [NAME]  # the names it answers to (ansible-core < 2.19 reads them in parse)
    return plugin


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
        """{host: the variables the plugin set on it} (without ansible-core's inventory_hostname and the like)."""
        return dict((name, dict((k, v) for k, v in host.vars.items() if k not in ("inventory_file", "inventory_dir")))
                    for name, host in self.inventory.hosts.items())

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
        plugin = new_plugin()
        module = gce_gpu
        # fast backoff keeps the retry tests short; the delays' shape is tested in module_utils
        monkeypatch.setattr(module.gce_api, "BACKOFF_BASE", 0.01)
        # errors raise, as in a refresh; the one-line exit of a run's first parse has tests of its own
        monkeypatch.setattr(module, "_stop_on_error", lambda: False)
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


@pytest.fixture
def plugin_factory():
    return new_plugin
