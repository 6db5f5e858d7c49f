# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter that turns the output of one nccl-tests run into data (code in module_utils/nccl_tests/nccl_parse.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_env_used, nccl_parse


def nccl_tests_parse(data, collective=None):
    # The parser never raises: bad input comes back as ok=false with an error.
    if hasattr(data, "get") and "stdout" in data and "results" not in data:
        data = data.get("stdout") or ""  # a registered command result
    res = nccl_parse.parse(data, collective=collective)
    # what NCCL echoed of its environment, as every other writer shows it (credentials masked)
    res["env_set"] = dict((nccl_env_used.shown(k), nccl_env_used.shown(v)) for k, v in res["env_set"].items())
    res["env_invalid"] = dict((nccl_env_used.shown(k), nccl_env_used.shown(v)) for k, v in res["env_invalid"].items())
    res["plugins"] = nccl_env_used.shown_plugins(res["plugins"])
    return res


class FilterModule(object):
    def filters(self):
        return {"nccl_tests_parse": nccl_tests_parse}
