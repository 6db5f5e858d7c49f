# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node health metrics in Prometheus text format, validated by the real promtool."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import shutil
import subprocess

from ansible_collections.gpudirect.gcp.plugins.module_utils.health import health_metrics as hm
from ansible_collections.gpudirect.gcp.plugins.module_utils.health.node_health import finding


def promtool_check(text):
    """(exit status, output) of `promtool check metrics` on text (make deps installs promtool)."""
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: run `make deps` (Debian package prometheus)"
    proc = subprocess.run([promtool, "check", "metrics"], input=text, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    return proc.returncode, proc.stdout


def result(findings=()):
    return {
        "family": "a3-mega", "duration_s": 0.42, "findings": list(findings),
        "nics": [{"nic": "gpu0", "iface": "eth1", "mtu": 8244, "expected_mtu": 8244, "up": True, "problems": []},
                 {"nic": "gpu1", "iface": "eth2", "mtu": 1460, "expected_mtu": 8244, "up": True,
                  "problems": ["mtu 1460, expected 8244"]},
                 {"nic": "gpu2", "iface": None, "mtu": None, "expected_mtu": 8244, "up": False,
                  "problems": ["no such interface"]}],
        "rxdm": {"ready": False}, "plugin": {"intact": True}, "profile": {"consistent": True},
    }


def series(text, name):
    return [line for line in text.splitlines() if line.startswith(name + "{") or line.startswith(name + " ")]


def test_a_result_renders_to_metrics_promtool_accepts():
    found = [finding("nic", "eth2", "fail", "mtu 1460, expected 8244"),
             finding("rxdm", 'odd "name"\\x', "fail", "not running"),
             finding("rxdm", 'odd "name"\\x', "fail", "a second cause, same labels")]
    text = hm.render(result(found), 1764000000.5, standins=True)
    rc, out = promtool_check(text)
    assert rc == 0, out
    assert series(text, "gpudirect_node_health_ok") == ["gpudirect_node_health_ok 0"]
    assert 'gpudirect_node_health_findings{severity="fail"} 3' in text
    assert 'gpudirect_node_health_findings{severity="warn"} 0' in text
    # one series per label set, values escaped
    assert series(text, "gpudirect_node_health_finding") == [
        'gpudirect_node_health_finding{component="nic",subject="eth2",severity="fail"} 1',
        'gpudirect_node_health_finding{component="rxdm",subject="odd \\"name\\"\\\\x",severity="fail"} 1']
    assert 'gpudirect_nic_mtu_bytes{nic="gpu1",interface="eth2"} 1460' in text
    assert 'gpudirect_nic_up{nic="gpu1",interface="eth2"} 1' in text
    assert 'gpudirect_nic_up{nic="gpu2",interface=""} 0' in text
    assert series(text, "gpudirect_rxdm_ready") == ["gpudirect_rxdm_ready 0"]
    assert 'gpudirect_node_health_info{family="a3-mega",standins="true"} 1' in text
    assert series(text, "gpudirect_node_health_last_run_timestamp_seconds") == [
        "gpudirect_node_health_last_run_timestamp_seconds 1764000000.5"]


def test_a_healthy_gib_node_leaves_out_rxdm_and_says_ok():
    healthy = dict(result(), nics=[], rxdm=None)
    text = hm.render(healthy, 1764000000.0, timed_out=False)
    assert promtool_check(text)[0] == 0
    assert "gpudirect_rxdm_ready" not in text and "gpudirect_nic_up" not in text
    assert series(text, "gpudirect_node_health_ok") == ["gpudirect_node_health_ok 1"]
    assert series(text, "gpudirect_node_health_timed_out") == ["gpudirect_node_health_timed_out 0"]


def test_promtool_rejects_what_the_renderer_must_avoid():
    # the validator itself can fail: an unescaped quote in a label value, a family split in two
    assert promtool_check('# HELP x y\n# TYPE x gauge\nx{a="1"1"} 1\n')[0] != 0
    assert promtool_check("# HELP x y\n# TYPE x gauge\nx 1\n# HELP x y\n# TYPE x gauge\nx 2\n")[0] != 0


def test_no_sample_carries_a_timestamp():
    # the textfile collector skips a whole file with one; promtool 2.42 does not flag them, so this does
    text = hm.render(result([finding("nic", "eth2", "fail", "x")]), 1764000000.5)
    sample = re.compile(r'^[a-z_]+(\{[^}]*\})? -?[0-9.e+-]+$')
    for line in text.splitlines():
        assert line.startswith("# ") or sample.match(line), line


def test_gpus_and_their_xids_are_series_of_their_own():
    res = dict(result(), gpu={"driver": "580.159.04", "count": 7, "expected": 8,
                              "gpus": [{"index": 0, "bus": "0000:04:00", "ok": True},
                                       {"index": 1, "bus": "0000:05:00", "ok": False}],
                              "xids": [{"pci_bus_id": "0000:8b:00", "xid": 79, "count": 2}]})
    text = hm.render(res, 1764000000.0)
    rc, out = promtool_check(text)
    assert rc == 0, out
    assert series(text, "gpudirect_gpus_seen") == ["gpudirect_gpus_seen 7"]
    assert series(text, "gpudirect_gpus_expected") == ["gpudirect_gpus_expected 8"]
    assert series(text, "gpudirect_gpu_ok") == ['gpudirect_gpu_ok{gpu="0",bus="0000:04:00"} 1',
                                                'gpudirect_gpu_ok{gpu="1",bus="0000:05:00"} 0']
    assert series(text, "gpudirect_gpu_xid_events") == ['gpudirect_gpu_xid_events{bus="0000:8b:00",xid="79"} 2']
    # no GPU part (not configured): no GPU series at all
    assert series(hm.render(result(), 1764000000.0), "gpudirect_gpus_seen") == []


def test_rdma_ports_are_series_of_their_own():
    res = dict(result(), family="a4x", gpu={"driver": "580", "count": 4, "expected": 4, "gpus": [], "xids": [],
                                            "rdma_ports": [
                                                {"device": "mlx5_0", "port": "1", "state": "ACTIVE", "active_mtu": 4096,
                                                 "errors": 0},
                                                {"device": "mlx5_3", "port": "1", "state": "DOWN", "active_mtu": None,
                                                 "errors": 43}]})
    text = hm.render(res, 1764000000.5)
    assert promtool_check(text)[0] == 0
    assert series(text, "gpudirect_rdma_port_active") == [
        'gpudirect_rdma_port_active{device="mlx5_0",port="1"} 1', 'gpudirect_rdma_port_active{device="mlx5_3",port="1"} 0']
    assert series(text, "gpudirect_rdma_port_active_mtu_bytes") == [
        'gpudirect_rdma_port_active_mtu_bytes{device="mlx5_0",port="1"} 4096']
    assert 'gpudirect_rdma_port_errors{device="mlx5_3",port="1"} 43' in text
