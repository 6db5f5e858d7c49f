# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""package_hold: patterns expanded to installed packages, holds set once, check and diff mode, rpm versionlock."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch

import pytest
from ansible.module_utils import basic

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import package_hold as logic
from ansible_collections.gpudirect.gcp.plugins.modules import package_hold
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules.test_runtime_modules import run as run_module


class FakeDpkg(object):
    """dpkg-query -W and dpkg --set-selections over a dict {name: status abbreviation}."""

    def __init__(self, packages):
        self.packages, self.writes = dict(packages), []

    def __call__(self, argv, data=None):
        if argv[0].endswith("dpkg-query"):
            names = [n for n in sorted(self.packages) if fnmatch.fnmatch(n, argv[3])]
            if not names:
                return 1, "", "dpkg-query: no packages found matching %s\n" % argv[3]
            return 0, "".join("%s %s\n" % (n, self.packages[n]) for n in names), ""
        self.writes.append(data)
        for line in data.splitlines():
            name, selection = line.split()
            self.packages[name] = ("h" if selection == "hold" else "i") + self.packages[name][1:]
        return 0, "", ""


class FakeRpm(object):
    def __init__(self, installed, locks):
        self.installed, self.locks, self.calls = installed, list(locks), []

    def __call__(self, argv, data=None):
        self.calls.append(argv)
        if argv[0].endswith("rpm"):
            return 0, "".join(n + "\n" for n in self.installed if fnmatch.fnmatch(n, argv[-1])), ""
        if argv[2] == "list":
            return 0, "Last metadata expiration check: 0:01:00 ago.\n" + "".join(l + "\n" for l in self.locks), ""
        self.locks += ["%s-0:1.0-1.el9.*" % n for n in argv[3:]]
        return 0, "", ""


def fake(monkeypatch, runner, tools):
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, data=None, **kw: runner(argv, data))
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path",
                        lambda self, name, *a, **kw: "/usr/bin/" + name if name in tools else None)
    return runner


def run(args, capsys, check_mode=False):
    return run_module(package_hold, args, capsys, check_mode=check_mode, diff=True)


DPKG = ["dpkg-query", "dpkg"]


def test_holds_what_a_pattern_matches_once(monkeypatch, capsys):
    dpkg = fake(monkeypatch, FakeDpkg({"nvidia-utils-580-server": "ii", "nvidia-foo": "rc"}), DPKG)
    args = {"name": ["nvidia-utils-*-server", "nvidia-fabricmanager-*", "nvidia-foo"]}
    out = run(args, capsys)
    assert out["changed"] and out["manager"] == "dpkg"
    assert out["matched"] == {"nvidia-utils-*-server": ["nvidia-utils-580-server"],
                              "nvidia-fabricmanager-*": [], "nvidia-foo": []}
    assert out["not_installed"] == ["nvidia-fabricmanager-*", "nvidia-foo"]  # removed, config left: not installed
    assert out["held"] == ["nvidia-utils-580-server"] and dpkg.writes == ["nvidia-utils-580-server hold\n"]
    assert out["diff"] == {"before": "nvidia-utils-580-server install\n", "after": "nvidia-utils-580-server hold\n",
                           "before_header": "package holds", "after_header": "package holds"}
    again = run(args, capsys)
    assert again["changed"] is False and again["held"] == ["nvidia-utils-580-server"] and len(dpkg.writes) == 1


def test_check_mode_and_unhold(monkeypatch, capsys):
    dpkg = fake(monkeypatch, FakeDpkg({"nvidia-utils-580-server": "ii"}), DPKG)
    out = run({"name": ["nvidia-utils-*-server"]}, capsys, check_mode=True)
    assert out["changed"] and out["changed_packages"] == ["nvidia-utils-580-server"] and dpkg.writes == []
    run({"name": ["nvidia-utils-*-server"]}, capsys)
    out = run({"name": ["nvidia-utils-*-server"], "state": "unheld"}, capsys)
    assert out["changed"] and out["held"] == [] and dpkg.packages["nvidia-utils-580-server"] == "ii"


def test_rpm_locks_only_the_unlocked(monkeypatch, capsys):
    rpm = fake(monkeypatch, FakeRpm(["nvidia-driver", "nvidia-driver-libs"], ["nvidia-driver-3:550.54.15-1.el9.*"]),
               ["rpm", "dnf"])
    out = run({"name": ["nvidia-driver*", "cuda-drivers"]}, capsys)
    assert out["manager"] == "rpm" and out["changed_packages"] == ["nvidia-driver-libs"]
    assert ["/usr/bin/dnf", "versionlock", "add", "nvidia-driver-libs"] in rpm.calls
    assert out["not_installed"] == ["cuda-drivers"]
    assert run({"name": ["nvidia-driver*"]}, capsys)["changed"] is False


def test_locked_names_reads_entries_not_prefixes():
    listing = "nvidia-driver-libs-3:550.54.15-1.el9.*\n!nvidia-driver-0:1-1.*\n"
    assert logic.locked_names(listing, ["nvidia-driver", "nvidia-driver-libs"]) == {"nvidia-driver-libs"}


@pytest.mark.parametrize("args, tools, msg", [
    ({"name": ["ok", "--force-all"]}, DPKG, "package_hold: name must be package names or patterns, got '--force-all'"),
    ({"name": ["x"]}, [], "package_hold: neither dpkg-query nor rpm is installed"),
    ({"name": ["x"], "manager": "rpm"}, DPKG, "package_hold: rpm is not installed"),
])
def test_bad_input_is_one_line(monkeypatch, capsys, args, tools, msg):
    fake(monkeypatch, FakeDpkg({}), tools)
    out = run(args, capsys)
    assert out["failed"] and out["msg"] == msg


def test_a_record_lets_teardown_release_only_the_holds_it_placed(monkeypatch, capsys, tmp_path):
    # google-guest-agent was held by the admin before; only the driver is held by this run
    dpkg = fake(monkeypatch, FakeDpkg({"nvidia-utils-580-server": "ii", "google-guest-agent": "hi"}), DPKG)
    record = str(tmp_path / "held.json")
    hold = {"name": ["nvidia-utils-*-server", "google-guest-agent"], "record": record}
    checked = run(hold, capsys, check_mode=True)
    assert checked["changed"] and checked["recorded"] == ["nvidia-utils-580-server"]
    assert not (tmp_path / "held.json").exists() and dpkg.writes == []
    out = run(hold, capsys)
    assert out["recorded"] == ["nvidia-utils-580-server"]
    assert (tmp_path / "held.json").read_text() == '["nvidia-utils-580-server"]\n'
    again = run(hold, capsys)
    assert again["changed"] is False and again["recorded"] == ["nvidia-utils-580-server"]
    release = {"state": "unheld", "record": record}
    released = run(release, capsys)
    assert released["changed"] and released["changed_packages"] == ["nvidia-utils-580-server"]
    assert dpkg.packages == {"nvidia-utils-580-server": "ii", "google-guest-agent": "hi"}
    assert not (tmp_path / "held.json").exists() and released["recorded"] == []
    assert run(release, capsys)["changed"] is False


def test_a_bad_record_and_a_missing_name_are_one_line(monkeypatch, capsys, tmp_path):
    fake(monkeypatch, FakeDpkg({}), DPKG)
    (tmp_path / "held.json").write_text("{not json")
    out = run({"state": "unheld", "record": str(tmp_path / "held.json")}, capsys)
    assert out["failed"] and out["msg"].startswith("package_hold: %s is not a hold record" % (tmp_path / "held.json"))
    assert "name is required" in run({"state": "unheld"}, capsys)["msg"]
    assert "missing: name" in run({"state": "held"}, capsys)["msg"]


def test_releasing_an_absent_record_needs_no_package_manager(monkeypatch, capsys, tmp_path):
    fake(monkeypatch, FakeDpkg({}), [])
    out = run({"state": "unheld", "record": str(tmp_path / "none.json")}, capsys)
    assert out["changed"] is False and out["recorded"] == [] and not out.get("failed")
