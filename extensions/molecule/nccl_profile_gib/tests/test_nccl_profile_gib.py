# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""gIB: the profile's base is the installed release's set_nccl_env.sh, and that release's checker accepts it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

testinfra_hosts = ["ansible://gpu_nodes"]
ENV_FILE = "/etc/nccl/nccl.env"
PERF = "/opt/nccl-tests-standin/build/all_gather_perf"


def _env(host):
    return dict(line.split("=", 1) for line in host.file(ENV_FILE).content_string.splitlines()
                if line and not line.startswith("#"))


def test_installer_laid_out_the_gib_tree(host):
    for path in ("/usr/local/gib/lib64/libnccl-net.so", "/usr/local/gib/scripts/set_nccl_env.sh",
                 "/usr/local/gib/configs/guest_config.txtpb"):
        assert "STAND-IN" in host.file(path).content_string, path
    assert host.file("/etc/ld.so.conf.d/000_nccl-gib.conf").contains("/usr/local/gib/lib64")


def test_base_environment_comes_from_the_installed_script(host):
    env = _env(host)
    # this release's value, which no copy of an older release's values would carry
    assert env["NCCL_P2P_NVL_CHUNKSIZE"] == "262144"
    # computed by the script from NCCL_LIB_DIR, so read by sourcing it
    assert env["NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE"] == "/usr/local/gib/configs/guest_config.txtpb"
    # the collection's additions on top, from the node
    assert env["NCCL_NET"] == "gIB" and env["NCCL_SOCKET_IFNAME"] == "enp0s19,enp192s20"
    assert env["LD_LIBRARY_PATH"] == "/usr/local/gib/lib64" and env["NCCL_DEBUG"] == "WARN"
    header = host.file(ENV_FILE).content_string
    assert "/usr/local/gib/scripts/set_nccl_env.sh" in header
    assert "gpudirect-gib/nccl-plugin-gib:v1.1.1" in header


def test_the_releases_checker_accepts_the_profile_and_refuses_a_copy(host):
    ok = host.run("set -a; . %s; set +a; %s -b 1G -e 1G -g 1" % (ENV_FILE, PERF))
    assert ok.rc == 0, ok.stdout + ok.stderr
    assert "Using network gIB" in ok.stdout and "STAND-IN" in ok.stdout
    old = host.run("set -a; . %s; set +a; NCCL_P2P_NVL_CHUNKSIZE=524288 %s -b 1G -e 1G -g 1" % (ENV_FILE, PERF))
    assert old.rc == 3 and "mismatch enforced: NCCL_P2P_NVL_CHUNKSIZE=524288 (expected 262144)" in old.stdout
