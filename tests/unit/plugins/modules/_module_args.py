# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""patch_module_args on every supported ansible-core: the core's own from 2.19 on, and the same
context manager before it (ansible-core 2.16 to 2.18 read a module's arguments from
basic._ANSIBLE_ARGS, the JSON a module gets on its standard input)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

try:
    from ansible.module_utils.testing import patch_module_args  # noqa: F401  pylint: disable=unused-import
except ImportError:  # ansible-core < 2.19
    import contextlib
    import json
    from unittest import mock

    from ansible.module_utils import basic
    from ansible.module_utils.common.text.converters import to_bytes

    @contextlib.contextmanager
    def patch_module_args(args=None):
        args = dict(args or {})
        args.setdefault("_ansible_remote_tmp", "/tmp")
        args.setdefault("_ansible_keep_remote_files", False)
        with mock.patch.object(basic, "_ANSIBLE_ARGS", to_bytes(json.dumps({"ANSIBLE_MODULE_ARGS": args}))):
            yield
