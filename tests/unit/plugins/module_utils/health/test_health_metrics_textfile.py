# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node agent's metrics file goes only into a textfile directory no one else may write: whoever
may write it could replace the file node_exporter reads as this node's health."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils.health import health_metrics as hm

OTHER_UID = 4242
TEXT = "gpudirect_node_health_ok 1\n"


def test_the_file_is_written_whole_0644_and_a_missing_directory_made_0755(tmp_path):
    directory = tmp_path / "textfile"
    hm.write_textfile(str(directory), "gpudirect_node_health.prom", TEXT)
    assert (directory / "gpudirect_node_health.prom").read_text() == TEXT
    assert stat.S_IMODE(os.stat(str(directory / "gpudirect_node_health.prom")).st_mode) == 0o644
    assert stat.S_IMODE(os.stat(str(directory)).st_mode) == 0o755
    assert os.listdir(str(directory)) == ["gpudirect_node_health.prom"]


def test_a_link_where_the_file_goes_is_replaced_never_followed(tmp_path):
    directory = tmp_path / "textfile"
    directory.mkdir(0o755)
    (tmp_path / "elsewhere").write_text(u"keep")
    (directory / "gpudirect_node_health.prom").symlink_to(tmp_path / "elsewhere")
    hm.write_textfile(str(directory), "gpudirect_node_health.prom", TEXT)
    assert (tmp_path / "elsewhere").read_text() == u"keep"
    assert not os.path.islink(str(directory / "gpudirect_node_health.prom"))


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o1777, 0o757], ids=oct)
def test_a_directory_others_may_write_is_refused_in_one_line(tmp_path, mode):
    directory = tmp_path / "textfile"
    directory.mkdir()
    directory.chmod(mode)
    with pytest.raises(OSError) as excinfo:
        hm.write_textfile(str(directory), "gpudirect_node_health.prom", TEXT)
    text = str(excinfo.value)
    assert "\n" not in text and str(directory) in text and "writable by group or others" in text
    assert os.listdir(str(directory)) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_a_directory_another_user_owns_is_refused(tmp_path):
    directory = tmp_path / "textfile"
    directory.mkdir(0o755)
    os.chown(str(directory), OTHER_UID, -1)
    with pytest.raises(OSError, match="uid %d" % OTHER_UID):
        hm.write_textfile(str(directory), "gpudirect_node_health.prom", TEXT)
    assert os.listdir(str(directory)) == []


def test_a_directory_that_is_a_link_to_one_others_may_write_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (tmp_path / "textfile").symlink_to(shared)
    with pytest.raises(OSError, match="writable by group or others"):
        hm.write_textfile(str(tmp_path / "textfile"), "gpudirect_node_health.prom", TEXT)
    assert os.listdir(str(shared)) == []
