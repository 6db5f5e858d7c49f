# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The machine-family table: the one place that holds facts about A3/A4 VMs.

Everything else (the inventory plugin, the roles through the
``gpudirect.gcp.family_profile`` filter, the NCCL judge) reads these facts from
here; nothing copies them.

Source keys used in the comments (in brackets, and first in each "source" value):
  CT   GoogleCloudPlatform/cluster-toolkit (blueprints, gpu_direct.tf, nccl-tests scripts)
  SG   GoogleCloudPlatform/slurm-gcp (receive-data-path-manager prolog)
  CEA  GoogleCloudPlatform/container-engine-accelerators (installers, README)
  DS   dstackai/dstack (gcp backend, docs)
  SP   skypilot-org/skypilot
  GNB  Google doc "Networking and GPU machines"
  RNP  Google doc "RDMA network profiles"
  GKEBW Google doc "Maximize GPU network bandwidth in Standard and Autopilot mode clusters"
  NVM  Google doc "Run NCCL on Compute Engine instances"
  NA4X Google doc "Run NCCL on custom GKE clusters that use A4X"
  LOGS Google doc "Collect and understand NCCL/gIB logs"
  CHS  GoogleCloudPlatform/cluster-health-scanner (per-machine thresholds)
  RMB  GoogleCloudPlatform/ramble nccl-tests application (the defaults CT's A4/A4X scripts run)
  TRX  google/tcpgpudmarxd (RxDM source: presets, a3vm configurator)
  TPI  google/nccl-plugin-gpudirecttcpx and nccl-plugin-gpudirect-tcpxo (installer container_entry.sh;
       its README and release log: the driver, CUDA and NCCL each release was qualified with)
  AIHT Google doc "AI Hypercomputer terminology" (sub-block, NVLink domain)
  GIBD gIB diagnostic image Dockerfiles (nccl-plugin-gib-diagnostic, copies in the code index)
  GKER Google doc for Ray on GKE with H200 (tuner file for H200)
  MGC  MG-Cafe TCPXO A3 Mega benchmark report
  UNOFF community "create-a3mega" Debian 12 image guide
  NVL72 NVIDIA GB200 NVL72 specification (NVLink 5 bandwidth per GPU)
  NVHV NVIDIA health-validation checks reference (NVLink links per GPU, fabric state)
  NVHW NVIDIA HGX H100/H200/B200 specifications (NVLink links per GPU, NVSwitch baseboard)
  NVIMEX NVIDIA IMEX guide (nodes_config.cfg, ports, channel devices)
  NVFM NVIDIA Fabric Manager user guide (NVSwitch systems need it running)
  VLLM vllm-project/vllm (pull 16992: NCCL_CUMEM_ENABLE=0 disables multi-node NVLink on GB200)
  GMS  Google's Model Garden deployment machine specs, as a public deploy-cost script lists them
       (G4 machine types and their GPU counts)
  CTX  cluster-toolkit's A4X Max example (examples/machine-learning/a4x-maxgpu-4g-metal at 11299f6:
       a4xmax-bm-slurm-blueprint.yaml, system_benchmarks/run-nccl-tests-via-ramble.sh)
  NVCC NVIDIA "CUDA GPU Compute Capability" table
  GIBRN Google "NCCL/gIB release notes" (ai-hypercomputer/docs/nccl/release-notes-x86 and release-notes-arm64):
       per release its date, installer images with their SHA256, packages, the CUDA it was built with, and a
       version-compatibility table per machine series (bundled and supported NCCL); read 2026-12, newest
       release v1.1.2 of 2026-05-14
  NVCUDA NVIDIA CUDA Toolkit release notes (the minimum Linux driver of each toolkit release)
  NCCLGH NVIDIA/nccl GitHub issues (2186: GB200 needs NCCL 2.25.1 or newer)
  RFH  Google docs "Report faulty host" and "Troubleshoot the faulty host API" (ai-hypercomputer): the
       machine types instances.reportHostAsFaulty accepts (MACHINE_TYPE_NOT_SUPPORTED names A4X Max, A4X,
       A4, A3 Ultra, A3 Mega and A3 High with 8 GPUs)

A family that is another plus a few differences is declared that way (_based_on),
so the facts they share are written once.

A value of ``None`` means "not known from any source"; code must treat it as
unknown, never as zero.

Where sources disagree, the comment beside the value says which one was
followed and why.
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


def _pair(rxdm, plugin, source, date, nccl=None, driver=None, cuda=None):
    """A plugin/RxDM pair and what its plugin release was qualified with: nccl (the NCCL release its
    installer brings), driver and cuda; None where unpublished."""
    return {"rxdm": rxdm, "plugin": plugin, "nccl": nccl, "driver": driver, "cuda": cuda, "source": source,
            "date": date}


_TCPX_RXDM = {
    # [SG receive-data-path-manager; CEA nccl-test-latest.yaml; CT gpu_direct.tf]
    "image": _REGISTRY + "/gpudirect-tcpx/tcpgpudmarxd-dev",
    "version": "v2.0.15",
    # Qualified pairs, newest first; each RxDM pairs with one plugin version.
    # The default (version above) is the newest.
    "pairs": [
        _pair("v2.0.15", "v3.1.12", "CEA PR 618 (GKE manifests and release notes)", "2026-06-25"),
        # NCCL 2.19.3: CEA README "qualified and supported"; a v3.1.9-2.19.4 tag is unsourced
        _pair("v2.0.12", "v3.1.9", "CT gpu_direct.tf; CEA README, as pinned for GKE in CEA PR 517", "2025-08-22",
              nccl="2.19.3"),
    ],
    "bad_pairs": [],
    "entrypoint": "/tcpgpudmarxd/build/app/tcpgpudmarxd",
    "uds_path": "/run/tcpx",
    "privileged": True,
    "network_host": True,
    "cap_add": ["NET_ADMIN"],
    "ulimits": ["memlock=-1"],
    # host path -> container path [SG]
    "volumes": {
        "/run/tcpx": "/run/tcpx",
    },
    # Per OS flavour: the manual preset reads its topology file inside the container [SG]
    "flavour_volumes": {
        "ubuntu": {"/opt/tcpdirect_benchmark": "/opt/tcpdirect_benchmark"},
        "cos": {},
    },
    "devices": [],
    # Where RxDM looks for the driver libraries in its container [SG]. SG mounts
    # /var/lib/nvidia/lib64 (COS's driver directory) there on every image; Ubuntu
    # images have no such directory (docker creates it empty) and the libraries
    # come from nvidia-container-toolkit with --gpus all [CT a3high/a3mega
    # blueprints install the toolkit, nothing creates /var/lib/nvidia]. Followed:
    # mount a host directory only where the node really has the libraries there.
    "driver_lib_mount": "/usr/local/nvidia/lib64",
    "env": {"LD_LIBRARY_PATH": "/usr/local/nvidia/lib64:/run/tcpx:/usr/lib/lib32:/usr/lib/x86_64-linux-gnu/"},
    # Ubuntu: manual preset with a topology file that names the node's interfaces
    # [SG; CT a3high blueprint]. The a3vm preset hard-codes eth1..eth4 [TRX
    # a3vm_gpu_rxq_configurator.cc], so it only fits COS and GKE [SP, DS, CEA].
    "args": {
        "ubuntu": ["--gpu_nic_preset", "manual",
                   "--gpu_nic_topology", "/opt/tcpdirect_benchmark/gpu_rxq_configuration.textproto",
                   "--gpu_shmem_type", "fd", "--uds_path", "/run/tcpx"],
        "cos": ["--gpu_nic_preset", "a3vm", "--gpu_shmem_type", "fd", "--uds_path", "/run/tcpx",
                "--setup_param", "--verbose 128 2 0"],
    },
    # The topology file the manual preset reads, written from the node's own PCI
    # layout: each GPU NIC serves the GPUs beside it, the first on RX queues
    # 8-11, the second on 12-15 [CT a3high-slurm-blueprint.yaml; TRX a3vm preset]
    "topology": {
        "path": "/opt/tcpdirect_benchmark/gpu_rxq_configuration.textproto",
        "gpus_per_nic": 2,
        "queue_ids": [[8, 9, 10, 11], [12, 13, 14, 15]],
        "rss_set_size": 8,
        "tcpd_queue_size": 8,
        "max_rx_rules": 100000,
    },
    # Without nvidia-container-toolkit (COS) `--gpus` cannot work: devices are
    # passed one by one [SP, DS]. The role decides from what the node has; this
    # is the choice when it is not told.
    "gpus_flag": {"ubuntu": True, "cos": False},
    # devices passed one by one where --gpus is not used (COS) [SP, DS]
    "gpu_devices": ["/dev/nvidia%d" % i for i in range(8)] + ["/dev/nvidia-uvm", "/dev/nvidiactl"],
    # TCPX RxDM prints no readiness line; SG just sleeps 10 s after start.
    "ready_line": UNKNOWN,
    "ready_sleep_s": 10,
    "health_check_file": UNKNOWN,
    "log_file": UNKNOWN,
    # RxDM holds GPU memory, so nvidia-smi lists it as a compute process on
    # every GPU (about 4 GB each on A3 High [SG issue 242]): the node's own
    # daemon, not a job. The entrypoint's program name [SG].
    "gpu_processes": ["tcpgpudmarxd"],
    # no source says what TCPX's RxDM sets on the host while it runs
    "host_tuning": UNKNOWN,
}

_TCPXO_RXDM = {
    # [SG receive-data-path-manager-mega v1.0.23; CEA README release notes]
    "image": _REGISTRY + "/gpudirect-tcpxo/tcpgpudmarxd-dev",
    "version": "v1.0.23",
    # Qualified pairs, newest first (dates: the release the source names).
    # v1.0.22/v1.0.16 is the April 2026 release [CEA PR 616, folded into the
    # release PR that followed it]; the rest as the sources pin them.
    "pairs": [
        # qualified with NCCL 2.28.7-1, driver 595.71.05 and CUDA 13.2 [TPI README and release log]
        _pair("v1.0.23", "v1.0.17", "CEA PR 626; SG receive-data-path-manager-mega; TPI README", "2026-07",
              nccl="2.28.7", driver="595.71.05", cuda="13.2"),
        # driver 580.65.06 and CUDA 12.8 [TPI release log]; its NCCL is not published
        _pair("v1.0.22", "v1.0.16", "CEA PR 616 (April 30, 2026 release); TPI release log", "2026-04-30",
              driver="580.65.06", cuda="12.8"),
        # CEA README lists NCCL per installer up to v1.0.15; later ones are not published
        _pair("v1.0.21", "v1.0.15", "CEA README (January 2026 release)", "2026-01", nccl="2.28.7"),
        _pair("v1.0.20", "v1.0.14", "CT gpu_direct.tf", "2025"),
    ],
    # Training segfaulted with this pair when the installer ran without
    # --install-nccl [SG PR 235]; older than every qualified pair.
    "bad_pairs": [
        _pair("v1.0.13", "v1.0.7", "SG PR 235: segmentation faults in training", "2024-12-03"),
    ],
    "entrypoint": UNKNOWN,
    "uds_path": UNKNOWN,
    "privileged": True,
    "network_host": True,
    "cap_add": ["NET_ADMIN"],
    "ulimits": [],
    "volumes": {
        "/dev/dmabuf_import_helper": "/dev/dmabuf_import_helper",
    },
    "flavour_volumes": {"ubuntu": {}, "cos": {}},
    # as TCPX: SG mounts /var/lib/nvidia/lib64 here; only COS-style nodes have it
    "driver_lib_mount": "/usr/local/nvidia/lib64",
    "topology": UNKNOWN,
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
    # RxDM's GPU buffer manager holds GPU memory on every GPU, as TCPX's does:
    # not a job. No source names the process; glog names its log file after
    # the program (the log file above), and the unprefixed name is kept for
    # an image that drops the prefix. Unverified on A3 Mega hardware.
    "gpu_processes": ["mtest_fastrak_gpumem_manager", "fastrak_gpumem_manager"],
    # What the image's entrypoint sets on the host while RxDM runs, and restores when it exits (rp_filter 1,
    # coalescing 20/50): a crash leaves it half-set [TPI scripts/kernel_tuning.sh, cleanup_tuning.sh].
    # sysctls: host-wide; nic_sysctls: per fabric NIC ({iface}); coalesce: ethtool -C per fabric NIC.
    "host_tuning": {
        "sysctls": {"net.ipv4.conf.all.rp_filter": "0", "net.ipv4.tcp_rmem": "4096 540000 15728640",
                    "net.ipv4.tcp_wmem": "4096 262144 67108864", "net.ipv4.tcp_no_metrics_save": "1",
                    "net.ipv4.tcp_slow_start_after_idle": "0", "net.ipv4.tcp_max_syn_backlog": "4096"},
        "nic_sysctls": {"net.ipv4.conf.{iface}.rp_filter": "0"},
        "coalesce": {"rx-usecs": "0", "tx-usecs": "0"},
    },
}

_TCPX_PLUGIN = {
    "kind": "image",
    # [CEA PR 618: the qualified pair since 2026-06; v3.1.9 before it, CEA nccl-test-latest.yaml]
    "image": _REGISTRY + "/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev",
    "version": "v3.1.12",
    # `install --install-nccl` [CEA nccl-tcpx-installer.yaml; DS; SP]; SG runs plain
    # `install` and takes NCCL from its container. Followed CEA: the installer's
    # NCCL is the one the plugin is qualified with, and nccl-tests run on the host
    # need an NCCL at all.
    "install_args": ["install", "--install-nccl"],
    "install_volumes": {"/var/lib": "/var/lib"},
    "install_dir": "/var/lib/tcpx",
    "lib_dir": "/var/lib/tcpx/lib64",
    # install: libnccl-net.so; --install-nccl adds libnccl.so* (cp -P) [TPI container_entry.sh]
    "files": ["libnccl-net.so", "libnccl.so.2"],
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
    "env_profile_sourced": False,
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
        # [LOGS; NVM; CT Dockerfiles]; the plugin NCCL loads from lib64, first on
        # LD_LIBRARY_PATH [NVM; LOGS "Could not find: libnccl-net.so"]
        "files": ["lib64/libnccl-net.so", "scripts/set_nccl_env.sh", "scripts/run_nccl_tests.sh",
                  "scripts/show_gids.sh", "configs/guest_config.txtpb"],
        # Sourced for the base NCCL environment; Google changes it per release and the
        # guest config checker aborts jobs that disagree with it [NVM; LOGS]. NVM and
        # every script say scripts/set_nccl_env.sh, LOGS once says set_nccl_env.sh at
        # the top: followed NVM. Read on the node at run time, never copied here.
        "env_profile": "scripts/set_nccl_env.sh",
        "env_profile_sourced": True,
        # Ramble's gIB modifier sources it with NCCL_LIB_DIR set to the scripts directory [RMB]
        "env_profile_vars": {"NCCL_LIB_DIR": "{install_dir}/scripts"},
        "nccl_version": "2.27.5",  # the libnccl2 CT pins beside nccl-gib 1.1.0 [CT]
        "ld_so_conf": "/etc/ld.so.conf.d/000_nccl-gib.conf",  # [CT a4high-vm]
        # The package repositories nccl-gib comes from, by package manager: their
        # suite names in the apt source or yum repo file [NVM; CT a4high-vm uses
        # the Artifact Registry form ar+https://us-apt.pkg.dev/projects/gce-ai-infra]
        "package_repos": {"apt": "gpudirect-gib-apt", "dnf": "gpudirect-gib-rpm"},
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
    "NCCL_BUFFSIZE": "4194304",  # CT; SP uses 8388608: CT followed, it is Google's own test script
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

# gIB: the base environment is the installed set_nccl_env.sh's (plugin.env_profile),
# read on the node at run time. The table holds only what is added on top of it.
_GIB_ENV = {
    # set after sourcing the script [CHS deploy/slurm/nccl-gib.sh], so a fallback to
    # the IB or Socket transport fails loudly instead of running slowly
    "NCCL_NET": "gIB",
}
# gIB uses RDMA devices for data; sockets go over the gVNIC NICs [CT]
_GIB_ENV_IFACES = {"NCCL_SOCKET_IFNAME": "host"}

# Variables a plugin's guest config checker rejects [CEA README: "avoid NCCL_ALGO"]
_TCPXO_FORBIDDEN = ["NCCL_ALGO"]


# NVIDIA packages of Google's accelerator images that CT holds so the driver stays
# the image's (apt-mark accepts the patterns) [CT a3ultra/a4high blueprints,
# hold-nvidia-packages.yml]; the A4X blueprint adds nvidia-imex-*.
_NVIDIA_HELD = ["libnvidia-cfg1-*-server", "libnvidia-compute-*-server", "libnvidia-nscq-*",
                "nvidia-compute-utils-*-server", "nvidia-fabricmanager-*", "nvidia-utils-*-server"]
# Google guest agents CT holds on its A3 Mega image [CT slurm-a3mega-image.yaml]
_GUEST_HELD = ["google-compute-engine", "google-compute-engine-oslogin", "google-guest-agent",
               "google-osconfig-agent"]


# An HGX board: 8 GPUs of 18 NVLink links each through NVSwitches [NVHW], which need
# nvidia-fabricmanager running in the VM that owns them [NVFM]; CT's images hold its package [CT].
# nvlink_gpu_gbps: a GPU's NVLink bandwidth as NVIDIA states it, both directions of all its links together:
# 900 GB/s for H100 and H200 (NVLink 4) [NVHW]. nvlink_floor.py divides it into the per-link floor.
_HGX_NVLINK = {"nvlinks": 18, "fabric_manager": True, "fabric": False, "nvlink_gpu_gbps": 900.0}


def _floor_of(version, source, date):
    """One minimum version of the family table's floors: the version, where it is published, and when (the
    source's own date, or the month it was read where it carries none)."""
    return {"version": version, "source": source, "date": date}


# What a family's nodes must run at least, each with its source; None where no source publishes one.
# driver, cuda, nccl: refused below; dcgm: the DCGM release the family is validated with (named when older).
# CHS's Slurm cluster validation runs DCGM 4.3.1 (nvidia+dcgm+4.3.1-1-ubuntu22.04) on every A3/A4 type;
# DCGM 4.3 is also the first with `dcgmi mndiag` for a multi-node NVLink domain.
_DCGM = _floor_of("4.3.1", "CHS deploy/slurm/cluster-validation.sh", "2026-12")
_TCP_FLOORS = {
    # TCPX/TCPXO: what each plugin release was qualified with is in its pair (rxdm.pairs); no family-wide
    # NCCL, driver or CUDA minimum is published
    "nccl": UNKNOWN, "driver": UNKNOWN, "cuda": UNKNOWN, "dcgm": _DCGM,
}
_GIB_FLOORS = {
    # GIBRN's version-compatibility table (bundled and supported NCCL per machine series) could not be read
    # whole: its values are not published here, so no NCCL floor for H200/B200
    "nccl": UNKNOWN,
    # CUDA 12.8 or newer for nccl-tests on A3 Ultra, A4 and A4X [NVM]
    "cuda": _floor_of("12.8", "NVM", "2026-12"),
    # the driver CUDA 12.8 GA needs (>= 570.26) [NVCUDA]; GIBRN names no driver
    "driver": _floor_of("570.26", "NVCUDA CUDA 12.8 GA", "2025-01"),
    "dcgm": _DCGM,
}


def _gib_release(image, digest):
    """The newest gIB release in Google's release notes [GIBRN]: its installer image and digest. Built with
    CUDA 13.0 on Ubuntu 22.04; packages nccl-gib and nccl-gib-plugins 1.1.2. The notes name no minimum
    driver; their bundled and supported NCCL could not be read (None)."""
    return {"version": "v1.1.2", "image": image, "digest": digest, "date": "2026-05-14",
            "built_with": "Ubuntu 22.04 + CUDA 13.0", "packages": {"nccl-gib": "1.1.2", "nccl-gib-plugins": "1.1.2"},
            "bundled_nccl": UNKNOWN, "supported_nccl": UNKNOWN, "source": "GIBRN"}


_GIB_RELEASE_X86 = _gib_release(_REGISTRY + "/gpudirect-gib/nccl-plugin-gib:v1.1.2",
                                "sha256:b71627dcf88862cd0e64434dfd0224441960db58f2022f94b5f56123659c207e")
_GIB_RELEASE_ARM64 = _gib_release(_REGISTRY + "/gpudirect-gib/nccl-plugin-gib-arm64:v1.1.2",
                                  "sha256:6b7950cac6e6833661d4206920f5633b6e361b18bfd5315b63f9bf4a4b84a80e")


def _floor(gbps, source):
    """cluster-health-scanner's pass bar: the mean of nccl-tests' "Avg bus bandwidth"
    over an all_gather sweep of -b 2G -e 8G -f 2, so it holds only for that window
    [CHS nccl_startup.py, nccl_healthcheck/*.yaml]."""
    return {"collective": "all_gather", "gbps": gbps, "minbytes": 2 * 2 ** 30, "maxbytes": 8 * 2 ** 30,
            "source": source}


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
        # smi_name: what nvidia-smi's product name holds [NVHW]
        "gpu": dict(_HGX_NVLINK, model="nvidia-h100-80gb", count=8, cuda_arch="90", smi_name="H100 80GB HBM3"),
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
        "avg_busbw_floor": _floor(60.0, "CHS config.py a3-highgpu"),
        "floors": _TCP_FLOORS,
        "gib_release": UNKNOWN,
        # nccl-tests defaults [CT a3-highgpu-8g Slurm scripts]
        "nccl_tests": {"collectives": ["all_gather", "all_reduce"], "minbytes": "1G", "maxbytes": "8G",
                       "stepfactor": 2, "warmup_iters": 5, "iters": 40},
        "faulty_host_report": True,      # instances.reportHostAsFaulty accepts it [RFH]
        "source": "CT a3high blueprints; GNB; SG; CEA",
    },
    "a3-mega": {
        "machine_type": "a3-megagpu-8g",
        "transport": "tcpxo",
        "arch": "x86_64",
        # the same GPU as A3 High [NVHW]
        "gpu": dict(_HGX_NVLINK, model="nvidia-h100-mega-80gb", count=8, cuda_arch="90",
                    smi_name="H100 80GB HBM3"),
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
            # CT holds the accelerator image's NVIDIA server packages (fabric manager
            # included) and, on A3 Mega, the guest agents [CT]
            "held_packages": _NVIDIA_HELD + _GUEST_HELD,
        },
        "baselines": [
            {"collective": "all_gather", "bytes": 8 * 2 ** 30, "busbw_gbps": 188.0, "source": "DS gcp.md; MGC"},
        ],
        # CHS's code default is 120; its deployed a3plus chart sets 150: followed the chart, what CHS runs
        "avg_busbw_floor": _floor(150.0, "CHS a3plus.yaml"),
        "floors": _TCP_FLOORS,
        "gib_release": UNKNOWN,
        # [CT a3-megagpu-8g Slurm scripts]
        "nccl_tests": {"collectives": ["all_gather"], "minbytes": "8M", "maxbytes": "8G",
                       "stepfactor": 2, "warmup_iters": 5, "iters": 200},
        "faulty_host_report": True,      # [RFH]
        "source": "CT a3mega blueprints; SG; CEA; GNB",
    },
    "a3-ultra": {
        "machine_type": "a3-ultragpu-8g",
        "transport": "gib",
        "arch": "x86_64",
        "gpu": dict(_HGX_NVLINK, model="nvidia-h200-141gb", count=8, cuda_arch="90", smi_name="H200"),  # [NVHW]
        # 2 gVNIC + 8 CX-7 MRDMA of 400 Gbps [GNB]; names [CT a3-ultragpu run-nccl-tests.sh; LOGS; CEA]
        "nics": _nics(["eth%d" % i for i in range(10)],
                      ["enp0s19", "enp192s20"] + ["gpu%drdma0" % i for i in range(8)],
                      ["GVNIC"] * 2 + ["MRDMA"] * 8, list(range(2, 10)), [0, 1], 400),
        "rdma_devices": ["mlx5_%d" % i for i in range(8)],
        "vpc_mtu": 8896,                 # all VPCs [CT]; RoCE VPC [RNP]
        "max_vm_gbps": 3600,             # [GNB]
        "rxdm": UNKNOWN,                 # no RxDM on RDMA families [NVM]
        "plugin": _gib_plugin(_REGISTRY + "/gpudirect-gib/nccl-plugin-gib", "v1.1.1"),
        # H200 takes the a3u tuner config [GKER; CT a3-ultragpu nemo Dockerfile]
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
            "held_packages": _NVIDIA_HELD,  # [CT]; nccl-gib and libnccl2 are held by nccl_plugin
            "gids_per_nic": 4,            # show_gids.sh, idx 2/3 carry the IPv4 [LOGS]
        },
        "baselines": [
            {"collective": "all_gather", "bytes": 8 * 2 ** 30, "busbw_gbps": 325.0, "source": "SP README"},
        ],
        "avg_busbw_floor": _floor(250.0, "CHS a3ultra.yaml"),
        "floors": _GIB_FLOORS,
        "gib_release": _GIB_RELEASE_X86,
        # -b 256M [CT a3-ultragpu nccl-tests; CHS nccl-gib.sh]; iterations: CT's gIB
        # benchmark scripts run 100 [CT via RMB], CHS 300 per health check; followed
        # CT, a validation run rather than a repeated health probe
        "nccl_tests": {"collectives": ["all_gather"], "minbytes": "256M", "maxbytes": "8G",
                       "stepfactor": 2, "warmup_iters": 5, "iters": 100},
        "faulty_host_report": True,      # [RFH]
        "source": "CT a3ultra blueprints; GNB; RNP; NVM",
    },
    "a4x": {
        "machine_type": "a4x-highgpu-4g",
        "transport": "gib",
        "arch": "aarch64",
        # 18 NVLink 5 links a GPU [NVHV]; the NVSwitches sit in the rack's switch trays, managed
        # outside the VM, so the VM runs no fabric manager: each GPU's fabric state says whether it
        # joined its NVLink domain [NVHV], and IMEX shares memory across the domain's VMs [NVIMEX]
        # NVLink 5: 1.8 TB/s a GPU, both directions [NVL72]
        "gpu": {"model": "nvidia-gb200", "count": 4, "cuda_arch": "100", "smi_name": "GB200",
                "nvlinks": 18, "fabric_manager": False, "fabric": True, "nvlink_gpu_gbps": 1800.0},
        # One IMEX domain per NVLink domain: the VMs of one sub-block [AIHT; NVIMEX]; the ports are
        # config.cfg's defaults (SERVER_PORT, IMEX_CMD_PORT) [NVIMEX]; nodes_config.cfg lists the
        # domain's addresses one a line, as slurm-gcp's IMEX prolog writes it [SG]
        "imex": {"server_port": 50000, "command_port": 50005, "channels": 1, "unit": "nvidia-imex",
                 "config": "/etc/nvidia-imex/config.cfg", "nodes_config": "/etc/nvidia-imex/nodes_config.cfg",
                 "channel_dir": "/dev/nvidia-caps-imex-channels"},
        # 2 gVNIC + 4 CX-7 [GNB]; GKE pod names [CEA]; host names on Google's arm64
        # accelerator image: NCCL_SOCKET_IFNAME=enp0s1,enp192s1, RDMA gpu0rdma0..gpu3rdma0
        # [CT a4x-highgpu-4g run-nccl-tests-via-ramble.sh]
        "nics": _nics(["eth%d" % i for i in range(6)],
                      ["enp0s1", "enp192s1"] + ["gpu%drdma0" % i for i in range(4)],
                      ["GVNIC"] * 2 + ["MRDMA"] * 4, [2, 3, 4, 5], [0, 1], 400),
        "rdma_devices": ["mlx5_%d" % i for i in range(4)],
        "vpc_mtu": 8896,
        "max_vm_gbps": 2000,             # [GNB]
        "rxdm": UNKNOWN,
        "plugin": _gib_plugin(_REGISTRY + "/gpudirect-gib/nccl-plugin-gib-arm64", "v1.1.0"),
        # no A4X tuner file name is published: the script's choice stands
        "nccl_env": dict(_GIB_ENV),
        "nccl_env_ifaces": _GIB_ENV_IFACES,
        "nccl_env_bindings": {},
        "nccl_env_forbidden": [],
        # values NCCL accepts that break the family without an error
        "nccl_env_bad": {
            "NCCL_CUMEM_ENABLE": {"value": "0", "source": "VLLM PR 16992",
                                  "why": "turns off CUDA's cuMem allocations and with them multi-node NVLink: "
                                         "NCCL runs between the VMs of an NVLink domain over the network "
                                         "without saying so"},
        },
        "host": {
            "kernel_modules": [],
            "udev_rules": [],
            "devices": [],
            "sysctl": {"net.core.optmem_max": "131072"},
            "wait_online_timeout_s": 180,
            "held_packages": _NVIDIA_HELD + ["nvidia-imex-*"],  # [CT a4x blueprint]
            "gids_per_nic": 4,
        },
        # An A4X sub-block is one NVLink domain of 18 VMs (72 GPUs) [AIHT]. Two
        # VMs in one domain talk over NVLink (MNNVL);
        # two in different domains over the CX-7 NICs, a far lower bar.
        # In-domain: measured with gpu_topology 1x72, bounded by NVLink [NA4X].
        "baselines": [
            {"collective": "all_gather", "bytes": 8 * 2 ** 30, "busbw_gbps": 454.0, "source": "NA4X",
             "scope": "nvlink_domain"},
        ],
        "nvlink_domain_gbps": 900.0,     # NVLink 5, 1.8 TB/s per GPU both ways [NVL72]
        # Across domains no busbw figure is published; CHS's A4X bar runs with
        # NCCL_MNNVL_ENABLE=0, i.e. over the network [CHS a4x.yaml]
        "avg_busbw_floor": _floor(160.0, "CHS a4x.yaml (NCCL_MNNVL_ENABLE=0)"),
        # GB200 needs NCCL 2.25.1 or newer: older ones crashed at scale with NVLink paths down [NCCLGH 2186]
        "floors": dict(_GIB_FLOORS, nccl=_floor_of("2.25.1", "NCCLGH 2186", "2026-12")),
        "gib_release": _GIB_RELEASE_ARM64,
        "nccl_tests": {"collectives": ["all_gather"], "minbytes": "256M", "maxbytes": "8G",
                       "stepfactor": 2, "warmup_iters": 5, "iters": 100},  # [CT via RMB]
        "faulty_host_report": True,      # [RFH]
        "source": "CT a4x blueprints; GNB; NA4X",
    },
}


def _based_on(base, differences):
    """A family declared as another plus its differences.

    Facts the differences do not name are the base's own objects (referenced, not
    copied); a mapping in differences is merged into the base's mapping key by key,
    any other value (lists included) replaces the base's."""
    out = dict(base)
    for key, value in differences.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            value = _based_on(base[key], value)
        out[key] = value
    return out


# DS and SP treat A3 Edge exactly as A3 High (NICs, MTU, RxDM, plugin, NCCL settings,
# host set-up); guest names unconfirmed
FAMILIES["a3-edge"] = _based_on(FAMILIES["a3-high"], {
    "machine_type": "a3-edgegpu-8g",
    "max_vm_gbps": 800,              # GNB versions say 600 or 800
    "baselines": [],                 # no published A3 Edge figure
    "avg_busbw_floor": UNKNOWN,
    "faulty_host_report": False,     # not among the machine types the method accepts [RFH]
    "source": "DS, SP (treated as A3 High); GNB",
})

# A4 is A3 Ultra with B200 GPUs: the same NIC layout [GNB], MTU, plugin and host set-up
FAMILIES["a4"] = _based_on(FAMILIES["a3-ultra"], {
    "machine_type": "a4-highgpu-8g",
    # NVLink 5: 1.8 TB/s a GPU over its 18 links, both directions [NVHW]
    "gpu": {"model": "nvidia-b200", "cuda_arch": "100", "smi_name": "B200", "nvlink_gpu_gbps": 1800.0},
    # B200 [GIBD; CT a4high-vm.yaml]; NVLink 5, still 18 links on an HGX B200 board [NVHW]
    "nccl_env": {"NCCL_TUNER_CONFIG_PATH": "{install_dir}/configs/tuner_config_a4.txtpb"},
    "baselines": [
        {"collective": "all_gather", "bytes": 8 * 2 ** 30, "busbw_gbps": 375.0, "source": "NVM"},
        {"collective": "all_reduce", "bytes": 8 * 2 ** 30, "busbw_gbps": 683.0, "source": "DS gcp.md"},
    ],
    "avg_busbw_floor": _floor(250.0, "CHS a4.yaml"),
    # [CT via RMB]
    "nccl_tests": {"collectives": ["all_gather", "all_reduce"]},
    "source": "CT a4high blueprints; GNB; NVM; DS",
})

# A4X Max is A4X with GB300 GPUs on bare metal and another network shape [CTX; GNB]: two IDPF NICs on
# ordinary dual-stack VPCs at MTU 4096, and eight MRDMA NICs, IPv6-only, all on the one subnet of a RoCE VPC
# (network profile <zone>-vpc-roce-metal) at 8896. The host needs DOCA-OFED with openibd, and the privileged
# asapd-lite service [CTX].
FAMILIES["a4x-max"] = _based_on(FAMILIES["a4x"], {
    "machine_type": "a4x-maxgpu-4g-metal",
    # compute capability 10.3 [NVCC]; no GB300 NVLink figure in the sources: GB200's (NVLink 5) stands for
    # the NVLink-domain bound (nvlink_domain_gbps), but no per-link floor is set from it
    "gpu": {"model": "nvidia-gb300", "cuda_arch": "103", "smi_name": "GB300", "nvlink_gpu_gbps": UNKNOWN},
    # 4 CX-8 SuperNICs: 3,200 Gbps in an 8-way rail-aligned topology, so 400 Gbps a rail [GNB]. Host names
    # eth0, eth1 (NCCL_SOCKET_IFNAME), RDMA netdevs in the order the CT script lists them (UCX_NET_DEVICES)
    # [CTX]; bare metal runs Ubuntu only, so the COS names are the same
    "nics": dict(_nics(["eth0", "eth1"] + ["gpu%drdma%d" % (g, r) for r in range(2) for g in range(4)],
                       ["eth0", "eth1"] + ["gpu%drdma%d" % (g, r) for r in range(2) for g in range(4)],
                       ["IDPF"] * 2 + ["MRDMA"] * 8, list(range(2, 10)), [0, 1], 400),
                 # the RDMA NICs: stack_type IPV6_ONLY, one subnet for all eight [CTX]
                 gpu_stack_type="IPV6_ONLY", gpu_shared_subnet=True),
    "rdma_devices": ["mlx5_%d" % i for i in range(8)],  # NCCL_IB_HCA [CTX]
    "vpc_mtu": 8896,                 # the RoCE VPC: gpu-rdma-vpc's default, the guest's MTUBytes [CTX]
    "host_vpc_mtu": 4096,            # the two IDPF VPCs [CTX]
    "max_vm_gbps": 3600,             # [GNB]
    "plugin": _gib_plugin(_REGISTRY + "/gpudirect-gib/nccl-gib-a4x-max-arm64", "v1.1.1"),  # [CTX]
    # the RoCE v2 GID of the NIC's IPv6 address [CTX ramble script]
    "nccl_env": {"NCCL_IB_GID_INDEX": "3"},
    "host": {
        # what CT's blueprint installs and the phases do not: the doca-ofed package with openibd enabled, and
        # asapd-lite enabled (a privileged container on the host network) [CTX]; DOCA-OFED is found by its
        # ofed_info command, which prints the DOCA-Host version (`ofed_info -s`)
        "prerequisites": {"commands": {"ofed_info": "DOCA-OFED (the doca-ofed package)"},
                          "units": ["openibd.service", "asapd-lite.service"], "source": "CTX"},
    },
    # no A4X Max figure is published: neither an NVLink-domain nor a network baseline, nor a floor
    "baselines": [],
    # no GB300 NCCL floor is published (A4X's is GB200's); its plugin image (nccl-gib-a4x-max-arm64) is not in
    # the gIB release notes, so it has no release entry
    "floors": dict(_GIB_FLOORS),
    "gib_release": UNKNOWN,
    "avg_busbw_floor": UNKNOWN,
    # the CT script runs ramble's defaults over these three [CTX]
    "nccl_tests": {"collectives": ["all_gather", "all_reduce", "reduce_scatter"]},
    "source": "CTX; GNB; NVCC",
})

MACHINE_TYPES = dict((f["machine_type"], name) for name, f in FAMILIES.items())

# GPU VMs the GPUDirect phases do not configure: G4 has no GPU NICs (NCCL within one VM only). The
# inventory names and groups them (gpu_class, group gpu_other) so that nobody wonders where they went, and
# the phases leave them out in one line.
OTHER_GPU_MACHINES = {
    # RTX PRO 6000; NCCL_P2P_LEVEL=PHB, SYS on g4-standard-384 [CT examples/ml-slurm-g4.yaml]; the four
    # shapes of 1, 2, 4 and 8 GPUs [GMS]
    "g4": {"machine_types": ["g4-standard-48", "g4-standard-96", "g4-standard-192", "g4-standard-384"],
           "gpu_model": "nvidia-rtx-pro-6000",
           "why": "RTX PRO 6000 VMs run NCCL within one VM only (no GPU NICs; NCCL_P2P_LEVEL PHB, SYS on "
                  "g4-standard-384)", "source": "CT examples/ml-slurm-g4.yaml"},
}


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
    out["plugin"]["files_dir"] = plugin_files_dir(name)
    return out


def plugin_files_dir(name):
    """The directory the plugin's ``files`` are relative to: gIB lists them under its
    install directory (lib64/, scripts/), TCPX/TCPXO name bare libraries in lib_dir."""
    plugin = FAMILIES[name]["plugin"]
    return plugin["install_dir"] if FAMILIES[name]["transport"] == "gib" else plugin["lib_dir"]


def machine_type_name(machine_type):
    """'…/zones/z/machineTypes/a3-megagpu-8g' or 'a3-megagpu-8g' -> 'a3-megagpu-8g'."""
    return (machine_type or "").rstrip("/").rsplit("/", 1)[-1]


def family_for_machine_type(machine_type):
    """Family id for a machine type (name or URL), or None when it is not an A3/A4 type."""
    return MACHINE_TYPES.get(machine_type_name(machine_type))


def other_gpu_class(machine_type):
    """The OTHER_GPU_MACHINES class of a machine type (name or URL): a GPU VM the GPUDirect phases do not
    configure, or None."""
    name = machine_type_name(machine_type)
    return next((cls for cls, spec in sorted(OTHER_GPU_MACHINES.items()) if name in spec["machine_types"]), None)


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


def busbw_ceiling_gbps(name, collective="all_gather", scope="network"):
    """Upper bound for 2-node busbw, GB/s.

    Network-bound collectives cannot beat the sum of the GPU NICs' line rate.
    all_reduce with NVLS/tree algorithms moves half the bytes over the network
    per byte of busbw, so its ceiling is twice that.  Inside a multi-node NVLink
    domain (A4X) the bound is NVLink's instead.
    """
    fam = FAMILIES[name]
    if scope == "nvlink_domain":
        return fam.get("nvlink_domain_gbps") or 0.0
    nic_gbps = len(fam["nics"]["gpu_indexes"]) * fam["nics"]["gpu_nic_gbps"] / 8.0
    if collective == "all_reduce":
        nic_gbps *= 2
    return nic_gbps


# What a pair of nodes' traffic crosses: the network (the default, every family's
# 2-node figures) or one multi-node NVLink domain (A4X nodes of one sub-block).
SCOPES = ("network", "nvlink_domain")


def baseline(name, collective, scope="network"):
    """The published baseline entry for a collective over that scope, or None."""
    for entry in FAMILIES[name]["baselines"]:
        if entry["collective"] == collective and entry.get("scope", "network") == scope:
            return dict(entry)
    return None


def has_nvlink_domains(name):
    """Whether nodes of this family can share an NVLink domain (judged apart from the network): their GPUs
    join a multi-node NVLink fabric (A4X, A4X Max), whether or not a baseline for it is published."""
    return bool(FAMILIES[name]["gpu"].get("fabric"))


def nvlink_domain(name, topology):
    """The NVLink domain of a node from its gce_topology, or None when unknown or not applicable.

    An A4X (and A4X Max) sub-block is one NVLink domain, so the domain is (block, sub-block).
    """
    if not has_nvlink_domains(name):
        return None
    # normalized placement (module_utils/host/topology.py; this file stays importable on its own)
    topo = topology or {}
    if not topo.get("block") or not topo.get("subblock"):
        return None
    return "%s/%s" % (topo["block"], topo["subblock"])


def plugin_for_rxdm(name, rxdm_version):
    """The plugin version the table pairs with an RxDM version, or None if unknown."""
    rxdm = FAMILIES[name]["rxdm"]
    for pair in (rxdm or {}).get("pairs") or []:
        if pair["rxdm"] == rxdm_version:
            return pair["plugin"]
    return None


def rxdm_for_plugin(name, plugin_version):
    """The RxDM version the table pairs with a plugin version, or None if unknown."""
    rxdm = FAMILIES[name]["rxdm"]
    return next((p["rxdm"] for p in (rxdm or {}).get("pairs") or [] if p["plugin"] == plugin_version), None)


def _pair_words(plugin, rxdm):
    return "plugin %s / RxDM %s" % (plugin, rxdm) if rxdm else "plugin %s" % plugin


def choose_pair(name, asked_plugin, asked_rxdm, installed_plugin, installed_rxdm, change=False):
    """The NCCL plugin and RxDM versions a run puts on a node.

    asked_*: what the run asks for ("" where it asks nothing); installed_*: what the node has (None where it
    has nothing: no install record, no RxDM unit). The installed pair stays unless change is true: a
    collection release with a newer default, an AWX survey left empty or a repair line must not move a
    node, and so restart RxDM under its jobs. A half that is missing takes the table's partner of the half
    that is there. Returns {"plugin", "rxdm", "kept", "message", "wanted"}; kept is true where the pair on
    the node differs from wanted, the pair the run would otherwise have chosen (the asked versions, else the
    table's), and message says so in one line.
    """
    fam = FAMILIES[name]
    has_rxdm = bool(fam["rxdm"])
    want_plugin = asked_plugin or fam["plugin"]["version"]
    want_rxdm = (asked_rxdm or fam["rxdm"]["version"]) if has_rxdm else ""
    have_plugin = installed_plugin or None
    # a digest (rxdm_digest) names an image, not a version the table knows
    have_rxdm = installed_rxdm if has_rxdm and installed_rxdm and ":" not in installed_rxdm else None
    wanted = {"plugin": want_plugin, "rxdm": want_rxdm}
    if change or not (have_plugin or have_rxdm):
        return {"plugin": want_plugin, "rxdm": want_rxdm, "kept": False, "message": "", "wanted": wanted}
    plugin = have_plugin or plugin_for_rxdm(name, have_rxdm) or want_plugin
    rxdm = (have_rxdm or rxdm_for_plugin(name, have_plugin) or want_rxdm) if has_rxdm else ""
    kept = (plugin, rxdm) != (want_plugin, want_rxdm)
    message = ""
    if kept:
        asked = bool(asked_plugin or asked_rxdm)
        message = "kept the installed %s; %s %s; gpudirect.gcp.upgrade_plugin moves it%s" % (
            ("pair " if has_rxdm else "") + _pair_words(plugin, rxdm),
            "this run asked for" if asked else "the collection's default is", _pair_words(want_plugin, want_rxdm),
            " (or -e gpudirect_change_pair=true)" if asked else "")
    return {"plugin": plugin, "rxdm": rxdm, "kept": kept, "message": message, "wanted": wanted}


def plugin_nccl_version(name, plugin_version=None):
    """The NCCL release a plugin version brings (default: the table's plugin), None where unpublished.

    TCPX/TCPXO: per qualified pair, an unlisted plugin version has none; gIB: the pinned libnccl2.
    """
    qualified = plugin_qualification(name, plugin_version)
    return qualified["nccl"] if qualified else None


def plugin_qualification(name, plugin_version=None):
    """What a plugin release was qualified with (default: the table's plugin): {plugin, nccl, driver, cuda,
    source, date}, each None where unpublished; None for a TCPX/TCPXO release the table does not list.
    gIB: the pinned libnccl2 only."""
    fam = FAMILIES[name]
    if not fam["rxdm"]:
        return {"plugin": fam["plugin"]["version"], "nccl": fam["plugin"].get("nccl_version"), "driver": None,
                "cuda": None, "source": fam["plugin"].get("source"), "date": None}
    version = plugin_version or fam["plugin"]["version"]
    pair = next((p for p in fam["rxdm"]["pairs"] if p["plugin"] == version), None)
    if pair is None:
        return None
    return dict((key, pair[key]) for key in ("plugin", "nccl", "driver", "cuda", "source", "date"))


def newest_source_date():
    """The newest date among the qualified pairs of every family ('2026-07'): how current the table is."""
    dates = [p["date"] for fam in FAMILIES.values() for p in ((fam.get("rxdm") or {}).get("pairs") or [])
             if p.get("date")]
    return max(dates) if dates else None


def _pair_text(pair):
    return "RxDM %s with plugin %s (%s, %s)" % (pair["rxdm"], pair["plugin"], pair["source"], pair["date"])


def judge_versions(name, plugin_version, rxdm_version, strict=False):
    """Judge an NCCL plugin and RxDM version pair against the family table.

    Returns {"verdict": ..., "message": ...}, verdict one of
      qualified    the table lists the pair (message empty);
      unqualified  a pair the table does not know, usually a newer release:
                   accepted, the message says so (refused when strict);
      refused      a pair known to be bad, or two versions the table knows,
                   each qualified with another partner.
    Families without RxDM (gIB) have no pair to judge: qualified.
    """
    rxdm = FAMILIES[name]["rxdm"]
    if not rxdm:
        return {"verdict": "qualified", "message": ""}
    pairs = rxdm["pairs"]
    for pair in pairs:
        if (pair["rxdm"], pair["plugin"]) == (rxdm_version, plugin_version):
            return {"verdict": "qualified", "message": ""}
    for pair in rxdm.get("bad_pairs") or []:
        if (pair["rxdm"], pair["plugin"]) == (rxdm_version, plugin_version):
            return {"verdict": "refused", "message": "plugin %s with RxDM %s is a known bad pair on %s: %s"
                    % (plugin_version, rxdm_version, name, pair["source"])}
    rxdm_partner = plugin_for_rxdm(name, rxdm_version)
    plugin_partner = next((p["rxdm"] for p in pairs if p["plugin"] == plugin_version), None)
    if rxdm_partner and plugin_partner:
        return {"verdict": "refused",
                "message": "plugin %s does not pair with RxDM %s on %s: RxDM %s needs plugin %s, plugin %s needs "
                           "RxDM %s" % (plugin_version, rxdm_version, name, rxdm_version, rxdm_partner,
                                        plugin_version, plugin_partner)}
    known = "; ".join(_pair_text(p) for p in pairs)
    if strict:
        return {"verdict": "refused",
                "message": "plugin %s with RxDM %s is not a qualified pair in the %s version table, and strict "
                           "version checking is on (qualified: %s)" % (plugin_version, rxdm_version, name, known)}
    return {"verdict": "unqualified",
            "message": "plugin %s with RxDM %s is not in the %s version table: accepted unqualified, as a newer "
                       "release usually is; the newest qualified pair is %s"
                       % (plugin_version, rxdm_version, name, _pair_text(pairs[0]))}


def render_nccl_env(name, control_ifaces, gpu_ifaces, overrides=None, allow=None, plugin_dir=None, base=None):
    """Build the NCCL environment for a node from the table and its real interface names.

    control_ifaces: the node's host (non-GPU) interfaces, control NIC first.
    gpu_ifaces: the node's GPU data interfaces in GPU-NIC order.
    overrides: user values that win over the table.
    allow: forbidden or known-bad (nccl_env_bad) variables the user forces anyway.
    base: the plugin's own environment (gIB's set_nccl_env.sh as read on the node);
        the table's values, the interfaces and the overrides go on top of it.
    Returns (env dict, list of problems).
    """
    fam = FAMILIES[name]
    plugin = fam["plugin"]
    lib_dir = plugin_dir or plugin["lib_dir"]
    install_dir = plugin["install_dir"]
    env = dict((k, str(v)) for k, v in (base or {}).items())
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
    # Jobs log warnings only; INFO (and which subsystems) is the user's call, or
    # the nccl-tests plugin check's, which asks for INIT,NET,ENV for its own runs.
    env.setdefault("NCCL_DEBUG", "WARN")
    for key, value in (overrides or {}).items():
        env[key] = str(value)
    for key in fam["nccl_env_forbidden"]:
        if key in env and key not in (allow or []):
            problems.append("%s is rejected by the %s plugin's guest config checker; "
                            "force it with the allow list if you must" % (key, name))
    for key, bad in sorted((fam.get("nccl_env_bad") or {}).items()):
        if str(env.get(key)) == bad["value"] and key not in (allow or []):
            problems.append("%s=%s on %s %s [%s]; force it with the allow list if you must"
                            % (key, bad["value"], name, bad["why"], bad["source"]))
    return env, problems
