# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""file_set: a set of files in one run, each written only where its content or mode differs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import file_set as helper
from ansible_collections.gpudirect.gcp.plugins.modules import file_set
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run


def _mode(path):
    return stat.S_IMODE(os.stat(str(path)).st_mode)


def _args(root):
    return {"files": [{"path": str(root / "lib" / "pkg" / "a.py"), "content": "A = 1\n"},
                      {"path": str(root / "lib" / "pkg" / "sub" / "b.py"), "content": "B = 2\n"},
                      {"path": str(root / "bin" / "tool"), "content": "#!/bin/sh\n", "mode": "0755"}],
            "dir_mode": "0750"}


def test_check_then_write_then_nothing(tmp_path, capsys):
    args = _args(tmp_path)
    checked = run(file_set, args, capsys, check_mode=True, diff=True)
    assert checked["changed"] and len(checked["written"]) == 3 and not (tmp_path / "lib").exists()
    assert [d["after"] for d in checked["diff"]] == ["A = 1\n", "B = 2\n", "#!/bin/sh\n"]
    done = run(file_set, args, capsys)
    assert done["written"] == [f["path"] for f in args["files"]]
    assert (tmp_path / "lib" / "pkg" / "sub" / "b.py").read_text() == "B = 2\n"
    assert _mode(tmp_path / "bin" / "tool") == 0o755 and _mode(tmp_path / "lib" / "pkg" / "a.py") == 0o644
    assert _mode(tmp_path / "lib" / "pkg" / "sub") & 0o027 == 0  # dir_mode, less the umask
    again = run(file_set, args, capsys, diff=True)
    assert again["changed"] is False and again["written"] == [] and again["diff"] == []


def test_only_what_differs_is_written_and_a_mode_alone_is_put_right(tmp_path, capsys):
    args = _args(tmp_path)
    run(file_set, args, capsys)
    (tmp_path / "lib" / "pkg" / "a.py").write_text(u"A = 0\n")
    os.chmod(str(tmp_path / "bin" / "tool"), 0o600)
    out = run(file_set, args, capsys, diff=True)
    assert out["written"] == [args["files"][0]["path"]] and out["mode_fixed"] == [args["files"][2]["path"]]
    assert out["diff"] == [{"before": "A = 0\n", "after": "A = 1\n", "before_header": args["files"][0]["path"],
                            "after_header": args["files"][0]["path"]}]
    assert _mode(tmp_path / "bin" / "tool") == 0o755 and (tmp_path / "lib" / "pkg" / "a.py").read_text() == "A = 1\n"


@pytest.mark.parametrize("files, message", [
    ([{"path": "relative/a", "content": ""}], "files[1] (relative/a): path must be an absolute file path"),
    ([{"path": "/x/a", "content": "", "mode": "rw-r--r--"}], "files[1] (/x/a): mode 'rw-r--r--' is not an octal mode"),
    ([{"path": "/x/a", "content": "1"}, {"path": "/x//a", "content": "2"}], "files[2] (/x//a): the path is given twice"),
])
def test_bad_entries_are_one_line_naming_the_entry(files, message, capsys):
    out = run(file_set, {"files": files}, capsys)
    assert out["failed"] and out["msg"].startswith("file_set: " + message)


def test_a_directory_where_a_file_goes_is_named_and_nothing_is_written(tmp_path, capsys):
    (tmp_path / "taken").mkdir()
    out = run(file_set, {"files": [{"path": str(tmp_path / "ok"), "content": "x"},
                                   {"path": str(tmp_path / "taken"), "content": "y"}]}, capsys)
    assert out["failed"] and "taken is a directory" in out["msg"] and not (tmp_path / "ok").exists()


def test_modes_as_yaml_gives_them():
    assert helper.parse_mode(0o644, "m") == 0o644 and helper.parse_mode("755", "m") == 0o755
    with pytest.raises(helper.FileSetError):
        helper.parse_mode(0o17777, "m")
    assert helper.entries([{"path": "/a/b", "content": ""}]) == [("/a/b", "", 0o644)]
