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
         names (wrong on Ubuntu/Debian hosts, which must override them);
  gIB    /var/lib/gib (the host's /usr/local/gib, `-v /usr/local/gib:/var/lib/gib`):
         lib64/libnccl-net.so, --install-nccl adds lib64/libnccl.so.2; scripts/
         set_nccl_env.sh, run_nccl_tests.sh, show_gids.sh; configs/guest_config.txtpb
         and the tuner configs.  set_nccl_env.sh has the shape of gIB's script (it
         computes a path from NCCL_LIB_DIR) with this stand-in release's values, and
         guest_config.txtpb enforces the same values, as gIB's checker does: a
         profile that copied another release's values aborts the stand-in nccl-tests.
Every library names the installer it came from: the plugin is built against that
installer's NCCL, and the stand-in nccl-tests refuse a plugin whose NCCL is not
the one loaded.  The file lists are kept equal to the family table's by tests/unit.
"""

import os
import sys

TRANSPORT = os.environ.get("GPUDIRECT_STANDIN_TRANSPORT", "tcpxo")
TARGETS = {"tcpx": "/var/lib/tcpx/lib64", "tcpxo": "/var/lib/tcpxo/lib64", "gib": "/var/lib/gib"}
MOUNTS = {"tcpx": "/var/lib", "tcpxo": "/var/lib", "gib": "/var/lib/gib"}
TARGET = TARGETS.get(TRANSPORT, "/nonexistent")
PLUGIN_LIBS = {
    "tcpx": ["libnccl-net.so"],
    "tcpxo": ["libnccl-net.so", "libnccl-net_internal.so", "libnccl-tcpx.so", "libnccl-tcpxo.so", "libnccl-tuner.so"],
    "gib": ["lib64/libnccl-net.so"],
}
NCCL_LIBS = ["libnccl.so.2"]
NCCL_LINKS = {"tcpx": {"libnccl.so": "libnccl.so.2"}, "tcpxo": {}, "gib": {}}
# This stand-in gIB release's environment: what its set_nccl_env.sh exports and
# its guest config enforces (a newer release than the one whose values a copy
# would carry: NCCL_P2P_NVL_CHUNKSIZE differs, as Google's log guide shows it can).
GIB_RELEASE = "1.1.1-standin"
GIB_ENV = [
    ("NCCL_NET", "gIB"),
    ("NCCL_CROSS_NIC", "0"),
    ("NCCL_NET_GDR_LEVEL", "PIX"),
    ("NCCL_P2P_NET_CHUNKSIZE", "131072"),
    ("NCCL_P2P_PCI_CHUNKSIZE", "131072"),
    ("NCCL_P2P_NVL_CHUNKSIZE", "262144"),
    ("NCCL_NVLS_CHUNKSIZE", "524288"),
    ("NCCL_IB_GID_INDEX", "3"),
    ("NCCL_IB_ADAPTIVE_ROUTING", "1"),
    ("NCCL_IB_QPS_PER_CONNECTION", "4"),
    ("NCCL_IB_TC", "52"),
    ("NCCL_IB_FIFO_TC", "84"),
]
GIB_SCRIPTS = ["run_nccl_tests.sh", "show_gids.sh"]
GIB_CONFIGS = ["tuner_config_a3u.txtpb", "tuner_config_a4.txtpb"]
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


def write_gib(libs):
    """gIB's scripts and configs: set_nccl_env.sh, and the guest config that enforces its values."""
    for sub in ("scripts", "configs"):
        os.makedirs(os.path.join(TARGET, sub), exist_ok=True)
    script = ["# STAND-IN set_nccl_env.sh (sandbox): the shape of gIB's script, this stand-in release's values.",
              "# gIB %s. Source it: NCCL_LIB_DIR=<gib>/scripts . <gib>/scripts/set_nccl_env.sh" % GIB_RELEASE,
              'GIB_STANDIN_ROOT="$(dirname "${NCCL_LIB_DIR:-/usr/local/gib/scripts}")"']
    script += ["export %s=%s" % kv for kv in GIB_ENV]
    script.append('export NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE="$GIB_STANDIN_ROOT/configs/guest_config.txtpb"')
    write(os.path.join(TARGET, "scripts", "set_nccl_env.sh"), "\n".join(script) + "\n")
    for name in GIB_SCRIPTS:
        write(os.path.join(TARGET, "scripts", name), "#!/bin/sh\necho 'STAND-IN %s (sandbox): does nothing'\n" % name)
        os.chmod(os.path.join(TARGET, "scripts", name), 0o755)
    config = ["# STAND-IN guest_config.txtpb (sandbox) of gIB %s: the values its checker enforces" % GIB_RELEASE]
    config += ['enforced { key: "%s" value: "%s" }' % kv for kv in GIB_ENV if kv[0] != "NCCL_NET"]
    write(os.path.join(TARGET, "configs", "guest_config.txtpb"), "\n".join(config) + "\n")
    for name in GIB_CONFIGS:
        write(os.path.join(TARGET, "configs", name), "# STAND-IN %s (sandbox placeholder)\n" % name)
    count = len(libs) + 1 + len(GIB_SCRIPTS) + 1 + len(GIB_CONFIGS)
    print("STAND-IN installer: wrote %d files to %s (gIB %s)" % (count, TARGET, GIB_RELEASE), flush=True)


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
    if not mounted(MOUNTS[TRANSPORT]):
        fail("%s is not mounted from the host; nothing would reach the host" % MOUNTS[TRANSPORT])
    os.makedirs(TARGET, exist_ok=True)
    with_nccl = "--install-nccl" in argv
    libdir = "lib64/" if TRANSPORT == "gib" else ""
    names = PLUGIN_LIBS[TRANSPORT] + ([libdir + n for n in NCCL_LIBS] if with_nccl else [])
    for name in names:
        path = os.path.join(TARGET, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write(path, "STAND-IN %s: placeholder from the sandbox installer, not a library; %s: %s\n"
              % (name, "is the" if os.path.basename(name) in NCCL_LIBS else "built against the", bundle()))
    for link, target in (NCCL_LINKS[TRANSPORT].items() if with_nccl else []):
        path = os.path.join(TARGET, link)
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(target, path)
    if TRANSPORT == "gib":
        write_gib(names)
        return
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
