"""STAND-IN for Google's TCPX and TCPXO NCCL plugin installer images, sandbox only.

Built twice (standin.yml variants): GPUDIRECT_STANDIN_TRANSPORT says which
installer it stands in for.  `install [--install-nccl]` writes, into the
host's /var/lib (mounted with `-v /var/lib:/var/lib`), the files the real
installer writes - each labelled STAND-IN, none a real library:
  TCPX   /var/lib/tcpx/lib64: libnccl-net.so; --install-nccl adds the NCCL core,
         libnccl.so.2 and its libnccl.so link (container_entry.sh copies libnccl.so*);
  TCPXO  /var/lib/tcpxo/lib64: the plugin, shim, tuner, their configs [UNOFF; CEA
         README], --install-nccl adds libnccl.so.2, and nccl-env-profile.sh with
         the values the real v1.0.15 profile documents, including its eth0..eth8
         names (wrong on Ubuntu/Debian hosts, which must override them).
Every library names the installer it came from: the plugin is built against that
installer's NCCL, and the stand-in nccl-tests refuse a plugin whose NCCL is not
the one loaded.  The file lists are kept equal to the family table's by tests/unit.
"""

import os
import sys

TRANSPORT = os.environ.get("GPUDIRECT_STANDIN_TRANSPORT", "tcpxo")
TARGETS = {"tcpx": "/var/lib/tcpx/lib64", "tcpxo": "/var/lib/tcpxo/lib64"}
TARGET = TARGETS.get(TRANSPORT, "/nonexistent")
PLUGIN_LIBS = {
    "tcpx": ["libnccl-net.so"],
    "tcpxo": ["libnccl-net.so", "libnccl-net_internal.so", "libnccl-tcpx.so", "libnccl-tcpxo.so", "libnccl-tuner.so"],
}
NCCL_LIBS = ["libnccl.so.2"]
NCCL_LINKS = {"tcpx": {"libnccl.so": "libnccl.so.2"}, "tcpxo": {}}
CONFIGS = ["a3plus_tuner_config.textproto", "a3plus_guest_config.textproto",
           "a3plus_tuner_config_simple.textproto", "a3plus_guest_config_simple.textproto"]
# nccl-env-profile.sh as documented for v1.0.15 [CEA README]
PROFILE = [
    ("NCCL_FASTRAK_CTRL_DEV", "eth0"),
    ("NCCL_FASTRAK_IFNAME", ",".join("eth%d" % i for i in range(1, 9))),
    ("NCCL_SOCKET_IFNAME", "eth0"),
    ("NCCL_CROSS_NIC", "0"),
    ("NCCL_PROTO", "Simple,LL128"),
    ("NCCL_MIN_NCHANNELS", "4"),
    ("NCCL_TUNER_PLUGIN", "libnccl-tuner.so"),
    ("NCCL_TUNER_CONFIG_PATH", "${NCCL_LIB_DIR}/a3plus_tuner_config.textproto"),
    ("NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE", "${NCCL_LIB_DIR}/a3plus_guest_config.textproto"),
    ("CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7"),
    ("NCCL_NVLSTREE_MAX_CHUNKSIZE", "131072"),
    ("NCCL_P2P_NET_CHUNKSIZE", "524288"),
    ("NCCL_P2P_PCI_CHUNKSIZE", "524288"),
    ("NCCL_P2P_NVL_CHUNKSIZE", "1048576"),
    ("NCCL_FASTRAK_NUM_FLOWS", "2"),
    ("NCCL_FASTRAK_USE_SNAP", "1"),
    ("NCCL_FASTRAK_PLUGIN_ACCEPT_TIMEOUT_MS", "600000"),
    ("NCCL_FASTRAK_ENABLE_CONTROL_CHANNEL", "0"),
    ("NCCL_BUFFSIZE", "8388608"),
    ("NCCL_NET_GDR_LEVEL", "PIX"),
    ("NCCL_FASTRAK_ENABLE_HOTPATH_LOGGING", "0"),
    ("NCCL_FASTRAK_USE_LLCM", "1"),
    ("NCCL_NVLS_ENABLE", "1"),
    ("NCCL_DEBUG", "WARN"),
    ("NCCL_DEBUG_SUBSYS", "INIT,NET,ENV,COLL,GRAPH"),
]


def fail(msg):
    print("STAND-IN installer: ERROR: %s" % msg, file=sys.stderr, flush=True)
    sys.exit(1)


def mounted(path):
    with open("/proc/self/mountinfo") as fh:
        return any(line.split()[4] == path for line in fh)


def write(path, text):
    with open(path, "w") as fh:
        fh.write(text)


def bundle():
    """What every library this installer writes says of the NCCL it belongs to."""
    return "NCCL from the %s installer" % TRANSPORT.upper()


def main(argv):
    print("STAND-IN %s NCCL plugin installer - sandbox only, writes labelled placeholder files"
          % TRANSPORT.upper(), flush=True)
    if TRANSPORT not in TARGETS:
        fail("GPUDIRECT_STANDIN_TRANSPORT=%s: the stand-in was built for no known installer" % TRANSPORT)
    if not argv or argv[0] != "install":
        fail("usage: install [--install-nccl]; got %s" % (" ".join(argv) or "nothing"))
    unknown = [a for a in argv[1:] if a != "--install-nccl"]
    if unknown:
        fail("unknown option %s" % " ".join(unknown))
    if not mounted("/var/lib"):
        fail("/var/lib is not mounted from the host (-v /var/lib:/var/lib); nothing would reach the host")
    os.makedirs(TARGET, exist_ok=True)
    with_nccl = "--install-nccl" in argv
    names = PLUGIN_LIBS[TRANSPORT] + (NCCL_LIBS if with_nccl else [])
    for name in names:
        write(os.path.join(TARGET, name), "STAND-IN %s: placeholder from the sandbox installer, not a library; "
              "%s: %s\n" % (name, "is the" if name in NCCL_LIBS else "built against the", bundle()))
    for link, target in (NCCL_LINKS[TRANSPORT].items() if with_nccl else []):
        path = os.path.join(TARGET, link)
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(target, path)
    if TRANSPORT == "tcpx":
        print("STAND-IN installer: wrote %d files to %s" % (len(names), TARGET), flush=True)
        return
    for name in CONFIGS:
        write(os.path.join(TARGET, name), "# STAND-IN %s (sandbox placeholder)\n" % name)
    lines = ["# STAND-IN nccl-env-profile.sh written by the sandbox installer; values as Google documents them.",
             "# Source it as: NCCL_LIB_DIR=%s source %s/nccl-env-profile.sh" % (TARGET, TARGET)]
    lines += ["export %s=%s" % kv for kv in PROFILE]
    write(os.path.join(TARGET, "nccl-env-profile.sh"), "\n".join(lines) + "\n")
    for alias in ("nccl-env-profile-ll128.sh", "nccl-env-profile-nvlstree.sh"):
        link = os.path.join(TARGET, alias)
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink("nccl-env-profile.sh", link)
    print("STAND-IN installer: wrote %d files to %s" % (len(names) + len(CONFIGS) + 1, TARGET), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
