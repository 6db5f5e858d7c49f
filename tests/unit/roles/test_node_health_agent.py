# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node health agent as the node_health role installs it: the listed check code copied into a
library directory and run by the system's python3, which has no ansible-core, against a fake sysfs
root and fake ip, docker and systemctl commands."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import time

import jinja2
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.gpudirect.gcp.tests.unit.emulator.test_guest_services_topology import (  # noqa: F401 pylint: disable=unused-import
    NODE, metadata)
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.health.test_health_metrics import promtool_check
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.job.test_nccl_inspector import inspector_file
from ansible_collections.gpudirect.gcp.tests.unit.plugins.module_utils.nic.test_nic_sysfs import FakeSys
from ansible_collections.gpudirect.gcp.tests.unit.standins.ras_standin import Ras

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ROLE = os.path.join(ROOT, "roles", "node_health")
AGENT = os.path.join(ROLE, "files", "gpudirect_health.py")
MODULE_UTILS = os.path.join(ROOT, "plugins", "module_utils")
PREFIX = "ansible_collections.gpudirect.gcp.plugins.module_utils"
# a python3 without ansible-core, as on a node
NODE_PYTHON = "/usr/bin/python3"


def shipped():
    with open(os.path.join(ROLE, "vars", "main.yml")) as fh:
        data = yaml.safe_load(fh)
    return data["_node_health_module_utils"], data["_node_health_package"]


def imports(path):
    with open(path) as fh:
        tree = ast.parse(fh.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module == PREFIX or node.module.startswith(PREFIX + "."):
                for alias in node.names:
                    yield "%s.%s" % (node.module, alias.name)
            else:
                yield node.module


def test_the_shipped_check_code_is_closed_and_needs_no_ansible():
    files, package = shipped()
    assert package == PREFIX.replace(".", "/")
    # dotted module names; a package's __init__.py is the package
    names = set(f[:-3].replace("/__init__", "").replace("/", ".") for f in files)
    assert {"health.node_health", "health.health_metrics", "common.files", "gpu.health"} <= names
    for name in sorted(files):
        for imported in imports(os.path.join(MODULE_UTILS, name)):
            assert not (imported == "ansible" or imported.startswith("ansible.")), "%s imports %s" % (name, imported)
            if imported.startswith(PREFIX + "."):
                # "a.b.c" is module a.b.c where that file exists, else module a.b's attribute c
                parts = imported[len(PREFIX) + 1:].split(".")
                module = next(".".join(parts[:i]) for i in range(len(parts), 0, -1)
                              if os.path.exists(os.path.join(MODULE_UTILS, *parts[:i])) or
                              os.path.exists(os.path.join(MODULE_UTILS, *parts[:i]) + ".py"))
                assert module in names, "%s imports %s, which the role does not install" % (name, imported)


def lib_dir(tmp_path):
    files, package = shipped()
    target = tmp_path / "lib" / package
    target.mkdir(parents=True, exist_ok=True)
    for name in files:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(os.path.join(MODULE_UTILS, name), str(target / name))
    return str(tmp_path / "lib")


def fake_bin(tmp_path, ip_sleeps=0):
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    scripts = {
        "ip": "sleep %d\necho '[{\"ifname\": \"eth1\", \"addr_info\": [{\"family\": \"inet\", \"local\": \"10.1.0.2\"}]}]'"
              % ip_sleeps,
        "docker": 'case "$1" in --version) echo "Docker version 24.0.9";; *) echo "Error: no such container" >&2; '
                  "exit 1;; esac",
        "systemctl": 'echo "ActiveState=failed"; echo "NRestarts=3"',
    }
    for name, body in scripts.items():
        path = bindir / name
        path.write_text("#!/bin/sh\n%s\n" % body)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(bindir)


def agent(tmp_path, cfg, *extra, ip_sleeps=0):
    config = tmp_path / "health.json"
    config.write_text(json.dumps(cfg) if not isinstance(cfg, str) else cfg)
    env = dict(os.environ, PATH=fake_bin(tmp_path, ip_sleeps) + ":/usr/bin:/bin")
    env.pop("PYTHONPATH", None)
    argv = [NODE_PYTHON, AGENT, "--config", str(config), "--lib", lib_dir(tmp_path), "--root", str(tmp_path),
            "--textfile-dir", str(tmp_path / "textfile")] + list(extra)
    proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=60, check=False)
    return proc.returncode, proc.stdout.splitlines(), proc.stderr


def config(standins=True):
    return {"family": "a3-mega", "standins": standins,
            "nics": [{"nic": "gpu0", "iface": "eth1", "mac": "42:01:0a:01:00:02", "expected_mtu": 8244,
                      "ip": "10.1.0.2"}],
            "rxdm": {"engine": "auto", "container": "receive-datapath-manager",
                     "unit": "receive-datapath-manager.service"},
            "plugin": None, "profile": None}


def metrics(tmp_path):
    return (tmp_path / "textfile" / "gpudirect_node_health.prom").read_text()


def test_the_node_python_has_no_ansible():
    # what makes the next tests prove the agent runs without ansible-core
    proc = subprocess.run([NODE_PYTHON, "-c", "import ansible"], stderr=subprocess.PIPE, check=False,
                          env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode != 0 and sys.executable != NODE_PYTHON


def test_a_healthy_nic_and_a_stopped_rxdm_fail_in_one_line_and_in_metrics(tmp_path):
    FakeSys(tmp_path).nic("eth1", "42:01:0a:01:00:02", mtu=8244)
    rc, lines, err = agent(tmp_path, config())
    assert rc == 1, (lines, err)
    # (+1 more): the warning that systemd restarted RxDM 3 times, as diagnose gives it
    assert lines == ["gpudirect-health: fail: fail rxdm receive-datapath-manager: container receive-datapath-manager "
                     "is not running; unit receive-datapath-manager.service is failed (+1 more) "
                     "(SANDBOX: stand-ins, not Google Cloud)"]
    text = metrics(tmp_path)
    assert promtool_check(text)[0] == 0
    assert "gpudirect_rxdm_ready 0" in text and 'gpudirect_nic_up{nic="gpu0",interface="eth1"} 1' in text
    assert not [p for p in os.listdir(str(tmp_path / "textfile")) if p != "gpudirect_node_health.prom"]


def test_a_hung_helper_stops_at_the_limit_with_a_warning(tmp_path):
    FakeSys(tmp_path).nic("eth1", "42:01:0a:01:00:02", mtu=8244)
    rc, lines, err = agent(tmp_path, config(standins=False), "--timeout", "2", ip_sleeps=30)
    assert rc == 0, (lines, err)
    assert lines == ["gpudirect-health: warn: warn host node check: stopped at the time limit of 2.0s: a check hung"]
    text = metrics(tmp_path)
    assert "gpudirect_node_health_timed_out 1" in text and "gpudirect_node_health_ok 1" in text
    assert promtool_check(text)[0] == 0


def test_a_bad_config_or_option_is_one_line_and_exit_2(tmp_path):
    rc, lines, err = agent(tmp_path, '{"family": "a3-mega", "nics": [{}]}')
    assert (rc, lines, err) == (2, ["gpudirect-health: --config %s: nics[0]: has neither iface, mac nor nic"
                                    % (tmp_path / "health.json")], "")
    rc, lines, err = agent(tmp_path, "{not json")
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("gpudirect-health: --config ") and not err
    rc, lines, _err = agent(tmp_path, config(), "--timeout", "0")
    assert (rc, lines) == (2, ["gpudirect-health: --timeout must be more than 0, got 0.0"])


def slurm_bin(tmp_path, start_rc):
    """systemctl whose start fails (or not) and scontrol that records its arguments, beside fake_bin's."""
    bindir = fake_bin(tmp_path)
    scripts = {
        "systemctl": 'case "$1" in start) echo "Job for $2 failed." >&2; exit %d;; stop) exit 0;; esac\n'
                     'echo "ActiveState=inactive"; echo "NRestarts=0"' % start_rc,
        "scontrol": 'echo "$@" > "%s"' % (tmp_path / "scontrol.args"),
    }
    for name, body in scripts.items():
        path = tmp_path / "bin" / name
        path.write_text("#!/bin/sh\n%s\n" % body)
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return bindir


def slurm_agent(tmp_path, phase, start_rc=1, *extra):
    config = tmp_path / "health.json"
    config.write_text(json.dumps(config_for_slurm()))
    env = dict(os.environ, PATH=slurm_bin(tmp_path, start_rc) + ":/usr/bin:/bin", SLURM_JOB_NODELIST="n[1-2]",
               SLURMD_NODENAME="n1")
    env.pop("PYTHONPATH", None)
    env.pop("SLURM_JOB_NUM_NODES", None)
    argv = [NODE_PYTHON, AGENT, "--config", str(config), "--lib", lib_dir(tmp_path), "--root", str(tmp_path),
            "--slurm", phase, "--rxdm-per-job", "--rxdm-wait", "2"] + list(extra)
    proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=60, check=False)
    return proc.returncode, proc.stdout.splitlines(), proc.stderr


def config_for_slurm():
    return dict(config(standins=False), plugin=None, profile=None)


def test_a_prolog_whose_rxdm_does_not_start_fails_and_sets_the_drain_reason(tmp_path):
    FakeSys(tmp_path).nic("eth1", "42:01:0a:01:00:02", mtu=8244)
    rc, lines, err = slurm_agent(tmp_path, "prolog", 1, "--drain-reason")
    assert rc == 1, (lines, err)
    assert lines[0].startswith("gpudirect-health: prolog fail: fail rxdm receive-datapath-manager.service: "
                               "systemctl start receive-datapath-manager.service failed (exit 1): Job for "), lines
    reason = (tmp_path / "scontrol.args").read_text()
    assert reason.startswith("update nodename=n1 state=drain reason=gpudirect: fail rxdm "
                             "receive-datapath-manager.service: systemctl start"), reason


def test_an_epilog_stops_per_job_rxdm_and_passes_without_checking_it(tmp_path):
    FakeSys(tmp_path).nic("eth1", "42:01:0a:01:00:02", mtu=8244)
    rc, lines, err = slurm_agent(tmp_path, "epilog", 0, "--drain-reason")
    assert (rc, lines) == (0, ["gpudirect-health: epilog pass: healthy"]), err
    assert not (tmp_path / "scontrol.args").exists()


def test_a_slurm_hook_rejects_a_bad_rxdm_wait(tmp_path):
    rc, lines, _err = slurm_agent(tmp_path, "prolog", 0, "--rxdm-wait", "0")
    assert (rc, lines) == (2, ["gpudirect-health: --rxdm-wait must be more than 0, got 0.0"])


def test_a_crash_in_the_checks_is_could_not_check_exit_2_and_never_a_drain(tmp_path):
    """A bug in the checks (here a check that raises) says nothing about the node: one line, exit 2, and
    no drain even with --drain-reason."""
    FakeSys(tmp_path).nic("eth1", "42:01:0a:01:00:02", mtu=8244)
    lib = lib_dir(tmp_path)
    with open(os.path.join(lib, shipped()[1], "health", "node_health.py"), "a") as fh:
        fh.write("\n\ndef check(*_args, **_kwargs):\n    raise KeyError('a bug')\n")
    config_file = tmp_path / "health.json"
    config_file.write_text(json.dumps(config_for_slurm()))
    env = dict(os.environ, PATH=slurm_bin(tmp_path, 0) + ":/usr/bin:/bin", SLURM_JOB_NODELIST="n1",
               SLURMD_NODENAME="n1")
    env.pop("PYTHONPATH", None)
    for extra in ([], ["--slurm", "prolog", "--drain-reason"]):
        proc = subprocess.run([NODE_PYTHON, AGENT, "--config", str(config_file), "--lib", lib, "--root",
                               str(tmp_path)] + extra, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=60, check=False)
        assert proc.returncode == 2, (proc.stdout, proc.stderr)
        assert proc.stdout == "gpudirect-health: %scould not check the node: KeyError: 'a bug'\n" % (
            "prolog " if extra else "")
        assert "Traceback" not in proc.stderr
    assert not (tmp_path / "scontrol.args").exists()


def test_a_cut_or_malformed_install_record_is_one_finding_naming_the_file(tmp_path):
    """The same finding diagnose gives (plugin_state.problems), never a pass or a crash."""
    FakeSys(tmp_path).nic("eth1", "42:01:0a:01:00:02", mtu=8244)
    record = tmp_path / "var" / "lib" / "tcpxo" / ".gpudirect-installed"
    record.parent.mkdir(parents=True)
    for text, why in (('{"image": "i", "tag": "t", "manif', "not JSON"),
                      (json.dumps({"image": "i", "tag": "t", "manifest": ["x"]}), "its manifest is not a list")):
        record.write_text(text)
        cfg = dict(config(standins=False), rxdm=None, plugin={"record_file": ".gpudirect-installed"})
        rc, lines, err = agent(tmp_path, cfg)
        assert rc == 1, (lines, err)
        assert lines[0].startswith("gpudirect-health: fail: fail nccl_plugin /var/lib/tcpxo/.gpudirect-installed: "
                                   "install record unusable: %s" % why), lines


def test_hostile_tool_output_stays_one_line_everywhere(tmp_path):
    """Undecodable bytes, an ANSI colour, a BEL and a newline in what systemctl prints: the agent does not
    crash, and the line, the drain reason and the metrics are each valid single lines that show them."""
    FakeSys(tmp_path).nic("eth1", "42:01:0a:01:00:02", mtu=8244)
    bindir = slurm_bin(tmp_path, 1)
    (tmp_path / "bin" / "systemctl").write_bytes(
        b"#!/bin/sh\ncase \"$1\" in start) printf 'Job \\033[31mfor\\007 x \\377 failed ya29.planted-secret\\n"
        b"FORGED: pass\\n' >&2; exit 1;; "
        b"esac\necho 'ActiveState=inactive'; echo 'NRestarts=0'\n")
    config_file = tmp_path / "health.json"
    config_file.write_text(json.dumps(config_for_slurm()))
    env = dict(os.environ, PATH=bindir + ":/usr/bin:/bin", SLURM_JOB_NODELIST="n[1-2]", SLURMD_NODENAME="n1")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([NODE_PYTHON, AGENT, "--config", str(config_file), "--lib", lib_dir(tmp_path), "--root",
                           str(tmp_path), "--textfile-dir", str(tmp_path / "textfile"), "--slurm", "prolog",
                           "--rxdm-per-job", "--rxdm-wait", "2", "--drain-reason"], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=60, check=False)
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout.decode("utf-8")  # valid UTF-8, or this raises
    # the first line of systemctl's message, its control characters and bad byte shown
    assert len(out.splitlines()) == 1 and "\\x1b[31mfor\\x07 x \\xff failed" in out
    reason = (tmp_path / "scontrol.args").read_bytes().decode("utf-8")
    assert len(reason.strip().splitlines()) == 1 and "\\xff" in reason and "\x1b" not in reason
    text = metrics(tmp_path)
    assert promtool_check(text)[0] == 0 and "\x1b" not in text
    # the token planted in the tool's output reaches none of them
    for output in (out, reason, text, proc.stderr.decode("utf-8", "replace")):
        assert "planted-secret" not in output


def test_hostile_text_in_the_config_reaches_no_output_raw(tmp_path):
    """A NIC name with an escape sequence, a newline and a planted token in the agent's config: the line,
    the metrics and the JSON result stay valid and one line where promised, and the token stays out."""
    FakeSys(tmp_path).nic("eth1", "42:01:0a:01:00:02", mtu=8244)
    cfg = dict(config(standins=False), rxdm=None)
    cfg["nics"] = [{"nic": "gpu0\x1b[2J", "iface": "eth9\nFAIL forged token=ya29.planted-secret",
                    "mac": "42:01:0a:01:00:09", "expected_mtu": 8244, "ip": "10.1.0.9"}]
    rc, lines, err = agent(tmp_path, cfg, "--json")
    assert rc == 1, (lines, err)
    assert lines[0].startswith("gpudirect-health: fail: fail nic ") and "\\n" in lines[0]
    assert len(lines) == 2 and not any("FAIL forged" in line.split(": ", 1)[0] for line in lines)
    json.loads(lines[1])
    text = metrics(tmp_path)
    assert promtool_check(text)[0] == 0 and "\x1b" not in text
    for output in (lines[0], text):
        assert "planted-secret" not in output


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                     max_leaves=8)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(
    _JSON,
    st.fixed_dictionaries({"family": st.sampled_from(["a3-mega", "a4x", "nope"]),
                           "nics": st.lists(st.dictionaries(st.sampled_from(["nic", "iface", "mac", "expected_mtu", "ip", "network"]),
                                                            _JSON, max_size=5), max_size=2),
                           "peers": _JSON, "rxdm": _JSON, "plugin": _JSON, "profile": _JSON, "gpu": _JSON,
                           # only this machine: a closed loopback port, never the real metadata server's name
                           "maintenance": st.none() | st.just({"metadata_url": "http://127.0.0.1:9/v1"})})))
def test_property_any_config_gives_one_line_and_a_defined_status(tmp_path, cfg):
    """Whatever the config holds, the agent prints one line (no traceback) and exits 0, 1 or 2."""
    rc, lines, err = agent(tmp_path, json.dumps(cfg), "--timeout", "5")
    assert rc in (0, 1, 2), (rc, lines, err)
    assert len(lines) == 1 and "Traceback" not in err, (lines, err)


def test_a_prolog_drains_before_maintenance_only_when_asked(tmp_path, metadata):
    """Maintenance due within the warning time: a warning and the job runs; with --drain-before-maintenance the
    prolog fails and the drain reason names the maintenance."""
    FakeSys(tmp_path).nic("eth1", "42:01:0a:01:00:02", mtu=8244)
    start = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    metadata.place({NODE: {"upcoming-maintenance": {"maintenance_status": "PENDING", "type": "SCHEDULED",
                                                    "window_start_time": start, "can_reschedule": True}}})
    cfg = dict(config_for_slurm(), rxdm=None, maintenance={"metadata_url": metadata.url, "warn_within_h": 24})
    config_file = tmp_path / "health.json"
    config_file.write_text(json.dumps(cfg))
    env = dict(os.environ, PATH=slurm_bin(tmp_path, 0) + ":/usr/bin:/bin", SLURM_JOB_NODELIST="n1",
               SLURMD_NODENAME="n1")
    env.pop("PYTHONPATH", None)
    base = [NODE_PYTHON, AGENT, "--config", str(config_file), "--lib", lib_dir(tmp_path), "--root", str(tmp_path),
            "--slurm", "prolog", "--drain-reason"]
    for extra, rc in (([], 0), (["--drain-before-maintenance"], 1)):
        proc = subprocess.run(base + extra, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=60, check=False)
        assert proc.returncode == rc, (proc.stdout, proc.stderr)
        assert "host maintenance: scheduled host maintenance in " in proc.stdout
    reason = (tmp_path / "scontrol.args").read_text()
    assert reason.startswith("update nodename=n1 state=drain reason=gpudirect: fail host maintenance: scheduled")


def watch_agent(tmp_path, port, *extra, **kwargs):
    """The agent's job watch as its service runs it, its lines as they come: [(seconds since start, line)].

    path: directories searched before /usr/bin:/bin (a stand-in nvidia-smi)."""
    config_path = tmp_path / "health.json"
    config_path.write_text(json.dumps(dict(config(), node_names={"10.0.0.3": "a3m-node-1"})))
    env = dict(os.environ, PATH=":".join(list(kwargs.get("path", [])) + ["/usr/bin", "/bin"]))
    env.pop("PYTHONPATH", None)
    argv = [NODE_PYTHON, AGENT, "--config", str(config_path), "--lib", lib_dir(tmp_path), "--watch-jobs",
            "--ras-port", str(port), "--textfile-dir", str(tmp_path / "textfile")] + list(extra)
    (tmp_path / "textfile").mkdir(exist_ok=True)
    started = time.monotonic()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    lines = [(time.monotonic() - started, line.rstrip("\n")) for line in proc.stdout]
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    return lines


def test_the_job_watch_names_a_hang_within_its_threshold_and_a_poll(tmp_path):
    standins = Ras(tmp_path)
    try:
        lines = watch_agent(tmp_path, standins.start(hang_at=0.0, odd_rank=13),
                            "--poll", "0.5", "--hang-after", "2", "--watch-for", "4")
    finally:
        standins.stop()
    assert len(lines) == 1, lines
    assert lines[0][1].startswith("gpudirect-health: job: hang: communicator 0x7f3a (32 ranks) hangs: no rank issued "
                                  "a collective for 2 s, and rank 13 on a3m-node-1 (10.0.0.3) issued AllReduce ")
    assert lines[0][1].endswith(" (SANDBOX: stand-ins, not Google Cloud)")
    assert 2.0 <= lines[0][0] < 2.0 + 0.5 + 1.5  # the threshold, a poll, and the start-up
    text = (tmp_path / "textfile" / "gpudirect_job_watch.prom").read_text()
    assert 'gpudirect_job_hang{slurm_job="",comm="0x7f3a",rank="13",host="a3m-node-1"} 1' in text
    assert "gpudirect_job_ras_up 1" in text and 'gpudirect_job_watch_info{standins="true"} 1' in text
    assert promtool_check(text) == (0, "")


def fake_nvidia_smi(tmp_path, util, power):
    """An nvidia-smi that answers the job watch's two queries: GPU 0 runs the RAS stand-in's rank 0 (pid 4000)."""
    bindir = tmp_path / "smi"
    bindir.mkdir(exist_ok=True)
    script = bindir / "nvidia-smi"
    script.write_text('#!/bin/sh\ncase "$1" in\n  --query-gpu=*) echo "0, GPU-a, %d, %d.00, 700.00";;\n'
                      '  --query-compute-apps=*) echo "4000, GPU-a";;\n  *) exit 9;;\nesac\n' % (util, power))
    script.chmod(0o755)
    return str(bindir)


@pytest.mark.parametrize("util, power, named", [(100, 120, True), (100, 650, False), (0, 70, False)])
def test_the_job_watch_names_ranks_that_all_wait_in_one_collective_only_while_the_gpus_spin(
        tmp_path, util, power, named):
    standins = Ras(tmp_path)
    try:
        lines = watch_agent(tmp_path, standins.start(hang_at=0.0), "--poll", "0.5", "--hang-after", "2",
                            "--watch-for", "4", path=[fake_nvidia_smi(tmp_path, util, power)])
    finally:
        standins.stop()
    text = (tmp_path / "textfile" / "gpudirect_job_watch.prom").read_text()
    if not named:  # evaluation (computing) or a checkpoint (idle): a pause, not a hang
        assert lines == [] and "gpudirect_job_stuck{" not in text
        return
    assert len(lines) == 1, lines
    assert lines[0][1].startswith("gpudirect-health: job: stuck: communicator 0x7f3a (32 ranks) is stuck inside a "
                                  "collective: every rank issued AllReduce 1 and none issued another for 2 s while "
                                  "this node's GPUs spin (GPU 0 at 100% utilization and at most 17% of the power limit")
    assert 'gpudirect_job_stuck{slurm_job="",comm="0x7f3a"} 1' in text
    assert promtool_check(text) == (0, "")


def test_the_job_watch_names_a_dead_peer_from_the_event_stream_not_at_the_next_poll(tmp_path):
    standins = Ras(tmp_path)
    try:
        port = standins.start(dead_at=1.5, dead_rank=20)
        lines = watch_agent(tmp_path, port, "--poll", "30", "--watch-for", "4")
    finally:
        standins.stop()
    dead = [(at, line) for at, line in lines if "dead" in line]
    assert dead and "process 4020 on 10.0.0.4 dead" in dead[0][1]
    assert dead[0][0] < 1.5 + 1.0  # the poll is 30 s away: the stream told it
    assert 'gpudirect_job_dead_rank{slurm_job="",comm="",rank="",host="10.0.0.4"} 1' in (
        tmp_path / "textfile" / "gpudirect_job_watch.prom").read_text()


def test_no_nccl_job_is_ras_down_and_no_line(tmp_path):
    lines = watch_agent(tmp_path, 1, "--poll", "0.3", "--watch-for", "1")
    assert lines == []
    text = (tmp_path / "textfile" / "gpudirect_job_watch.prom").read_text()
    assert "gpudirect_job_ras_up 0" in text and "gpudirect_job_events_read 0" in text


def test_the_job_watch_publishes_the_nodes_inspector_bandwidth_without_a_job_too(tmp_path):
    dump = tmp_path / "inspector"
    dump.mkdir()
    for gpu, bandwidth in enumerate([170.0, 180.0, 190.0]):
        (dump / ("nccl_inspector_metrics_%d.prom" % gpu)).write_text(inspector_file("n1", bandwidth=bandwidth, gpus=1))
    (dump / "nccl_inspector_metrics_cut.prom").write_text('nccl_bus_bandwidth_gbs{node="n1",gpu="GP')
    lines = watch_agent(tmp_path, 1, "--poll", "0.3", "--watch-for", "1", "--inspector-dir", str(dump))
    assert lines == []
    text = (tmp_path / "textfile" / "gpudirect_job_watch.prom").read_text()
    assert ('gpudirect_job_bus_bandwidth_gbs{slurm_job="4242",comm="DP Group 0",collective="AllReduce",'
            'message_size="4-5GB"} 180.0') in text
    assert "gpudirect_job_inspector_files 4" in text and "gpudirect_job_inspector_skipped_lines 1" in text
    assert promtool_check(text) == (0, "")


def job_watch_unit(**options):
    """The job watch's unit as the template module renders it (Ansible's Jinja keeps trim_blocks on)."""
    with open(os.path.join(ROLE, "templates", "gpudirect-job-watch.service.j2")) as fh:
        template = jinja2.Environment(trim_blocks=True, undefined=jinja2.StrictUndefined).from_string(fh.read())
    with open(os.path.join(ROLE, "defaults", "main.yml")) as fh:
        defaults = yaml.safe_load(fh)
    return template.render(dict(defaults, ansible_managed="managed", **options))


def test_the_job_watch_unit_passes_its_options_to_the_agent_as_it_parses_them():
    spec = importlib.util.spec_from_file_location("gpudirect_health_agent", AGENT)
    agent_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent_module)
    for options in ({}, {"node_health_inspector_dir": "/var/lib/nccl-inspector"}):
        unit = job_watch_unit(**options)
        exec_line = [line for line in unit.splitlines() if line.startswith("ExecStart=")][0]
        assert "Restart=always" in unit.splitlines()
        args = agent_module.parse_args(exec_line.split()[1:])
        assert args.watch_jobs and args.poll == 10.0 and args.hang_after == 600.0 and args.ras_port == 28028
        assert args.inspector_dir == options.get("node_health_inspector_dir")


def test_a_timer_run_between_jobs_does_not_fail_per_job_rxdm_that_is_down_by_design(tmp_path):
    # RxDM per job (the Slurm prolog starts it, the epilog stops it): between jobs it is down, and only the
    # hooks judge it; the same stopped RxDM fails a node whose RxDM runs all the time
    FakeSys(tmp_path).nic("eth1", "42:01:0a:01:00:02", mtu=8244)
    rc, lines, err = agent(tmp_path, config(), "--rxdm-per-job")
    assert (rc, lines) == (0, ["gpudirect-health: pass: healthy (SANDBOX: stand-ins, not Google Cloud)"]), err
    assert agent(tmp_path, config())[0] == 1


def test_the_health_unit_passes_rxdm_per_job_to_the_agent_where_set():
    with open(os.path.join(ROLE, "templates", "gpudirect-health.service.j2")) as fh:
        env = jinja2.Environment(trim_blocks=True, undefined=jinja2.StrictUndefined)
        env.filters["bool"] = bool  # Ansible's, for the booleans given here
        template = env.from_string(fh.read())
    with open(os.path.join(ROLE, "defaults", "main.yml")) as fh:
        defaults = yaml.safe_load(fh)
    spec = importlib.util.spec_from_file_location("gpudirect_health_agent", AGENT)
    agent_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(agent_module)
    for per_job in (False, True):
        unit = template.render(dict(defaults, ansible_managed="managed", gpudirect_wait_online_unit="w.service",
                                    node_health_rxdm_per_job=per_job))
        exec_line = [line for line in unit.splitlines() if line.startswith("ExecStart=")][0]
        assert agent_module.parse_args(exec_line.split()[1:]).rxdm_per_job is per_job
