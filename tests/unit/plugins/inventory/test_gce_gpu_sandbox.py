# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A sandbox's static inventory holds exactly what the gce_gpu plugin makes of the sandbox's emulator."""

import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "sandbox"))

from sandboxlib import emulator, inventory, layout  # noqa: E402  pylint: disable=wrong-import-position


@pytest.mark.parametrize("family", ["a3-mega", "a3-ultra", "a4x-max"])
def test_static_inventory_is_what_the_plugin_makes(family, make_emulator, run_plugin, config):
    plan = layout.plan("unit", family, 3, 150)
    static = inventory.render(plan, "/key")["all"]["children"]
    run = run_plugin(config(make_emulator(emulator.fixture(plan)), projects=[plan["project"]]))
    ssh = inventory.ssh_vars(plan, "/key")
    hosts = static["gpu_nodes"]["hosts"]
    assert all(hvars[k] == v for hvars in hosts.values() for k, v in ssh.items())
    assert dict((name, dict((k, v) for k, v in hvars.items() if k not in ssh)) for name, hvars in hosts.items()) \
        == run.hosts
    groups = dict((name, sorted(body["hosts"])) for name, body in static.items() if name != "gpu_nodes")
    assert len(groups) == 6 and all(run.group(name) == members for name, members in groups.items())
