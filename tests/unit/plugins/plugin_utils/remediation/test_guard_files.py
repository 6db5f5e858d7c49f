# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guard's state file (and its lock, which is that file) and audit log cannot be steered: a
symbolic link, a file or directory others may write, or one another user owns is refused in one line."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import stat

import pytest

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.remediation import guard, guard_store


def state_file(path, create=True):
    """The guard's local state file, its state checked as the guard checks it."""
    return guard_store.StateFile(path, create, check=guard.runs_of)


OTHER_UID = 4242


def private_dir(tmp_path, name="state"):
    path = tmp_path / name
    path.mkdir()
    path.chmod(0o700)
    return path


def use_state(path, create=True):
    with state_file(str(path), create=create) as state:
        state.read()
        if create:
            state.write({"runs": []})


def one_line_naming(excinfo, path):
    text = str(excinfo.value)
    assert "\n" not in text and str(path) in text
    return text


def test_new_files_are_private_and_the_good_case_still_works(tmp_path):
    base = private_dir(tmp_path)
    state, log = base / "new" / "state.json", base / "new" / "audit.jsonl"
    use_state(state)
    guard_store.audit(str(log), [{"decision": "act"}])
    guard_store.audit(str(log), [{"decision": "held"}])
    assert stat.S_IMODE(os.stat(str(state)).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(str(log)).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(str(base / "new")).st_mode) == 0o700
    with state_file(str(state)) as again:
        assert again.read() == {"runs": []}
    assert [json.loads(line)["decision"] for line in open(str(log))] == ["act", "held"]


@pytest.mark.parametrize("dangling", [False, True], ids=["to a file", "dangling"])
def test_a_state_file_that_is_a_symlink_is_refused_and_its_target_untouched(tmp_path, dangling):
    base = private_dir(tmp_path)
    target = base / "elsewhere"
    if not dangling:
        target.write_text(u"keep")
    (base / "state.json").symlink_to(target)
    for create in (True, False):
        with pytest.raises(guard.GuardError) as excinfo:
            use_state(base / "state.json", create)
        assert "symbolic link" in one_line_naming(excinfo, base / "state.json")
    assert (target.read_text() == u"keep") if not dangling else not target.exists()


@pytest.mark.parametrize("dangling", [False, True], ids=["to a file", "dangling"])
def test_an_audit_log_that_is_a_symlink_is_refused_and_its_target_untouched(tmp_path, dangling):
    base = private_dir(tmp_path)
    target = base / "elsewhere"
    if not dangling:
        target.write_text(u"keep")
    (base / "audit.jsonl").symlink_to(target)
    with pytest.raises(guard.GuardError) as excinfo:
        guard_store.audit(str(base / "audit.jsonl"), [{"decision": "act"}])
    assert "symbolic link" in one_line_naming(excinfo, base / "audit.jsonl")
    assert (target.read_text() == u"keep") if not dangling else not target.exists()


@pytest.mark.parametrize("mode", [0o660, 0o606, 0o666, 0o620], ids=oct)
def test_files_others_may_write_are_refused(tmp_path, mode):
    base = private_dir(tmp_path)
    for name in ("state.json", "audit.jsonl"):
        (base / name).write_text(u"")
        (base / name).chmod(mode)
    with pytest.raises(guard.GuardError) as excinfo:
        use_state(base / "state.json")
    assert "writable by group or others" in one_line_naming(excinfo, base / "state.json")
    with pytest.raises(guard.GuardError) as excinfo:
        guard_store.audit(str(base / "audit.jsonl"), [{"decision": "act"}])
    assert "writable by group or others" in one_line_naming(excinfo, base / "audit.jsonl")
    assert (base / "audit.jsonl").read_text() == u""


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777, 0o730], ids=oct)
def test_a_directory_others_may_write_is_refused(tmp_path, mode):
    base = private_dir(tmp_path)
    base.chmod(mode)
    with pytest.raises(guard.GuardError) as excinfo:
        use_state(base / "state.json")
    assert "writable by group or others" in one_line_naming(excinfo, base)
    with pytest.raises(guard.GuardError) as excinfo:
        guard_store.audit(str(base / "audit.jsonl"), [{"decision": "act"}])
    assert "writable by group or others" in one_line_naming(excinfo, base)
    assert sorted(os.listdir(str(base))) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_files_and_directories_another_user_owns_are_refused(tmp_path):
    base = private_dir(tmp_path)
    for name in ("state.json", "audit.jsonl"):
        (base / name).write_text(u"")
        (base / name).chmod(0o600)
        os.chown(str(base / name), OTHER_UID, -1)
    with pytest.raises(guard.GuardError) as excinfo:
        use_state(base / "state.json")
    assert "uid %d" % OTHER_UID in one_line_naming(excinfo, base / "state.json")
    with pytest.raises(guard.GuardError) as excinfo:
        guard_store.audit(str(base / "audit.jsonl"), [{"decision": "act"}])
    assert "uid %d" % OTHER_UID in one_line_naming(excinfo, base / "audit.jsonl")
    theirs = private_dir(tmp_path, "theirs")
    os.chown(str(theirs), OTHER_UID, -1)
    with pytest.raises(guard.GuardError) as excinfo:
        use_state(theirs / "state.json")
    assert "uid %d" % OTHER_UID in one_line_naming(excinfo, theirs)
    with pytest.raises(guard.GuardError):
        guard_store.audit(str(theirs / "audit.jsonl"), [{"decision": "act"}])
    assert os.listdir(str(theirs)) == []


def test_what_is_not_a_regular_file_is_refused_without_blocking(tmp_path):
    base = private_dir(tmp_path)
    os.mkfifo(str(base / "audit.jsonl"), 0o600)
    with pytest.raises(guard.GuardError) as excinfo:
        guard_store.audit(str(base / "audit.jsonl"), [{"decision": "act"}])
    assert "not a regular file" in one_line_naming(excinfo, base / "audit.jsonl")
    (base / "state.json").mkdir(0o700)
    with pytest.raises(guard.GuardError) as excinfo:
        use_state(base / "state.json")
    one_line_naming(excinfo, base / "state.json")
