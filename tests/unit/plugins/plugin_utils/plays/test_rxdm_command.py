# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The RxDM command line for every TCPX/TCPXO family and OS flavour, built from the family table."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.plays import rxdm_command as rc

MEGA_REF = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.23"
HIGH_REF = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/tcpgpudmarxd-dev:v2.0.12"


def rxdm(family):
    return families.get_family(family)["rxdm"]


def run_argv(family, engine, ref, flavour, **spec):
    return rc.command(rxdm(family), dict(spec, engine=engine, ref=ref, flavour=flavour))["argv"]


def paths(family, **spec):
    return rc.command(rxdm(family), dict(spec, engine="docker", ref=MEGA_REF))["host_paths"]


def test_a3_mega_ubuntu_exact_command():
    # Ubuntu: the container toolkit injects the driver libraries with --gpus all; nothing is
    # mounted from /var/lib/nvidia, which Ubuntu images do not have
    argv = run_argv("a3-mega", "/usr/bin/docker", MEGA_REF, "ubuntu")
    assert argv == [
        "/usr/bin/docker", "run", "--rm", "--name", "receive-datapath-manager", "--pull=never",
        "--network=host", "--privileged", "--cap-add=NET_ADMIN", "--gpus", "all",
        "--volume", "/dev/dmabuf_import_helper:/dev/dmabuf_import_helper",
        "--env", "HEALTH_CHECK_LOG_FILE=/run/health-check",
        "--env", "LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu",
        MEGA_REF, "--num_hops=2", "--num_nics=8",
    ]
    assert "/var/lib/nvidia/lib64" not in " ".join(argv)


def test_driver_libraries_are_mounted_from_where_the_node_has_them():
    argv = run_argv("a3-mega", "docker", MEGA_REF, "cos", driver_lib_dir="/var/lib/nvidia/lib64")
    assert "/var/lib/nvidia/lib64:/usr/local/nvidia/lib64:ro" in argv
    argv = run_argv("a3-high", "docker", HIGH_REF, "ubuntu", gpus=False,
                    driver_lib_dir="/usr/lib/x86_64-linux-gnu")
    assert "/usr/lib/x86_64-linux-gnu:/usr/local/nvidia/lib64:ro" in argv
    assert paths("a3-high", flavour="ubuntu", driver_lib_dir="/usr/lib/x86_64-linux-gnu") == [
        "/opt/tcpdirect_benchmark", "/run/tcpx", "/usr/lib/x86_64-linux-gnu"]


@pytest.mark.parametrize("family", ["a3-high", "a3-edge"])
def test_a3_high_ubuntu_uses_manual_topology_and_entrypoint(family):
    argv = run_argv(family, "docker", HIGH_REF, "ubuntu")
    ref = argv.index(HIGH_REF)
    assert argv[ref + 1:] == ["--gpu_nic_preset", "manual", "--gpu_nic_topology",
                              "/opt/tcpdirect_benchmark/gpu_rxq_configuration.textproto",
                              "--gpu_shmem_type", "fd", "--uds_path", "/run/tcpx"]
    flags = argv[:ref]
    assert flags[flags.index("--entrypoint") + 1] == "/tcpgpudmarxd/build/app/tcpgpudmarxd"
    assert flags[flags.index("--ulimit") + 1] == "memlock=-1"
    assert "--volume" in flags and "/run/tcpx:/run/tcpx" in flags
    # the manual preset reads its topology file inside the container: its directory is mounted
    assert "/opt/tcpdirect_benchmark:/opt/tcpdirect_benchmark" in flags
    assert "--gpus" in flags and "--device" not in flags


def test_a3_high_cos_passes_devices_and_a3vm_preset():
    argv = run_argv("a3-high", "docker", HIGH_REF, "cos")
    assert "--gpus" not in argv
    devices = [argv[i + 1] for i, w in enumerate(argv) if w == "--device"]
    assert devices == ["/dev/nvidia%d" % i for i in range(8)] + ["/dev/nvidia-uvm", "/dev/nvidiactl"]
    tail = argv[argv.index(HIGH_REF) + 1:]
    assert tail == ["--gpu_nic_preset", "a3vm", "--gpu_shmem_type", "fd", "--uds_path", "/run/tcpx",
                    "--setup_param", "--verbose 128 2 0"]


def test_volume_sources_swap_only_the_host_side():
    argv = run_argv("a3-mega", "docker", MEGA_REF, "ubuntu",
                    volume_sources={"/dev/dmabuf_import_helper": "/run/standin/dmabuf"})
    assert "/run/standin/dmabuf:/dev/dmabuf_import_helper" in argv
    assert "/dev/dmabuf_import_helper:/dev/dmabuf_import_helper" not in argv
    assert paths("a3-mega", volume_sources={"/dev/dmabuf_import_helper": "/run/standin/dmabuf"}) == [
        "/run/standin/dmabuf"]


def test_volume_sources_must_name_a_table_mount():
    with pytest.raises(rc.RxdmCommandError, match="/dev/nope, which the RxDM table does not mount"):
        run_argv("a3-mega", "docker", MEGA_REF, "ubuntu", volume_sources={"/dev/nope": "/x"})


def test_overrides_gpus_devices_args_env():
    argv = run_argv("a3-mega", "podman", MEGA_REF, "ubuntu", gpus=False, gpu_devices=[],
                    extra_env={"STANDIN_READY_DELAY_S": "1"}, extra_args=["--v=1"],
                    extra_volumes={"/opt/topo": "/opt/tcpdirect_benchmark"})
    assert "--gpus" not in argv and "--device" not in argv
    assert "STANDIN_READY_DELAY_S=1" in argv and argv[-1] == "--v=1"
    assert "/opt/topo:/opt/tcpdirect_benchmark" in argv
    replaced = run_argv("a3-mega", "podman", MEGA_REF, "ubuntu", args=["--num_hops=1"])
    assert replaced[-1] == "--num_hops=1" and "--num_nics=8" not in replaced


def test_gib_family_and_unknown_flavour_are_clear_errors():
    with pytest.raises(rc.RxdmCommandError, match="runs no RxDM"):
        run_argv("a4", "docker", "x:y", "ubuntu")
    with pytest.raises(rc.RxdmCommandError, match="OS flavour 'rhel' unknown"):
        run_argv("a3-mega", "docker", MEGA_REF, "rhel")


def test_systemd_quoting_keeps_words_intact():
    line = rc.systemd_exec_line(["/usr/bin/docker", "run", "--setup_param", "--verbose 128 2 0",
                                 "--env", "A=$HOME", "50%", 'say "hi"'])
    assert line == ('/usr/bin/docker run --setup_param "--verbose 128 2 0" --env "A=$$HOME" 50%% '
                    '"say \\"hi\\""')


def test_one_spec_names_what_is_unknown_or_missing():
    with pytest.raises(rc.RxdmCommandError, match="unknown key[(]s[)] gpu, volumes; known: args, "):
        rc.command(rxdm("a3-mega"), {"engine": "docker", "ref": MEGA_REF, "gpu": True, "volumes": {}})
    with pytest.raises(rc.RxdmCommandError, match="^ref: missing$"):
        rc.command(rxdm("a3-mega"), {"engine": "docker"})
    # null is "not given": the defaults stand
    assert rc.command(rxdm("a3-mega"), {"engine": "docker", "ref": MEGA_REF, "name": None, "args": None})["argv"][:5] \
        == ["docker", "run", "--rm", "--name", "receive-datapath-manager"]
