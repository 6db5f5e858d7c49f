# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl_plugin_install, rxdm_readiness, nccl_env_check, nccl_plugin_profile_info and container_engine_info
run as modules, with the container engine answered by a fake and files in a temporary directory."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
from ansible.module_utils import basic

from ansible_collections.gpudirect.gcp.plugins.modules import (container_engine_info, nccl_env_check,
                                                               nccl_plugin_install, nccl_plugin_profile_info,
                                                               rxdm_readiness)
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.nccl import test_plugin_installer as fakes
from ansible_collections.gpudirect.gcp.tests.unit.plugins.modules._module_args import patch_module_args

IMAGE, FakeEngine = fakes.IMAGE, fakes.FakeEngine


def run(module, args, capsys, check_mode=False, diff=False):
    """Run a module's main() with these arguments; its JSON result."""
    if check_mode:
        args = dict(args, _ansible_check_mode=True)
    if diff:
        args = dict(args, _ansible_diff=True)
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            module.main()
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def engine(tmp_path, monkeypatch):
    lib = str(tmp_path / "tcpxo" / "lib64")
    fake = FakeEngine(lib, ["libnccl-net.so", "nccl-env-profile.sh"])
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kw: fake(argv))
    return fake


def install_args(tmp_path, tag="v1.0.17"):
    return {"engine": "/usr/bin/docker", "image": IMAGE, "tag": tag, "install_args": ["install", "--install-nccl"],
            "files_dir": str(tmp_path / "tcpxo" / "lib64"), "files": ["libnccl-net.so", "nccl-env-profile.sh"],
            "record_path": str(tmp_path / "tcpxo" / ".gpudirect-installed")}


def test_install_once_then_nothing_then_reinstall_on_new_version(tmp_path, engine, capsys):
    first = run(nccl_plugin_install, install_args(tmp_path), capsys)
    assert first["changed"] and first["record"]["tag"] == "v1.0.17" and first["previous"] is None
    assert json.load(open(str(tmp_path / "tcpxo" / ".gpudirect-installed")))["tag"] == "v1.0.17"
    runs = len([c for c in engine.calls if c[1] == "run"])
    again = run(nccl_plugin_install, install_args(tmp_path), capsys)
    assert not again["changed"]
    assert len([c for c in engine.calls if c[1] == "run"]) == runs
    other = run(nccl_plugin_install, install_args(tmp_path, "v1.0.15"), capsys)
    assert other["changed"] and other["previous"]["tag"] == "v1.0.17" and other["record"]["tag"] == "v1.0.15"


def test_missing_file_reinstalls_and_check_mode_changes_nothing(tmp_path, engine, capsys):
    run(nccl_plugin_install, install_args(tmp_path), capsys)
    os.unlink(str(tmp_path / "tcpxo" / "lib64" / "libnccl-net.so"))
    calls = len(engine.calls)
    check = run(nccl_plugin_install, install_args(tmp_path), capsys, check_mode=True)
    assert check["changed"] and check["missing_before"] == ["libnccl-net.so"]
    assert '"tag": "v1.0.17"' in check["diff"]["after"]
    assert len(engine.calls) == calls
    assert not os.path.exists(str(tmp_path / "tcpxo" / "lib64" / "libnccl-net.so"))
    fixed = run(nccl_plugin_install, install_args(tmp_path), capsys)
    assert fixed["changed"] and os.path.exists(str(tmp_path / "tcpxo" / "lib64" / "libnccl-net.so"))


def test_modified_file_is_caught_by_the_manifest_and_reinstalled(tmp_path, engine, capsys):
    run(nccl_plugin_install, install_args(tmp_path), capsys)
    record = json.load(open(str(tmp_path / "tcpxo" / ".gpudirect-installed")))
    assert [m["path"] for m in record["manifest"]] == ["libnccl-net.so", "nccl-env-profile.sh"]
    assert all(len(m["sha256"]) == 64 for m in record["manifest"])
    with open(str(tmp_path / "tcpxo" / "lib64" / "nccl-env-profile.sh"), "a") as fh:
        fh.write("export NCCL_ALGO=Ring\n")
    check = run(nccl_plugin_install, install_args(tmp_path), capsys, check_mode=True)
    assert check["changed"] and check["modified_before"] == ["nccl-env-profile.sh"] and check["missing_before"] == []
    fixed = run(nccl_plugin_install, install_args(tmp_path), capsys)
    assert fixed["changed"]
    assert run(nccl_plugin_install, install_args(tmp_path), capsys)["modified_before"] == []


def test_install_failure_is_one_message(tmp_path, engine, capsys):
    engine.run_rc = 2
    out = run(nccl_plugin_install, install_args(tmp_path), capsys)
    assert out["failed"] and out["msg"].startswith("nccl_plugin_install: installer ")
    assert "installer exploded" in out["msg"]


def test_bad_digest_fails_before_anything_runs(tmp_path, engine, capsys):
    out = run(nccl_plugin_install, dict(install_args(tmp_path), digest="1234"), capsys)
    assert out["failed"] and "must look like sha256" in out["msg"] and engine.calls == []


def test_readiness_failure_shows_the_log_tail(monkeypatch, capsys):
    def fake(self, argv, **kw):
        if argv[1] == "inspect":
            return 0, "true c1 2026-11-22T15:00:00Z", ""
        if argv[1] == "cp":
            return 125, "", "could not be found on container"
        if argv[1] == "logs":
            return 0, "STAND-IN banner\nF1122 open(/dev/dmabuf_import_helper) failed\n", ""
        raise AssertionError(argv)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", fake)
    out = run(rxdm_readiness, {"engine": "/usr/bin/docker", "health_check_file": "/run/health-check",
                               "ready_line": "Buffer manager initialization complete", "timeout_s": 0,
                               "interval_s": 0.01}, capsys)
    assert out["failed"] and not out["ready"]
    assert out["msg"].startswith("RxDM not ready after 0s: container receive-datapath-manager is running but")
    assert out["log_tail"][-1] == "F1122 open(/dev/dmabuf_import_helper) failed"


def test_readiness_success(monkeypatch, capsys):
    def fake(self, argv, **kw):
        if argv[1] == "inspect":
            return 0, "true c9 2026-11-22T15:00:00Z", ""
        if argv[1] == "cp":
            assert argv[2] == "receive-datapath-manager:/run/health-check"
            with open(argv[3], "w") as fh:
                fh.write("fastrak_gpumem_manager.cu.cc:284] Buffer manager initialization complete.\n")
            return 0, "", ""
        raise AssertionError(argv)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", fake)
    out = run(rxdm_readiness, {"engine": "/usr/bin/docker", "health_check_file": "/run/health-check",
                               "ready_line": "Buffer manager initialization complete"}, capsys, check_mode=True)
    assert out["ready"] and out["source"] == "health_check_file" and out["container_id"] == "c9"
    assert not out["changed"]


def test_env_check_module(tmp_path, capsys):
    net = tmp_path / "net"
    for name in ("lo", "eth0", "eth1"):
        (net / name).mkdir(parents=True)
    lib = tmp_path / "lib64"
    lib.mkdir()
    (lib / "libnccl-net.so").write_text("x")
    args = {"env": {"NCCL_SOCKET_IFNAME": "eth0", "NCCL_FASTRAK_IFNAME": "eth1", "LD_LIBRARY_PATH": str(lib)},
            "iface_vars": ["NCCL_SOCKET_IFNAME", "NCCL_FASTRAK_IFNAME"], "plugin_lib_dir": str(lib),
            "plugin_library": "libnccl-net.so", "sysfs_net": str(net)}
    ok = run(nccl_env_check, args, capsys)
    assert not ok.get("failed") and ok["interfaces"] == ["eth0", "eth1", "lo"]
    args["env"]["NCCL_FASTRAK_IFNAME"] = "enp6s0"
    args["problems"] = ["NCCL_ALGO is rejected by the a3-mega plugin's guest config checker"]
    bad = run(nccl_env_check, args, capsys)
    assert bad["failed"] and len(bad["problems"]) == 2
    assert "NCCL_FASTRAK_IFNAME names interface enp6s0" in bad["msg"] and "NCCL_ALGO" in bad["msg"]


def test_plugin_profile_info(tmp_path, capsys):
    prof = tmp_path / "nccl-env-profile.sh"
    missing = run(nccl_plugin_profile_info, {"path": str(prof)}, capsys)
    assert missing["found"] is False and missing["env"] == {}
    prof.write_text("export NCCL_TUNER_CONFIG_PATH=${NCCL_LIB_DIR}/t.textproto\n")
    out = run(nccl_plugin_profile_info, {"path": str(prof), "lib_dir": "/var/lib/tcpxo/lib64"}, capsys)
    assert out["env"] == {"NCCL_TUNER_CONFIG_PATH": "/var/lib/tcpxo/lib64/t.textproto"}


def test_container_engine_info(monkeypatch, capsys):
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path",
                        lambda self, name, *a, **k: "/usr/bin/podman" if name == "podman" else None)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kw: (0, "podman version 4.3.1\n", ""))
    out = run(container_engine_info, {}, capsys)
    assert out["name"] == "podman" and out["daemon_unit"] is None and not out["changed"]
    out = run(container_engine_info, {"engine": "docker"}, capsys)
    assert out["failed"] and out["msg"] == "no container engine found on the node (looked for docker in PATH)"


def test_profile_info_sources_a_script_and_reports_the_installed_version(tmp_path, capsys, monkeypatch):
    import subprocess

    def run_command(self, argv, **kw):
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        return proc.returncode, proc.stdout, proc.stderr

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path",
                        lambda self, name, *a, **k: "/bin/bash" if name == "bash" else None)
    scripts = tmp_path / "gib" / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "set_nccl_env.sh").write_text(
        'ROOT=$(dirname "$NCCL_LIB_DIR")\nif [ -d "$ROOT" ]; then export NCCL_TUNER_CONFIG_PATH="$ROOT/t.txtpb"; fi\n'
        "export NCCL_IB_GID_INDEX=3\n")
    (tmp_path / "gib" / ".gpudirect-installed").write_text('{"image": "gib", "tag": "v1.1.1"}')
    out = run(nccl_plugin_profile_info, {"path": str(scripts / "set_nccl_env.sh"), "lib_dir": str(scripts),
                                         "source": True, "install_dir": str(tmp_path / "gib")}, capsys)
    assert out["found"] is True and out["changed"] is False
    # what the script computed and exported; NCCL_LIB_DIR was given to it, not set by it
    assert out["env"] == {"NCCL_TUNER_CONFIG_PATH": str(tmp_path / "gib" / "t.txtpb"), "NCCL_IB_GID_INDEX": "3"}
    assert out["version"] == "gib:v1.1.1" and out["version_source"].startswith("installer record ")
    (scripts / "set_nccl_env.sh").write_text("exit 4\n")
    failed = run(nccl_plugin_profile_info, {"path": str(scripts / "set_nccl_env.sh"), "source": True}, capsys)
    assert failed["failed"] is True and "exited 4" in failed["msg"]
