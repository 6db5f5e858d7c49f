# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl_ld_so_conf writes the linker entry and runs ldconfig only when the cache is older than its sources."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
from ansible.module_utils import basic

from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl import nccl_ld_so_conf as logic
from ansible_collections.gpudirect.gcp.plugins.modules import nccl_ld_so_conf
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run


@pytest.fixture
def node(tmp_path, monkeypatch):
    """A conf.d directory, a library directory and an ldconfig that rewrites the cache."""
    (tmp_path / "ld.so.conf.d").mkdir()
    (tmp_path / "gib" / "lib64").mkdir(parents=True)
    cache = tmp_path / "ld.so.cache"
    calls = []

    def ldconfig(self, argv, **kw):
        calls.append(argv)
        cache.write_text("cache")
        # the cache is newer than everything it was built from
        later = max(os.path.getmtime(str(p)) for p in tmp_path.rglob("*")) + 1
        os.utime(str(cache), (later, later))
        return 0, "", ""

    monkeypatch.setattr(basic.AnsibleModule, "run_command", ldconfig)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/sbin/ldconfig")
    args = {"path": str(tmp_path / "ld.so.conf.d" / "gib.conf"), "lib_dir": str(tmp_path / "gib" / "lib64"),
            "cache": str(cache)}
    return args, calls


def test_check_mode_diff_then_write_then_nothing(node, capsys):
    args, calls = node
    checked = run(nccl_ld_so_conf, args, capsys, check_mode=True, diff=True)
    assert checked["changed"] and checked["cache_refreshed"] and not os.path.exists(args["path"]) and calls == []
    assert checked["diff"]["after"].endswith(args["lib_dir"] + "\n")
    written = run(nccl_ld_so_conf, args, capsys)
    assert written["changed"] and written["entry_changed"] and len(calls) == 1
    assert open(args["path"]).read() == logic.conf_text(args["lib_dir"])
    again = run(nccl_ld_so_conf, args, capsys)
    assert again["changed"] is False and len(calls) == 1


def test_a_stale_cache_alone_is_refreshed(node, capsys):
    args, calls = node
    run(nccl_ld_so_conf, args, capsys)
    os.utime(args["cache"], (1, 1))
    out = run(nccl_ld_so_conf, args, capsys)
    assert out["changed"] and not out["entry_changed"] and out["cache_refreshed"] and len(calls) == 2


def test_absent_removes_the_entry_once(node, capsys):
    args, calls = node
    run(nccl_ld_so_conf, args, capsys)
    absent = {"path": args["path"], "state": "absent", "cache": args["cache"]}
    removed = run(nccl_ld_so_conf, absent, capsys)
    assert removed["changed"] and not os.path.exists(args["path"]) and len(calls) == 2
    assert run(nccl_ld_so_conf, absent, capsys)["changed"] is False


def test_present_without_lib_dir_is_refused(node, capsys):
    args, _calls = node
    out = run(nccl_ld_so_conf, {"path": args["path"]}, capsys)
    assert out["failed"] is True and "lib_dir" in out["msg"]


def test_cache_stale_compares_with_existing_sources_only():
    times = {"cache": 10, "conf": 5, "dir": 11}
    assert logic.cache_stale("cache", ["conf", "gone"], getmtime=times.get, exists=times.__contains__) is False
    assert logic.cache_stale("cache", ["conf", "dir"], getmtime=times.get, exists=times.__contains__) is True
    assert logic.cache_stale("none", [], getmtime=times.get, exists=times.__contains__) is True


def test_a_symlinked_entry_is_replaced_and_its_target_never_shown(node, tmp_path, capsys):
    args, _calls = node
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$planted-hash:19000:0:99999:7:::\n")
    os.symlink(str(secret), args["path"])
    checked = run(nccl_ld_so_conf, args, capsys, check_mode=True, diff=True)
    assert checked["changed"] and "planted-hash" not in json.dumps(checked)
    run(nccl_ld_so_conf, args, capsys)
    assert not os.path.islink(args["path"]) and "planted-hash" in secret.read_text()


def test_a_directory_where_the_entry_goes_is_one_clear_line(node, capsys):
    args, _calls = node
    os.mkdir(args["path"])
    failed = run(nccl_ld_so_conf, args, capsys)
    assert failed["failed"] and failed["msg"] == "nccl_ld_so_conf: path %s is a directory; it must name a file" \
        % args["path"]
