# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""host_prereqs_info as a module: the same answer in check mode, one line for a bad family."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.modules import host_prereqs_info
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run


def test_names_what_is_missing_and_changes_nothing(tmp_path, capsys):
    (tmp_path / "version").write_text("570.172.08\n")
    args = {"family": "a3-mega", "nccl_tests_binary_dir": str(tmp_path / "none"),
            "path_sources": {"/sys/module/nvidia/version": str(tmp_path / "version"),
                             "/dev/dmabuf_import_helper": str(tmp_path / "version")}}
    out = run(host_prereqs_info, args, capsys)
    assert out["changed"] is False and out["driver_version"] == "570.172.08"
    assert "nccl-tests" in [p["what"] for p in out["problems"]]
    checked = run(host_prereqs_info, args, capsys, check_mode=True)
    assert checked["problems"] == out["problems"]


def test_unknown_family_is_one_line(capsys):
    out = run(host_prereqs_info, {"family": "a9"}, capsys)
    assert out["failed"] and out["msg"].startswith("family: unknown GPU family 'a9'")
