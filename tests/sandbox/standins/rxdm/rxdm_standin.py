"""STAND-IN for Google's Receive Datapath Manager (tcpgpudmarxd), sandbox only.

It cannot move GPU memory; it checks what the real RxDM needs from the way its
container is started and fails the way a misconfigured RxDM fails:
  - NET_ADMIN and privileged (it programs NIC flow steering and maps devices),
  - GPUs (`--gpus all`, which the sandbox's docker command passes as GPUDIRECT_STANDIN_GPUS, or /dev/nvidia*),
  - the host network (it must see the GPU NICs),
  - the driver's libcuda.so.1 where the dynamic loader looks: LD_LIBRARY_PATH, the
    /usr/local/nvidia/lib64 of NVIDIA's base images (a host mount) or the system
    library directory (where the container toolkit injects it with --gpus all),
  - TCPXO: /dev/dmabuf_import_helper present, --num_hops given,
  - TCPX: unlimited locked memory, --gpu_nic_preset given (manual needs a readable
    --gpu_nic_topology file whose every ifname is a NIC it can see), --uds_path a
    writable directory.
Then, TCPXO, it tunes the host as the real image's entrypoint does (kernel_tuning.sh: rp_filter 0 and
larger TCP buffers; the stand-in image has no ethtool, so interrupt coalescing is left alone), prints the
real readiness line and writes HEALTH_CHECK_LOG_FILE when set; on SIGTERM it restores rp_filter 1 as
cleanup_tuning.sh does. Killed with SIGKILL it restores nothing, as a crashed RxDM leaves the host.
"""

import os
import resource
import signal
import sys
import time

READY = "Buffer manager initialization complete"
TCPXO_FLAGS = {"num_hops", "num_nics", "uid", "alsologtostderr", "v", "setup_param"}
TCPX_FLAGS = {"gpu_nic_preset", "gpu_nic_topology", "gpu_shmem_type", "uds_path", "setup_param", "v"}
BOOL_FLAGS = {"alsologtostderr"}
# what the TCPXO image's entrypoint sets while RxDM runs, host-wide and on every fabric NIC, and what its
# cleanup puts back (the family table's rxdm host_tuning; a unit test keeps the two the same)
TCPXO_TUNING = {"net.ipv4.conf.all.rp_filter": "0", "net.ipv4.tcp_rmem": "4096 540000 15728640",
                "net.ipv4.tcp_wmem": "4096 262144 67108864", "net.ipv4.tcp_no_metrics_save": "1",
                "net.ipv4.tcp_slow_start_after_idle": "0", "net.ipv4.tcp_max_syn_backlog": "4096"}
TCPXO_NIC_TUNING = {"net.ipv4.conf.{iface}.rp_filter": "0"}
TCPXO_RESTORE = {"net.ipv4.conf.all.rp_filter": "1", "net.ipv4.conf.{iface}.rp_filter": "1"}
CAP_NET_ADMIN = 12
CAP_SYS_ADMIN = 21


def log(msg, level="I", src="rxdm_standin.py"):
    line = "%s%s %s] %s" % (level, time.strftime("%m%d %H:%M:%S"), src, msg)
    print(line, flush=True)
    try:
        with open("/tmp/mtest_fastrak_gpumem_manager.INFO", "a") as fh:
            fh.write(line + "\n")
    except OSError:
        pass
    return line


def die(msg):
    log("STAND-IN: " + msg, "F")
    sys.exit(1)


def parse(argv):
    flags, rest = {}, list(argv)
    while rest:
        arg = rest.pop(0)
        if not arg.startswith("--"):
            die("unexpected argument %r" % arg)
        name, eq, value = arg[2:].partition("=")
        if not eq:
            # gflags: a non-boolean flag takes the next word, even one that starts with "--"
            if name in BOOL_FLAGS or name.startswith("no") or not rest:
                value = "true"
            else:
                value = rest.pop(0)
        flags[name] = value
    return flags


def cap_eff():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return 0


# the loader's own directories, and /usr/local/nvidia/lib64 which NVIDIA's CUDA
# base images list in /etc/ld.so.conf.d
LOADER_DIRS = ["/usr/local/nvidia/lib64", "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
               "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"]


def find_library(name):
    dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d] + LOADER_DIRS
    return next((os.path.join(d, name) for d in dirs if os.path.exists(os.path.join(d, name))), None)


def default_route_nic():
    """The NIC of the default route (/proc/net/route): the entrypoint tunes every other one."""
    try:
        with open("/proc/net/route") as fh:
            for line in fh.readlines()[1:]:
                fields = line.split()
                if len(fields) > 2 and fields[1] == "00000000":
                    return fields[0]
    except OSError:
        pass
    return None


def set_sysctls(values, nics):
    for name, value in values.items():
        for each in ([name.format(iface=n) for n in nics] if "{iface}" in name else [name]):
            path = os.path.join("/proc/sys", *each.split("."))
            try:
                with open(path, "w") as fh:
                    fh.write(value + "\n")
            except OSError as exc:
                log("STAND-IN: cannot set %s: %s" % (each, exc.strerror or exc), "W")


def topology_ifnames(path):
    names = []
    with open(path) as fh:
        for line in fh:
            key, _sep, value = line.strip().partition(":")
            if key.strip() == "ifname":
                names.append(value.strip().strip('"'))
    return names


def main(argv):
    flags = parse(argv)
    mode = flags.pop("standin_mode", "tcpxo")
    known = TCPXO_FLAGS if mode == "tcpxo" else TCPX_FLAGS
    print("=" * 72)
    print("STAND-IN tcpgpudmarxd (%s) - sandbox only, not Google's RxDM: no GPU, no data path" % mode.upper())
    print("=" * 72, flush=True)
    for name in sorted(flags):
        if name not in known:
            die("ERROR: unknown command line flag '%s'" % name)
    caps = cap_eff()
    if not caps & (1 << CAP_NET_ADMIN):
        die("Failed to configure flow steering: Operation not permitted (needs --cap-add=NET_ADMIN)")
    if not caps & (1 << CAP_SYS_ADMIN):
        die("Failed to map GPU NIC queues: Operation not permitted (needs --privileged)")
    nics = sorted(n for n in os.listdir("/sys/class/net") if n != "lo")
    if len(nics) < 2:
        die("Found %d NIC(s) (%s), no GPU NIC: run RxDM on the host network (--network=host)"
            % (len(nics), ",".join(nics) or "none"))
    # the sandbox's docker command turns `--gpus X` into GPUDIRECT_STANDIN_GPUS=X (no GPUs here)
    if not os.environ.get("GPUDIRECT_STANDIN_GPUS") and not os.path.exists("/dev/nvidia0"):
        die("cudaGetDeviceCount failed: no CUDA-capable device is detected (run with --gpus all or pass /dev/nvidia*)")
    if not find_library("libcuda.so.1"):
        die("error while loading shared libraries: libcuda.so.1: cannot open shared object file: "
            "No such file or directory (no driver mounted at /usr/local/nvidia/lib64, none injected by --gpus)")
    if mode == "tcpxo":
        if "num_hops" not in flags:
            die("Check failed: --num_hops must be set")
        try:
            int(flags["num_hops"])
        except ValueError:
            die("ERROR: illegal value '%s' specified for int32 flag 'num_hops'" % flags["num_hops"])
        if not os.path.exists("/dev/dmabuf_import_helper"):
            die("open(/dev/dmabuf_import_helper) failed: No such file or directory (import-helper module loaded?)")
    else:
        # TCPX pins receive buffers: the sandbox's docker command passes asked ulimits as GPUDIRECT_STANDIN_ULIMITS
        asked = os.environ.get("GPUDIRECT_STANDIN_ULIMITS", "").split(",")
        if "memlock=-1" not in asked and resource.getrlimit(resource.RLIMIT_MEMLOCK)[0] != resource.RLIM_INFINITY:
            die("Failed to pin receive buffers: Cannot allocate memory (needs --ulimit memlock=-1)")
        preset = flags.get("gpu_nic_preset")
        if not preset:
            die("Check failed: --gpu_nic_preset must be set (a3vm or manual)")
        if preset == "manual":
            topo = flags.get("gpu_nic_topology")
            if not topo:
                die("Can't select manual option because both gpu_nic_topology_proto and gpu_nic_topology are empty.")
            if not os.path.exists(topo):
                die("Failed to read --gpu_nic_topology %s: No such file or directory" % topo)
            names = topology_ifnames(topo)
            if not names:
                die("Failed to parse --gpu_nic_topology %s: no gpu_rxq_configs with an ifname" % topo)
            for name in names:
                if name not in nics:
                    die("Check failed: NIC %s named in %s not found (NICs: %s)" % (name, topo, ",".join(nics)))
        uds = flags.get("uds_path", "/run/tcpx")
        if not os.path.isdir(uds) or not os.access(uds, os.W_OK):
            die("Failed to bind UNIX socket under %s: No such file or directory (mount it from the host)" % uds)
        with open(os.path.join(uds, "rxdm-standin.sock"), "w") as fh:
            fh.write("STAND-IN: not a socket\n")
    log("STAND-IN: %d NICs visible: %s%s" % (len(nics), ",".join(nics[:12]), ",..." if len(nics) > 12 else ""))
    time.sleep(float(os.environ.get("STANDIN_READY_DELAY_S", "2")))
    if mode == "tcpxo":
        fabric = [n for n in nics if n != default_route_nic()]
        set_sysctls(dict(TCPXO_TUNING, **TCPXO_NIC_TUNING), fabric)
        log("STAND-IN: tuned the host for %d fabric NIC(s) as kernel_tuning.sh does" % len(fabric))
        line = log("%s (STAND-IN)." % READY, src="fastrak_gpumem_manager.cu.cc:284")
        health = os.environ.get("HEALTH_CHECK_LOG_FILE")
        if health:
            with open(health, "w") as fh:
                fh.write(line + "\n")
    else:
        log("STAND-IN: TCPX RxDM running (the real one prints no readiness line)")

    def stop(*_args):
        if mode == "tcpxo":
            set_sysctls(TCPXO_RESTORE, [n for n in nics if n != default_route_nic()])
        sys.exit(0)
    signal.signal(signal.SIGTERM, stop)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main(sys.argv[1:])
