# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Run modules as they run on a node, each test with its own warnings.

ansible-core 2.19 sends module warnings straight to the controller's Display
once controller code (the inventory tests) has been imported in the same
process; on a node they are returned in the result instead, which is what
these tests check.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.module_utils.common import warnings as ansible_warnings

try:
    from ansible.module_utils import _internal as module_internal
except ImportError:  # ansible-core < 2.19 has no controller switch
    module_internal = None


@pytest.fixture(autouse=True)
def module_side_of_the_process(monkeypatch):
    if module_internal is not None and hasattr(module_internal, "is_controller"):
        monkeypatch.setattr(module_internal, "is_controller", False)


@pytest.fixture(autouse=True)
def own_warnings(monkeypatch):
    """Module warnings are process-global; keep each test's to itself."""
    monkeypatch.setattr(ansible_warnings, "_global_warnings", {})
    monkeypatch.setattr(ansible_warnings, "_global_deprecations", {})
