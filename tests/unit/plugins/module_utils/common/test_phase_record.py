# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The record of a phase's full run: fingerprints, unit states, and the lines that say what differs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpudirect.gcp.plugins.module_utils.common import phase_state as ps
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import phase_state as controller


def test_fingerprint_tells_content_mode_entries_and_absence(tmp_path):
    f = tmp_path / "sysctl.conf"
    f.write_text("net.core.optmem_max = 131072\n")
    os.chmod(str(f), 0o644)
    first = ps.fingerprint(str(f))
    assert first.startswith("file 644 ") and ps.fingerprint(str(f)) == first
    f.write_text("net.core.optmem_max = 20480\n")
    assert ps.fingerprint(str(f)) != first
    changed = ps.fingerprint(str(f))
    os.chmod(str(f), 0o600)
    assert ps.fingerprint(str(f)) != changed
    assert ps.fingerprint(str(tmp_path / "missing")) == "absent"
    d = tmp_path / "aperture_devices"
    d.mkdir()
    empty = ps.fingerprint(str(d))
    (d / "0000:06:00.1").write_text("")
    listed = ps.fingerprint(str(d))
    assert empty.startswith("dir ") and listed != empty
    (d / "0000:06:00.1").write_text("edited in place")
    assert ps.fingerprint(str(d)) != listed


def test_fingerprint_reads_procfs_in_small_reads():
    # one read of a large buffer fails with ENOMEM on /proc/sys; the fingerprint must still read the value
    assert ps.fingerprint("/proc/sys/kernel/osrelease").startswith("file 444 ")


def test_large_file_is_fingerprinted_by_its_head_size_and_time(tmp_path, monkeypatch):
    monkeypatch.setattr(ps, "READ_LIMIT", 8)
    f = tmp_path / "big"
    f.write_bytes(b"0123456789abcdef")
    assert " size 16 mtime " in ps.fingerprint(str(f))


def test_unit_states_follow_the_order_asked():
    text = ("LoadState=loaded\nActiveState=active\nUnitFileState=enabled\n\n"
            "LoadState=not-found\nActiveState=inactive\nUnitFileState=\n")
    states = ps.parse_unit_states(["nvidia-persistenced.service", "nvidia-imex.service"], text)
    assert states == {"nvidia-persistenced.service": "LoadState=loaded ActiveState=active UnitFileState=enabled",
                      "nvidia-imex.service": "LoadState=not-found ActiveState=inactive UnitFileState="}
    assert ps.parse_unit_states(["a.service"], "")["a.service"] == "LoadState=? ActiveState=? UnitFileState=?"


def test_a_missing_or_foreign_record_is_one_line():
    assert ps.load_record(None, "gpu_host") == (None, "no record of a finished gpu_host run on this node")
    assert ps.load_record("{", "gpu_host")[1] == "the gpu_host record is not JSON"
    other = ps.dump_record(ps.build_record("rxdm", "d", {}, {}, {}))
    assert ps.load_record(other, "gpu_host")[1] == "the gpu_host record is of another version or phase"


def test_differences_name_each_path_unit_and_the_inputs():
    record = ps.build_record("gpu_host", "d1", {"/etc/a": "file 644 0:0 x", "/etc/b": "absent", "/etc/c": "file 1"},
                             {"u.service": "ActiveState=active"}, {"done": []})
    assert ps.differences(record, "d1", dict(record["paths"]), dict(record["units"])) == []
    found = ps.differences(record, "d2", {"/etc/a": "absent", "/etc/b": "file 644 0:0 y", "/etc/c": "file 2"},
                           {"u.service": "ActiveState=failed"})
    assert found == ["the phase's inputs or the collection's code changed since the recorded run",
                     "/etc/a: removed", "/etc/b: created", "/etc/c: changed",
                     "unit u.service: ActiveState=failed, recorded ActiveState=active"]


def test_same_record_ignores_when_it_was_written():
    record = ps.build_record("gpu_host", "d", {"/etc/a": "absent"}, {}, {"done": ["x"]})
    text = ps.dump_record(dict(record, recorded_at="2026-11-27T10:00:00Z"))
    assert ps.same_record(text, record)
    assert not ps.same_record(text, ps.build_record("gpu_host", "d", {"/etc/a": "absent"}, {}, {"done": ["y"]}))
    assert not ps.same_record(None, record)


def test_digest_follows_inputs_and_code(tmp_path):
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "main.yml").write_text("---\n")
    code = controller.tree_hash(str(tmp_path))
    assert code and controller.tree_hash(str(tmp_path / "none")) == ""
    base = controller.digest_of({"gpu_host_sysctl": {"net.core.optmem_max": 131072}}, {"role": code})
    assert base == controller.digest_of({"gpu_host_sysctl": {"net.core.optmem_max": 131072}}, {"role": code})
    assert base != controller.digest_of({"gpu_host_sysctl": {"net.core.optmem_max": 20480}}, {"role": code})
    (tmp_path / "tasks" / "main.yml").write_text("---\n# changed\n")
    assert base != controller.digest_of({"gpu_host_sysctl": {"net.core.optmem_max": 131072}},
                                        {"role": controller.tree_hash(str(tmp_path))})
