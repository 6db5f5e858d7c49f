# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The machine-family table: the one place that holds facts about A3/A4 VMs.

Everything else (the inventory plugin, the roles through the
``gpudirect.gcp.family_profile`` filter, the NCCL judge) reads these facts from
here; nothing copies them.

Source keys used in the comments:
  CT   GoogleCloudPlatform/cluster-toolkit (blueprints, gpu_direct.tf, nccl-tests scripts)
  SG   GoogleCloudPlatform/slurm-gcp (receive-data-path-manager prolog)
  CEA  GoogleCloudPlatform/container-engine-accelerators (installers, README)
  DS   dstackai/dstack (gcp backend, docs)      SP  skypilot-org/skypilot
  GNB  Google doc "Networking and GPU machines"  RNP Google doc "RDMA network profiles"
  NVM  Google doc "Run NCCL on Compute Engine instances"
  NA4X Google doc "Run NCCL on custom GKE clusters that use A4X"
  LOGS Google doc "Collect and understand NCCL/gIB logs"
  CHS  GoogleCloudPlatform/cluster-health-scanner (per-machine thresholds)
  MGC  MG-Cafe TCPXO A3 Mega benchmark report
  UNOFF community "create-a3mega" Debian 12 image guide
A value of ``None`` means "not known from any source"; code must treat it as
unknown, never as zero.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

UNKNOWN = None

TRANSPORTS = ("tcpx", "tcpxo", "gib")

# Guest OS flavours that name NICs differently.  COS (and GKE pods) use eth*,
# Ubuntu, Debian and Rocky images use predictable PCI names (enp*).
OS_FLAVOURS = ("cos", "ubuntu")

_REGISTRY = "us-docker.pkg.dev/gce-ai-infra"

# --- shared pieces (referenced, not copied, by several families) ----------

_TCPX_RXDM = {
    # [SG receive-data-path-manager; CEA nccl-test-latest.yaml; CT gpu_direct.tf]
    "image": _REGISTRY + "/gpudirect-tcpx/tcpgpudmarxd-dev",
    "version": "v2.0.12",
    # RxDM version -> the only plugin version it pairs with [CT gpu_direct.tf; CEA README]
    "plugin_pairs": {"v2.0.12": "v3.1.9"},
    "entrypoint": "/tcpgpudmarxd/build/app/tcpgpudmarxd",
    "uds_path": "/run/tcpx",
    "privileged": True,
    "network_host": True,
    "cap_add": ["NET_ADMIN"],
    "ulimits": ["memlock=-1"],
    # host path -> container path [SG]
    "volumes": {
        "/var/lib/nvidia/lib64": "/usr/local/nvidia/lib64",
        "/run/tcpx": "/run/tcpx",
    },
    "devices": [],
    "env": {"LD_LIBRARY_PATH": "/usr/local/nvidia/lib64:/run/tcpx:/usr/lib/lib32:/usr/lib/x86_64-linux-gnu/"},
    # [SG (Ubuntu, manual topology); SP, DS, CEA (COS, a3vm preset)]
    "args": {
        "ubuntu": ["--gpu_nic_preset", "manual",
                   "--gpu_nic_topology", "/opt/tcpdirect_benchmark/gpu_rxq_configuration.textproto",
                   "--gpu_shmem_type", "fd", "--uds_path", "/run/tcpx"],
        "cos": ["--gpu_nic_preset", "a3vm", "--gpu_shmem_type", "fd", "--uds_path", "/run/tcpx",
                "--setup_param", "--verbose 128 2 0"],
    },
    # COS has no nvidia-container-toolkit: devices are passed one by one [SP, DS]
    "gpus_flag": {"ubuntu": True, "cos": False},
    # devices passed one by one where --gpus is not used (COS) [SP, DS]
    "gpu_devices": ["/dev/nvidia%d" % i for i in range(8)] + ["/dev/nvidia-uvm", "/dev/nvidiactl"],
    # TCPX RxDM prints no readiness line; SG just sleeps 10 s after start.
    "ready_line": UNKNOWN,
    "ready_sleep_s": 10,
    "health_check_file": UNKNOWN,
    "log_file": UNKNOWN,
}

_TCPXO_RXDM = {
    # [SG receive-data-path-manager-mega v1.0.23; CEA README release notes]
    "image": _REGISTRY + "/gpudirect-tcpxo/tcpgpudmarxd-dev",
    "version": "v1.0.23",
    # [CT gpu_direct.tf v1.0.14<->v1.0.20; CEA Jan 2026 v1.0.15<->v1.0.21; SG v1.0.17<->v1.0.23]
    "plugin_pairs": {"v1.0.20": "v1.0.14", "v1.0.21": "v1.0.15", "v1.0.23": "v1.0.17"},
    "entrypoint": UNKNOWN,
    "uds_path": UNKNOWN,
    "privileged": True,
    "network_host": True,
    "cap_add": ["NET_ADMIN"],
    "ulimits": [],
    "volumes": {
        "/var/lib/nvidia/lib64": "/usr/local/nvidia/lib64",
        "/dev/dmabuf_import_helper": "/dev/dmabuf_import_helper",
    },
    "devices": [],
    "env": {"LD_LIBRARY_PATH": "/usr/lib/x86_64-linux-gnu",
            # makes RxDM write its readiness line to a file [CEA best-practice.md]
            "HEALTH_CHECK_LOG_FILE": "/run/health-check"},
    # Aug 2025 images dropped --uid= --alsologtostderr [CEA README]
    "args": {"ubuntu": ["--num_hops=2", "--num_nics=8"], "cos": ["--num_hops=2", "--num_nics=8"]},
    "gpus_flag": {"ubuntu": True, "cos": False},
    # as TCPX on COS (unconfirmed for TCPXO: no source runs A3 Mega RxDM on COS VMs) [SP, DS]
    "gpu_devices": ["/dev/nvidia%d" % i for i in range(8)] + ["/dev/nvidia-uvm", "/dev/nvidiactl"],
    # [SG polls docker logs for it, 60 x 2 s; UNOFF full line]
    "ready_line": "Buffer manager initialization complete",
    "ready_sleep_s": 0,
    "health_check_file": "/run/health-check",
    "log_file": "/tmp/mtest_fastrak_gpumem_manager.INFO",  # since v1.0.13_1 [CEA README]
}

_TCPX_PLUGIN = {
    "kind": "image",
    # [CEA nccl-test-latest.yaml; SG pins v3.1.9-2.19.4-12.0]
    "image": _REGISTRY + "/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev",
    "version": "v3.1.9",
    "install_args": ["install"],  # [SG]
    "install_volumes": {"/var/lib": "/var/lib"},
    "install_dir": "/var/lib/tcpx",
    "lib_dir": "/var/lib/tcpx/lib64",
    # Only libnccl-net.so is confirmed for TCPX [SG, SP]
    "files": ["libnccl-net.so"],
    "env_profile": UNKNOWN,
    "package": UNKNOWN,
    "package_version": UNKNOWN,
    # NCCL_DEBUG=INFO line that proves the plugin loaded [SP README]
    "net_name": "GPUDirectTCPX",
}

_TCPXO_PLUGIN = {
    "kind": "image",
    # [SG v1.0.17; CEA Jan 2026 v1.0.15]
    "image": _REGISTRY + "/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev",
    "version": "v1.0.17",
    "install_args": ["install", "--install-nccl"],  # [SG; DS]
    "install_volumes": {"/var/lib": "/var/lib"},
    "install_dir": "/var/lib/tcpxo",
    "lib_dir": "/var/lib/tcpxo/lib64",
    # [UNOFF; CEA README]
    "files": ["libnccl-net.so", "libnccl-net_internal.so", "libnccl-tcpx.so", "libnccl-tcpxo.so",
              "libnccl-tuner.so", "libnccl.so.2", "a3plus_tuner_config.textproto",
              "a3plus_guest_config.textproto", "nccl-env-profile.sh"],
    "env_profile": "nccl-env-profile.sh",
    "package": UNKNOWN,
    "package_version": UNKNOWN,
    "net_name": "FasTrak",  # "Using network FasTrak" [UNOFF NCCL_NET=FasTrak]
}


def _gib_plugin(image, version):
    return {
        "kind": "package",
        # apt/rpm nccl-gib [NVM]; CT pins 1.1.0 with libnccl2 2.27.5-1+cuda12.9 and holds both
        "package": "nccl-gib",
        "package_version": "1.1.0",
        "nccl_package": "libnccl2",
        "nccl_package_version": "2.27.5-1+cuda12.9",
        # container installer alternative [CEA; CT a4xhigh-slurm]
        "image": image,
        "version": version,
        "install_args": ["install", "--install-nccl"],
        "install_volumes": {"/usr/local/gib": "/var/lib/gib"},
        "install_dir": "/usr/local/gib",
        "lib_dir": "/usr/local/gib/lib64",
        # [LOGS; NVM; CT Dockerfiles]
        "files": ["scripts/set_nccl_env.sh", "scripts/run_nccl_tests.sh", "scripts/show_gids.sh",
                  "configs/guest_config.txtpb"],
        "env_profile": "scripts/set_nccl_env.sh",
        "ld_so_conf": "/etc/ld.so.conf.d/000_nccl-gib.conf",  # [CT a4high-vm]
        "net_name": "gIB",  # "Using network gIB" [LOGS]
    }


# NCCL settings that do not depend on the node (names of interfaces are
# filled in from the node's real interfaces by render_nccl_env()).
_TCPX_ENV = {
    # [CT a3-highgpu-8g run-nccl-tests.sh; CEA nccl-config.yaml]
    "NCCL_NET": "GPUDirectTCPX_v7",
    "NCCL_CROSS_NIC": "0",
    "NCCL_ALGO": "Ring",
    "NCCL_PROTO": "Simple",
    "NCCL_NSOCKS_PERTHREAD": "4",
    "NCCL_SOCKET_NTHREADS": "1",
    "NCCL_DYNAMIC_CHUNK_SIZE": "524288",
    "NCCL_P2P_NET_CHUNKSIZE": "524288",
    "NCCL_P2P_PCI_CHUNKSIZE": "524288",
    "NCCL_P2P_NVL_CHUNKSIZE": "1048576",
    "NCCL_BUFFSIZE": "4194304",  # CT; SP uses 8388608 (open point, section 9.9)
    "NCCL_NET_GDR_LEVEL": "PIX",
    "NCCL_P2P_PXN_LEVEL": "0",
    "NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX": "/run/tcpx",  # must equal RxDM --uds_path
    "NCCL_GPUDIRECTTCPX_PROGRAM_FLOW_STEERING_WAIT_MICROS": "500000",  # CT; SP/DS 50000
    "NCCL_GPUDIRECTTCPX_FORCE_ACK": "0",  # [SP, DS]
}
# interface-valued variables: "control" = the host NIC, "gpu" = GPU NICs, comma separated
_TCPX_ENV_IFACES = {
    "NCCL_SOCKET_IFNAME": "control",
    "NCCL_GPUDIRECTTCPX_CTRL_DEV": "control",
    "NCCL_GPUDIRECTTCPX_SOCKET_IFNAME": "gpu",
}
# CPU bindings per GPU NIC, in GPU-NIC order [CT a3-highgpu-8g run-nccl-tests.sh]
_TCPX_BINDINGS = {
    "NCCL_GPUDIRECTTCPX_TX_BINDINGS": ["8-21,112-125", "8-21,112-125", "60-73,164-177", "60-73,164-177"],
    "NCCL_GPUDIRECTTCPX_RX_BINDINGS": ["22-35,126-139", "22-35,126-139", "74-87,178-191", "74-87,178-191"],
}

_TCPXO_ENV = {
    # The installer's nccl-env-profile.sh values, v1.0.15 [CEA README]
    "NCCL_CROSS_NIC": "0",
    "NCCL_PROTO": "Simple,LL128",
    "NCCL_MIN_NCHANNELS": "4",
    "NCCL_TUNER_PLUGIN": "libnccl-tuner.so",
    "NCCL_TUNER_CONFIG_PATH": "{lib_dir}/a3plus_tuner_config.textproto",
    "NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE": "{lib_dir}/a3plus_guest_config.textproto",
    "NCCL_NVLSTREE_MAX_CHUNKSIZE": "131072",  # checker enforces it on >= v1.0.12 [CEA]
    "NCCL_P2P_NET_CHUNKSIZE": "524288",
    "NCCL_P2P_PCI_CHUNKSIZE": "524288",
    "NCCL_P2P_NVL_CHUNKSIZE": "1048576",
    "NCCL_FASTRAK_NUM_FLOWS": "2",
    "NCCL_FASTRAK_USE_SNAP": "1",
    "NCCL_FASTRAK_PLUGIN_ACCEPT_TIMEOUT_MS": "600000",
    "NCCL_FASTRAK_ENABLE_CONTROL_CHANNEL": "0",
    "NCCL_BUFFSIZE": "8388608",
    "NCCL_NET_GDR_LEVEL": "PIX",
    "NCCL_FASTRAK_ENABLE_HOTPATH_LOGGING": "0",
    "NCCL_FASTRAK_USE_LLCM": "1",
    "NCCL_NVLS_ENABLE": "1",
    "NCCL_DEBUG": "WARN",
    "NCCL_DEBUG_SUBSYS": "INIT,NET,ENV,COLL,GRAPH",
    # host overrides for Ubuntu/Debian [SG; CT]
    "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY": "/dev/aperture_devices",
}
_TCPXO_ENV_IFACES = {
    "NCCL_SOCKET_IFNAME": "control",
    "NCCL_FASTRAK_CTRL_DEV": "control",
    "NCCL_FASTRAK_IFNAME": "gpu",
}

_GIB_ENV = {
    # [CT a4high-vm.yaml, a3-ultragpu nemo Dockerfile]; set_nccl_env.sh text is unconfirmed
    "NCCL_NET": "gIB",
    "NCCL_CROSS_NIC": "0",
    "NCCL_NET_GDR_LEVEL": "PIX",
    "NCCL_P2P_NET_CHUNKSIZE": "131072",
    "NCCL_P2P_PCI_CHUNKSIZE": "131072",
    "NCCL_P2P_NVL_CHUNKSIZE": "524288",
    "NCCL_NVLS_CHUNKSIZE": "524288",
    "NCCL_IB_GID_INDEX": "3",
    "NCCL_IB_ADAPTIVE_ROUTING": "1",
    "NCCL_IB_QPS_PER_CONNECTION": "4",
    "NCCL_IB_TC": "52",
    "NCCL_IB_FIFO_TC": "84",
    "NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE": "{install_dir}/configs/guest_config.txtpb",
}
# gIB uses RDMA devices for data; sockets go over the gVNIC NICs [CT]
_GIB_ENV_IFACES = {"NCCL_SOCKET_IFNAME": "host"}

# Variables a plugin's guest config checker rejects [CEA README: "avoid NCCL_ALGO"]
_TCPXO_FORBIDDEN = ["NCCL_ALGO"]


def _nics(names_cos, names_ubuntu, nic_types, gpu_indexes, host_indexes, gbps):
    return {
        "count": len(nic_types),
        "nic_types": nic_types,          # per NIC, in API order nic0..
        "gpu_indexes": gpu_indexes,      # which NICs carry GPU traffic
        "host_indexes": host_indexes,    # regular (non-GPU) NICs; [0] is the control NIC
        "guest_names": {"cos": names_cos, "ubuntu": names_ubuntu},
        "gpu_nic_gbps": gbps,            # line rate of one GPU NIC
    }


FAMILIES = {
    "a3-high": {
        "machine_type": "a3-highgpu-8g",
        "transport": "tcpx",
        "arch": "x86_64",
        "gpu": {"model": "nvidia-h100-80gb", "count": 8, "cuda_arch": "90"},
        # 1 primary + 4 GPU gVNICs of 200 Gbps [GKEBW]; Ubuntu names [CT a3high blueprint], COS [CEA]
        "nics": _nics(["eth0", "eth1", "eth2", "eth3", "eth4"],
                      ["enp0s12", "enp6s0", "enp12s0", "enp134s0", "enp140s0"],
                      ["GVNIC"] * 5, [1, 2, 3, 4], [0], 200),
        "rdma_devices": [],
        "vpc_mtu": 8244,                 # [CT gke-a3-highgpu.yaml; DS; SP]
        "max_vm_gbps": 1000,             # [GNB]
        "rxdm": _TCPX_RXDM,
        "plugin": _TCPX_PLUGIN,
        "nccl_env": _TCPX_ENV,
        "nccl_env_ifaces": _TCPX_ENV_IFACES,
        "nccl_env_bindings": _TCPX_BINDINGS,
        "nccl_env_forbidden": [],
        "host": {
            "kernel_modules": [],
            "udev_rules": [],
            "devices": [],
            "sysctl": {"net.core.optmem_max": "131072"},  # [CEA optmem-max-ds.yaml]
            "wait_online_timeout_s": 120,                  # delay-a3.service [CT]
            "held_packages": ["nvidia-driver-570-server-open", "cuda-toolkit-12-8"],  # [CT; CT #3032]
        },
        # 2-node baselines: busbw GB/s at a large message size
        "baselines": [
            {"collective": "all_gather", "bytes": 8 * 2 ** 30, "busbw_gbps": 50.0, "source": "DS gcp.md"},
            {"collective": "all_reduce", "bytes": 2 * 2 ** 30, "busbw_gbps": 66.0, "source": "SP README"},
        ],
        "avg_busbw_floor_gbps": 60.0,    # [CHS a3-high]
        # nccl-tests defaults [CT a3-highgpu-8g Slurm scripts]
        "nccl_tests": {"collectives": ["all_gather", "all_reduce"], "minbytes": "1G", "maxbytes": "8G",
                       "stepfactor": 2, "warmup_iters": 5, "iters": 40},
        "source": "CT a3high blueprints; GNB; SG; CEA",
    },
    "a3-edge": {
        "machine_type": "a3-edgegpu-8g",
        "transport": "tcpx",
        "arch": "x86_64",
        "gpu": {"model": "nvidia-h100-80gb", "count": 8, "cuda_arch": "90"},
        # DS and SP treat A3 Edge exactly as A3 High; guest names unconfirmed
        "nics": _nics(["eth0", "eth1", "eth2", "eth3", "eth4"],
                      ["enp0s12", "enp6s0", "enp12s0", "enp134s0", "enp140s0"],
                      ["GVNIC"] * 5, [1, 2, 3, 4], [0], 200),
        "rdma_devices": [],
        "vpc_mtu": 8244,
        "max_vm_gbps": 800,              # GNB versions say 600 or 800
        "rxdm": _TCPX_RXDM,
        "plugin": _TCPX_PLUGIN,
        "nccl_env": _TCPX_ENV,
        "nccl_env_ifaces": _TCPX_ENV_IFACES,
        "nccl_env_bindings": _TCPX_BINDINGS,
        "nccl_env_forbidden": [],
        "host": {
            "kernel_modules": [],
            "udev_rules": [],
            "devices": [],
            "sysctl": {"net.core.optmem_max": "131072"},
            "wait_online_timeout_s": 120,
            "held_packages": ["nvidia-driver-570-server-open", "cuda-toolkit-12-8"],
        },
        "baselines": [],                 # no published A3 Edge figure
        "avg_busbw_floor_gbps": UNKNOWN,
        "nccl_tests": {"collectives": ["all_gather", "all_reduce"], "minbytes": "1G", "maxbytes": "8G",
                       "stepfactor": 2, "warmup_iters": 5, "iters": 40},
        "source": "DS, SP (treated as A3 High); GNB",
    },
    "a3-mega": {
        "machine_type": "a3-megagpu-8g",
        "transport": "tcpxo",
        "arch": "x86_64",
        "gpu": {"model": "nvidia-h100-mega-80gb", "count": 8, "cuda_arch": "90"},
        # 1 + 8 gVNICs [GKEBW]; Ubuntu/Debian names [CT run-nccl-tests.sh]; COS [CEA]
        "nics": _nics(["eth%d" % i for i in range(9)],
                      ["enp0s12", "enp6s0", "enp7s0", "enp13s0", "enp14s0",
                       "enp134s0", "enp135s0", "enp141s0", "enp142s0"],
                      ["GVNIC"] * 9, list(range(1, 9)), [0], 200),
        "rdma_devices": [],
        "vpc_mtu": 8244,                 # GKE examples, DS, MGC (CT Slurm uses 8896: open point 9.8)
        "max_vm_gbps": 1800,             # [GNB]
        "rxdm": _TCPXO_RXDM,
        "plugin": _TCPXO_PLUGIN,
        "nccl_env": _TCPXO_ENV,
        "nccl_env_ifaces": _TCPXO_ENV_IFACES,
        "nccl_env_bindings": {},
        "nccl_env_forbidden": _TCPXO_FORBIDDEN,
        "host": {
            # dmabuf-import-helper DKMS, `modprobe import-helper` [SG; UNOFF]
            "kernel_modules": ["import-helper"],
            # aperture PCI functions 1ae0:0084 bound into /dev/aperture_devices [CT udev rule]
            "udev_rules": [{"name": "00-a3-megagpu.rules", "pci_vendor": "0x1ae0", "pci_device": "0x0084",
                            "target_dir": "/dev/aperture_devices"}],
            "devices": ["/dev/dmabuf_import_helper", "/dev/aperture_devices"],
            "aperture_device_count": 8,  # [UNOFF]
            # /etc/security/limits.d values for all users [CT a3mega blueprints]
            "limits": {"memlock": "unlimited", "stack": "unlimited", "nproc": "unlimited", "nofile": "1048576"},
            # nvidia-persistenced ExecStart arguments of CT's override [CT]
            "persistenced_args": ["--user", "nvidia-persistenced", "--verbose"],
            "sysctl": {"net.core.optmem_max": "131072"},
            "wait_online_timeout_s": 180,  # delay-gpu-network.service [CT]
            "held_packages": ["nvidia-driver-580-open", "cuda-toolkit-13-0", "datacenter-gpu-manager-4-core",
                              "nvidia-container-toolkit"],  # [CT]
        },
        "baselines": [
            {"collective": "all_gather", "bytes": 8 * 2 ** 30, "busbw_gbps": 188.0, "source": "DS gcp.md; MGC"},
        ],
        "avg_busbw_floor_gbps": 150.0,   # [CHS a3-mega]
        # [CT a3-megagpu-8g Slurm scripts]
        "nccl_tests": {"collectives": ["all_gather"], "minbytes": "8M", "maxbytes": "8G",
                       "stepfactor": 2, "warmup_iters": 5, "iters": 200},
        "source": "CT a3mega blueprints; SG; CEA; GNB",
    },
    "a3-ultra": {
        "machine_type": "a3-ultragpu-8g",
        "transport": "gib",
        "arch": "x86_64",
        "gpu": {"model": "nvidia-h200-141gb", "count": 8, "cuda_arch": "90"},
        # 2 gVNIC + 8 CX-7 MRDMA of 400 Gbps [GNB]; names [CT a3-ultragpu run-nccl-tests.sh; LOGS; CEA]
        "nics": _nics(["eth%d" % i for i in range(10)],
                      ["enp0s19", "enp192s20"] + ["gpu%drdma0" % i for i in range(8)],
                      ["GVNIC"] * 2 + ["MRDMA"] * 8, list(range(2, 10)), [0, 1], 400),
        "rdma_devices": ["mlx5_%d" % i for i in range(8)],
        "vpc_mtu": 8896,                 # all VPCs [CT]; RoCE VPC [RNP]
        "max_vm_gbps": 3600,             # [GNB]
        "rxdm": UNKNOWN,                 # no RxDM on RDMA families [NVM]
        "plugin": _gib_plugin(_REGISTRY + "/gpudirect-gib/nccl-plugin-gib", "v1.1.1"),
        "nccl_env": dict(_GIB_ENV, NCCL_TUNER_CONFIG_PATH="{install_dir}/configs/tuner_config_a3u.txtpb"),
        "nccl_env_ifaces": _GIB_ENV_IFACES,
        "nccl_env_bindings": {},
        "nccl_env_forbidden": [],
        "host": {
            "kernel_modules": [],
            "udev_rules": [],
            "devices": [],
            "sysctl": {"net.core.optmem_max": "131072"},
            "wait_online_timeout_s": 180,
            "held_packages": ["nccl-gib", "libnccl2"],  # [CT]
            "gids_per_nic": 4,            # show_gids.sh, idx 2/3 carry the IPv4 [LOGS]
        },
        "baselines": [
            {"collective": "all_gather", "bytes": 8 * 2 ** 30, "busbw_gbps": 325.0, "source": "SP README"},
        ],
        "avg_busbw_floor_gbps": 250.0,   # [CHS a3-ultra]
        "nccl_tests": {"collectives": ["all_gather"], "minbytes": "256M", "maxbytes": "8G",
                       "stepfactor": 2, "warmup_iters": 5, "iters": 20},
        "source": "CT a3ultra blueprints; GNB; RNP; NVM",
    },
    "a4": {
        "machine_type": "a4-highgpu-8g",
        "transport": "gib",
        "arch": "x86_64",
        "gpu": {"model": "nvidia-b200", "count": 8, "cuda_arch": "100"},
        # same NIC layout as A3 Ultra [GNB]; names [CT a4high-vm, a4 ramble script]
        "nics": _nics(["eth%d" % i for i in range(10)],
                      ["enp0s19", "enp192s20"] + ["gpu%drdma0" % i for i in range(8)],
                      ["GVNIC"] * 2 + ["MRDMA"] * 8, list(range(2, 10)), [0, 1], 400),
        "rdma_devices": ["mlx5_%d" % i for i in range(8)],
        "vpc_mtu": 8896,
        "max_vm_gbps": 3600,
        "rxdm": UNKNOWN,
        "plugin": _gib_plugin(_REGISTRY + "/gpudirect-gib/nccl-plugin-gib", "v1.1.1"),
        "nccl_env": dict(_GIB_ENV, NCCL_TUNER_CONFIG_PATH="{install_dir}/configs/tuner_config_a4.txtpb"),
        "nccl_env_ifaces": _GIB_ENV_IFACES,
        "nccl_env_bindings": {},
        "nccl_env_forbidden": [],
        "host": {
            "kernel_modules": [],
            "udev_rules": [],
            "devices": [],
            "sysctl": {"net.core.optmem_max": "131072"},
            "wait_online_timeout_s": 180,
            "held_packages": ["nccl-gib", "libnccl2"],
            "gids_per_nic": 4,
        },
        "baselines": [
            {"collective": "all_gather", "bytes": 8 * 2 ** 30, "busbw_gbps": 375.0, "source": "NVM"},
            {"collective": "all_reduce", "bytes": 8 * 2 ** 30, "busbw_gbps": 683.0, "source": "DS gcp.md"},
        ],
        "avg_busbw_floor_gbps": 250.0,   # [CHS a4]
        "nccl_tests": {"collectives": ["all_gather", "all_reduce"], "minbytes": "256M", "maxbytes": "8G",
                       "stepfactor": 2, "warmup_iters": 5, "iters": 20},
        "source": "CT a4high blueprints; GNB; NVM; DS",
    },
    "a4x": {
        "machine_type": "a4x-highgpu-4g",
        "transport": "gib",
        "arch": "aarch64",
        "gpu": {"model": "nvidia-gb200", "count": 4, "cuda_arch": "100"},
        # 2 gVNIC + 4 CX-7 [GNB]; GKE pod names [CEA]; host RDMA names unconfirmed
        "nics": _nics(["eth%d" % i for i in range(6)],
                      ["enp0s19", "enp192s20", UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN],
                      ["GVNIC"] * 2 + ["MRDMA"] * 4, [2, 3, 4, 5], [0, 1], 400),
        "rdma_devices": ["mlx5_%d" % i for i in range(4)],
        "vpc_mtu": 8896,
        "max_vm_gbps": 2000,             # [GNB]
        "rxdm": UNKNOWN,
        "plugin": _gib_plugin(_REGISTRY + "/gpudirect-gib/nccl-plugin-gib-arm64", "v1.1.0"),
        "nccl_env": dict(_GIB_ENV, NCCL_TUNER_CONFIG_PATH="{install_dir}/configs/tuner_config.txtpb"),
        "nccl_env_ifaces": _GIB_ENV_IFACES,
        "nccl_env_bindings": {},
        "nccl_env_forbidden": [],
        "host": {
            "kernel_modules": [],
            "udev_rules": [],
            "devices": [],
            "sysctl": {"net.core.optmem_max": "131072"},
            "wait_online_timeout_s": 180,
            "held_packages": ["nccl-gib", "libnccl2"],
            "gids_per_nic": 4,
        },
        # Measured inside one NVLink domain (gpu_topology 1x72), so it is
        # bounded by NVLink rather than the NICs [NA4X]
        "baselines": [
            {"collective": "all_gather", "bytes": 8 * 2 ** 30, "busbw_gbps": 454.0, "source": "NA4X"},
        ],
        "nvlink_domain_gbps": 900.0,     # NVLink 5, 1.8 TB/s per GPU both ways (NVIDIA GB200 NVL72 spec)
        "avg_busbw_floor_gbps": 160.0,   # [CHS a4x]
        "nccl_tests": {"collectives": ["all_gather"], "minbytes": "256M", "maxbytes": "8G",
                       "stepfactor": 2, "warmup_iters": 5, "iters": 20},
        "source": "CT a4x blueprints; GNB; NA4X",
    },
}

MACHINE_TYPES = dict((f["machine_type"], name) for name, f in FAMILIES.items())


class FamilyError(ValueError):
    """A family, machine type or version that the table does not know."""


def family_names():
    return sorted(FAMILIES)


def get_family(name):
    """Return a deep copy of one family's profile, with its id added."""
    try:
        fam = FAMILIES[name]
    except (KeyError, TypeError):
        raise FamilyError("unknown GPU family %r; known: %s" % (name, ", ".join(family_names())))
    out = copy.deepcopy(fam)
    out["family"] = name
    return out


def machine_type_name(machine_type):
    """'…/zones/z/machineTypes/a3-megagpu-8g' or 'a3-megagpu-8g' -> 'a3-megagpu-8g'."""
    return (machine_type or "").rstrip("/").rsplit("/", 1)[-1]


def family_for_machine_type(machine_type):
    """Family id for a machine type (name or URL), or None when it is not an A3/A4 type."""
    return MACHINE_TYPES.get(machine_type_name(machine_type))


def os_flavour(distribution):
    """Map an Ansible ``ansible_distribution`` to the table's NIC naming flavour."""
    dist = (distribution or "").lower()
    if "container-optimized" in dist or dist in ("cos", "container-optimized os"):
        return "cos"
    return "ubuntu"


def gpu_nic_names(name, flavour):
    fam = FAMILIES[name]
    names = fam["nics"]["guest_names"][flavour]
    return [names[i] for i in fam["nics"]["gpu_indexes"]]


def busbw_ceiling_gbps(name, collective="all_gather"):
    """Upper bound for 2-node busbw, GB/s.

    Network-bound collectives cannot beat the sum of the GPU NICs' line rate.
    all_reduce with NVLS/tree algorithms moves half the bytes over the network
    per byte of busbw, so its ceiling is twice that.  A4X baselines come from a
    multi-node NVLink domain and are bounded by NVLink instead.
    """
    fam = FAMILIES[name]
    nic_gbps = len(fam["nics"]["gpu_indexes"]) * fam["nics"]["gpu_nic_gbps"] / 8.0
    if collective == "all_reduce":
        nic_gbps *= 2
    return max(nic_gbps, fam.get("nvlink_domain_gbps") or 0.0)


def baseline(name, collective):
    """The published baseline entry for a collective, or None."""
    for entry in FAMILIES[name]["baselines"]:
        if entry["collective"] == collective:
            return dict(entry)
    return None


def plugin_for_rxdm(name, rxdm_version):
    """The plugin version the table pairs with an RxDM version, or None if unknown."""
    rxdm = FAMILIES[name]["rxdm"]
    if not rxdm:
        return None
    return rxdm["plugin_pairs"].get(rxdm_version)


def check_versions(name, plugin_version, rxdm_version):
    """Return an error string when the plugin and RxDM versions do not pair, else None."""
    fam = FAMILIES[name]
    if not fam["rxdm"]:
        return None
    pairs = fam["rxdm"]["plugin_pairs"]
    if rxdm_version not in pairs:
        return ("RxDM %s is not in the %s version table (known: %s)"
                % (rxdm_version, name, ", ".join("%s<->plugin %s" % kv for kv in sorted(pairs.items()))))
    if pairs[rxdm_version] != plugin_version:
        return ("plugin %s does not pair with RxDM %s on %s: RxDM %s needs plugin %s"
                % (plugin_version, rxdm_version, name, rxdm_version, pairs[rxdm_version]))
    return None


def render_nccl_env(name, control_ifaces, gpu_ifaces, overrides=None, allow=None, plugin_dir=None):
    """Build the NCCL environment for a node from the table and its real interface names.

    control_ifaces: the node's host (non-GPU) interfaces, control NIC first.
    gpu_ifaces: the node's GPU data interfaces in GPU-NIC order.
    overrides: user values that win over the table.
    allow: forbidden variables the user forces anyway.
    Returns (env dict, list of problems).
    """
    fam = FAMILIES[name]
    plugin = fam["plugin"]
    lib_dir = plugin_dir or plugin["lib_dir"]
    install_dir = plugin["install_dir"]
    env = {}
    for key, value in fam["nccl_env"].items():
        env[key] = value.format(lib_dir=lib_dir, install_dir=install_dir)
    problems = []
    roles = {"control": list(control_ifaces[:1]), "host": list(control_ifaces), "gpu": list(gpu_ifaces)}
    for key, role in fam["nccl_env_ifaces"].items():
        if not roles[role]:
            problems.append("%s needs %s interfaces, none found" % (key, role))
            continue
        env[key] = ",".join(roles[role])
    for key, cpus in fam["nccl_env_bindings"].items():
        if len(gpu_ifaces) != len(cpus):
            problems.append("%s needs %d GPU interfaces, got %d" % (key, len(cpus), len(gpu_ifaces)))
            continue
        env[key] = ";".join("%s:%s" % (i, c) for i, c in zip(gpu_ifaces, cpus))
    env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(fam["gpu"]["count"]))
    env["LD_LIBRARY_PATH"] = lib_dir
    for key, value in (overrides or {}).items():
        env[key] = str(value)
    for key in fam["nccl_env_forbidden"]:
        if key in env and key not in (allow or []):
            problems.append("%s is rejected by the %s plugin's guest config checker; "
                            "force it with the allow list if you must" % (key, name))
    return env, problems
