# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Module warnings come back in the module's result, each test with its own.

On a node a module returns its warnings in its result. In a test process that has
also loaded controller code (the inventory and filter tests), ansible-core 2.19
shows them on the controller's display instead, and keeps them process-wide
otherwise. This fixture records what AnsibleModule.warn is given, per test, and
hands that list to the result, through the public warn/get_warnings functions
AnsibleModule calls (get_warning_messages before ansible-core 2.19).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.module_utils import basic


@pytest.fixture(autouse=True)
def module_warnings(monkeypatch):
    recorded = []

    def warn(warning, *args, **kwargs):
        recorded.append(warning)

    monkeypatch.setattr(basic, "warn", warn)
    for name in ("get_warnings", "get_warning_messages"):
        if hasattr(basic, name):
            monkeypatch.setattr(basic, name, lambda: list(recorded))
    return recorded
