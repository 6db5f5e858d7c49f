# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""After converge and the side effect (kill, flag change, timeout, refusals, back to the
converged config): the RxDM unit runs exactly the family table's command and RxDM is ready."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import rxdm_command

testinfra_hosts = ["ansible://gpu_nodes"]
UNIT = "/etc/systemd/system/receive-datapath-manager.service"
STANDIN_DMABUF = "/var/lib/gpudirect-standin/dmabuf_import_helper"
TOOLKIT_LIBCUDA = "/usr/lib/x86_64-linux-gnu/libcuda.so.1"


def _unit_lines(host, key):
    return [line.split("=", 1)[1] for line in host.file(UNIT).content_string.splitlines()
            if line.startswith(key + "=")]


def test_unit_runs_the_tables_command(host):
    family = host.ansible.get_variables()["gpu_family"]
    rxdm = families.get_family(family)["rxdm"]
    engine = host.check_output("command -v docker")
    ref = "%s:%s" % (rxdm["image"], rxdm["version"])
    # Google's Ubuntu image: the packaged driver and the container toolkit, which takes `--gpus all`
    assert host.file(TOOLKIT_LIBCUDA).exists and not host.file("/var/lib/nvidia").exists
    assert host.exists("nvidia-container-runtime-hook")
    expected = rxdm_command.command(rxdm, {"engine": engine, "ref": ref, "flavour": "ubuntu", "gpus": True,
                                           "volume_sources": {"/dev/dmabuf_import_helper": STANDIN_DMABUF}})["argv"]
    assert _unit_lines(host, "ExecStart") == [rxdm_command.systemd_exec_line(expected)]
    assert _unit_lines(host, "Restart") == ["always"]
    assert "gpu-network-wait-online.service" in _unit_lines(host, "After")[0]


def test_service_enabled_and_running(host):
    svc = host.service("receive-datapath-manager")
    assert svc.is_enabled
    assert svc.is_running


def test_container_is_ready_with_the_health_check_file(host):
    deadline = time.time() + 60
    out = ""
    while time.time() < deadline:
        # `docker cp` reads the container's file without running anything in it
        cmd = host.run("docker cp receive-datapath-manager:/run/health-check /tmp/rxdm-health-check && "
                       "cat /tmp/rxdm-health-check")
        out = cmd.stdout
        if cmd.rc == 0 and "Buffer manager initialization complete" in out:
            break
        time.sleep(2)
    assert "Buffer manager initialization complete" in out
    logs = host.run("docker logs receive-datapath-manager")
    assert "STAND-IN tcpgpudmarxd (TCPXO)" in logs.stdout + logs.stderr


def test_container_has_the_mounts_and_env_rxdm_needs(host):
    info = json.loads(host.check_output("docker inspect receive-datapath-manager"))[0]
    mounts = dict((m["Destination"], m["Source"]) for m in info["Mounts"])
    assert mounts["/dev/dmabuf_import_helper"] == STANDIN_DMABUF
    # the toolkit (stand-in) injected libcuda.so.1; nothing is mounted at /usr/local/nvidia/lib64
    assert mounts[TOOLKIT_LIBCUDA] == TOOLKIT_LIBCUDA
    assert "/usr/local/nvidia/lib64" not in mounts
    env = info["Config"]["Env"]
    assert "HEALTH_CHECK_LOG_FILE=/run/health-check" in env
    # `--gpus all` reached the container (the sandbox's docker hands it on as an environment variable)
    assert "GPUDIRECT_STANDIN_GPUS=all" in env
    assert info["HostConfig"]["Privileged"] is True
    assert info["HostConfig"]["NetworkMode"] == "host"
