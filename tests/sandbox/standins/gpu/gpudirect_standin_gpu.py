"""STAND-IN for a node's GPUs (sandbox nodes have none): nvidia-smi, dmesg, the
fabric manager and IMEX, all driven by one per-node state file, and the fault
tool that seeds faults into it.

Installed as /usr/bin/nvidia-smi, /usr/bin/dmesg, /usr/bin/nvidia-imex,
/usr/bin/nvidia-imex-ctl, /usr/bin/dcgmi, /usr/bin/ibv_devinfo (RDMA families) and
/usr/local/sbin/gpudirect-standin-gpu; the name it is called by picks the part.

  nvidia-smi -q -x             the real XML schema (nvsmi_device_v13) for the GPUs the driver sees
  nvidia-smi nvlink -s         per-GPU link lines as the real tool prints them
  nvidia-smi --gpu-reset -i N  what a reset clears: volatile ECC, a pending row remap (applied)
  nvidia-smi --query-gpu=index,uuid,utilization.gpu,power.draw,power.limit --format=csv,noheader,nounits
  nvidia-smi --query-compute-apps=pid,gpu_uuid --format=csv,noheader,nounits
                               the job watch's two queries (other fields refused, as the real tool
                               refuses a field it does not know): a GPU running a STAND-IN job is busy
                               at full power, one whose job spins (gpu-spin) busy far below its limit
                               (NCCL's kernels polling inside a collective that never completes), any
                               other idle
  dmesg                        the stand-in kernel log (Xid lines the faults add)
  gpudirect-standin-gpu boot   what a reboot clears (run by a unit at every boot)
  gpudirect-standin-gpu fault KIND [ARGS...]   seed a fault (see FAULTS); gpu-busy GPU starts a real
                               process (a STAND-IN job) that nvidia-smi lists as a compute process on
                               that GPU until it ends, a reboot or clear; gpu-spin GPU the same, but
                               its kernels spin (a job hung inside a collective)
  gpudirect-standin-gpu fabricmanager           the stand-in nvidia-fabricmanager service
  nvidia-imex                  IMEX's daemon: refuses a node list that is empty, holds a non-address or
                               lacks this node; listens on SERVER_PORT and connects to every peer over TCP
  nvidia-imex-ctl -q           READY when every peer of the list is connected, else DEGRADED/UNAVAILABLE
  dcgmi diag -r LEVEL -j       DCGM's diagnostic JSON for the GPUs the driver sees: the memory test fails
                               on a GPU with an uncorrectable ECC error, a pending remap or spent spare rows
  ibv_devinfo -d DEV -i PORT   the port's state, and its active MTU as RoCE derives it from its netdev's MTU
                               (the RDMA ports themselves are files in the stand-in sysfs tree)

What survives what follows the real hardware: a reset or reboot does not give back
spare rows (remap failure) nor fix a board that holds its clocks down (hw_slowdown);
a reboot retrains PCIe and NVLink, brings back a GPU that fell off the bus, registers
the GPUs with their NVLink fabric again and clears the kernel log; a GPU reset clears
volatile ECC counts and applies a pending row remap. A reboot brings a downed RDMA
port back and stops a port's error bursts; its counters start again from 0, as the
driver's do.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

CONFIG = "/etc/gpudirect-standin/gpu.json"
IMEX_CONFIG = "/etc/nvidia-imex/config.cfg"
IMEX_STATUS = "/run/gpudirect-standin-imex.json"
# the driver's device majors as a node with the driver would list them (the sandbox writes it)
PROC_DEVICES = "/var/lib/gpudirect-standin/proc-devices"
MODPROBE_DIR = "/etc/modprobe.d"
STATE = "/var/lib/gpudirect-standin/gpu/state.json"
# the driver version the sandbox wrote for the stand-in sysfs (what nvidia-smi and dcgmi report)
DRIVER_FILE = "/var/lib/gpudirect-standin/nvidia_version"
XID_TEXT = {79: "GPU has fallen off the bus.", 48: "An uncorrectable double bit error (DBE) has been detected "
            "on GPU in the framebuffer at partition 0, subpartition 0.", 63: "Row Remapper: New row marked for "
            "remapping, reset gpu to activate.", 64: "Row Remapper: Failed to remap row.", 74: "NVLink: fatal "
            "error detected on link 3(0x10000, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)", 94: "Contained ECC error.",
            95: "Uncontained ECC error.", 119: "Timeout after 6s of waiting for RPC response from GPU0 GSP!"}
REASONS = ("gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "hw_thermal_slowdown",
           "hw_power_brake_slowdown", "sync_boost", "sw_thermal_slowdown", "display_clocks_setting")
FAULTS = ("gpu-xid GPU XID", "gpu-ecc GPU", "gpu-remap-pending GPU", "gpu-remap-failure GPU", "gpu-pcie GPU WIDTH",
          "gpu-missing GPU", "gpu-nvlink GPU LINKS_DOWN", "gpu-throttle GPU REASON", "gpu-fabric GPU STATE",
          "gpu-busy GPU", "gpu-spin GPU", "fabricmanager-stop", "rdma-port-down INDEX", "rdma-errors INDEX", "clear")
# gpu-busy: the job's command line carries this, so a reused pid is never taken for it
BUSY_MARK = "STAND-IN training job (sandbox, no GPU)"
BUSY_MEMORY_MIB = 1024
RDMA_COUNTERS = ("counters/link_downed", "counters/link_error_recovery", "hw_counters/out_of_sequence",
                 "hw_counters/local_ack_timeout_err", "hw_counters/packet_seq_err")
# rdma-errors: what rises, by how much, every tick: a port that flaps and drops packets
RDMA_TICK = {"counters/link_downed": 1, "hw_counters/out_of_sequence": 40, "hw_counters/local_ack_timeout_err": 3}
RDMA_TICK_S = 0.2
RDMA_ERRORS_FLAG = "/run/gpudirect-standin-rdma-errors"
IB_MTUS = (256, 512, 1024, 2048, 4096)


class Refused(Exception):
    pass


def driver():
    try:
        with open(DRIVER_FILE) as fh:
            return fh.read().strip() or "unknown"
    except (IOError, OSError):
        return "unknown"


def _now():
    return "[%12.6f]" % (time.monotonic())


def _fresh():
    with open(CONFIG) as fh:
        cfg = json.load(fh)
    gpus = []
    for index, bus in enumerate(cfg["buses"]):
        gpus.append({"index": index, "bus": bus, "uuid": "GPU-5a4d0000-0000-4000-8000-%012x" % (index + 1),
                     "present": True, "ecc": 0, "remap_pending": False, "remap_failure": False,
                     "width": 16, "nvlink_down": 0, "reasons": [], "fabric": None, "processes": []})
    return {"config": cfg, "gpus": gpus, "kernel_log": [], "standin": "STAND-IN GPU state (sandbox, no GPUs)"}


def load():
    try:
        with open(STATE) as fh:
            return json.load(fh)
    except (IOError, OSError, ValueError):
        return _fresh()


def save(state):
    os.makedirs(os.path.dirname(STATE), exist_ok=True)
    tmp = STATE + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(state, fh, indent=1)
    os.replace(tmp, STATE)


def _gpu(state, arg):
    try:
        index = int(arg)
        return state["gpus"][index]
    except (ValueError, IndexError):
        raise Refused("no GPU %r: the node has GPUs 0-%d" % (arg, len(state["gpus"]) - 1))


def _xid_line(gpu, number, text=None):
    bus = gpu["bus"]  # 0000:04:00.0 -> PCI:0000:04:00
    return "%s NVRM: Xid (PCI:%s): %d, pid='<unknown>', name=<unknown>, %s" % (
        _now(), bus.rsplit(".", 1)[0], number, text or XID_TEXT.get(number, "STAND-IN event."))


def fault(state, kind, args):
    cfg = state["config"]
    need = dict((f.split()[0], len(f.split()) - 1) for f in FAULTS)
    if kind not in need:
        raise Refused("unknown fault %r; kinds: %s" % (kind, "; ".join(FAULTS)))
    if len(args) != need[kind]:
        raise Refused("%s takes %d argument(s): %s" % (kind, need[kind], [f for f in FAULTS if f.startswith(kind)][0]))
    if kind == "clear":
        _end_jobs(state)
        save(_fresh())
        rdma_reset(cfg, counters=False)
        return "cleared every fault"
    if kind == "fabricmanager-stop":
        os.execvp("systemctl", ["systemctl", "stop", "nvidia-fabricmanager"])
    if kind.startswith("rdma-"):
        return rdma_fault(cfg, kind, args[0])
    gpu = _gpu(state, args[0])
    if kind == "gpu-xid":
        number = int(args[1])
        state["kernel_log"].append(_xid_line(gpu, number))
        if number == 79:
            gpu["present"] = False
    elif kind == "gpu-missing":
        gpu["present"] = False
        state["kernel_log"].append(_xid_line(gpu, 79))
    elif kind == "gpu-ecc":
        gpu["ecc"] += 1
        state["kernel_log"].append(_xid_line(gpu, 94))
    elif kind == "gpu-remap-pending":
        gpu["remap_pending"] = True
        state["kernel_log"].append(_xid_line(gpu, 63))
    elif kind == "gpu-remap-failure":
        gpu["remap_failure"] = True
        state["kernel_log"].append(_xid_line(gpu, 64))
    elif kind == "gpu-pcie":
        width = int(args[1])
        if width not in (1, 2, 4, 8, 16):
            raise Refused("a PCIe link is x1, x2, x4, x8 or x16, not x%d" % width)
        gpu["width"] = width
    elif kind == "gpu-nvlink":
        down = int(args[1])
        if not 0 < down <= (cfg.get("nvlinks") or 0):
            raise Refused("this GPU has %s NVLink links" % (cfg.get("nvlinks") or "no"))
        gpu["nvlink_down"] = down
    elif kind == "gpu-throttle":
        if args[1] not in REASONS:
            raise Refused("unknown clock event reason %r; one of %s" % (args[1], ", ".join(REASONS)))
        gpu["reasons"].append(args[1])
    elif kind in ("gpu-busy", "gpu-spin"):
        pid = _start_job(gpu["index"])
        gpu.setdefault("processes", []).append({"pid": pid, "memory": BUSY_MEMORY_MIB, "spin": kind == "gpu-spin"})
        save(state)
        return "seeded %s on GPU %s (%s): pid %d" % (kind, gpu["index"], gpu["bus"], pid)
    elif kind == "gpu-fabric":
        if not cfg.get("fabric"):
            raise Refused("this family's GPUs are in no multi-node NVLink fabric")
        gpu["fabric"] = args[1]
    save(state)
    return "seeded %s on GPU %s (%s)" % (kind, gpu["index"], gpu["bus"])


def _rdma_port(cfg, dev):
    return os.path.join(cfg["rdma_sys"], dev, "ports", "1")


def _write(path, text):
    with open(path, "w") as fh:
        fh.write(text + "\n")


def rdma_fault(cfg, kind, arg):
    devices = cfg.get("rdma_devices") or []
    try:
        dev = devices[int(arg)]
    except (ValueError, IndexError):
        raise Refused("no RDMA device %r: the node has %s" % (
            arg, ("devices 0-%d (%s)" % (len(devices) - 1, ", ".join(devices))) if devices else "none"))
    port = _rdma_port(cfg, dev)
    if kind == "rdma-port-down":
        _write(os.path.join(port, "state"), "1: DOWN")
        _write(os.path.join(port, "phys_state"), "3: Disabled")
        return "seeded rdma-port-down on %s port 1" % dev
    flag = "%s.%s" % (RDMA_ERRORS_FLAG, dev)
    _write(flag, "STAND-IN: %s port 1 flaps and drops packets until reboot or clear" % dev)
    import subprocess  # pylint: disable=import-outside-toplevel
    # a ticker of its own session, so it outlives the SSH command that seeded the fault
    subprocess.Popen([sys.executable, os.path.abspath(sys.argv[0]), "rdma-tick", dev], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     close_fds=True)
    return "seeded rdma-errors on %s port 1" % dev


def rdma_tick(cfg, dev):
    """Raise the port's error counters while its fault flag is there."""
    flag = "%s.%s" % (RDMA_ERRORS_FLAG, dev)
    port = _rdma_port(cfg, dev)
    while os.path.exists(flag):
        for rel, step in RDMA_TICK.items():
            path = os.path.join(port, rel)
            try:
                with open(path) as fh:
                    value = int(fh.read().strip() or 0)
            except (IOError, OSError, ValueError):
                value = 0
            _write(path, str(value + step))
        time.sleep(RDMA_TICK_S)


def rdma_reset(cfg, counters):
    """Every port ACTIVE again and no error bursts; counters back to 0 only when the driver reloads."""
    for dev in cfg.get("rdma_devices") or []:
        flag = "%s.%s" % (RDMA_ERRORS_FLAG, dev)
        if os.path.exists(flag):
            os.unlink(flag)
        port = _rdma_port(cfg, dev)
        _write(os.path.join(port, "state"), "4: ACTIVE")
        _write(os.path.join(port, "phys_state"), "5: LinkUp")
        if counters:
            for rel in RDMA_COUNTERS:
                _write(os.path.join(port, rel), "0")


def ibv_devinfo(argv):
    """-d DEV -i PORT: the lines of the real tool the checks read."""
    cfg = load()["config"]
    opts = dict(zip(argv[::2], argv[1::2]))
    dev, port = opts.get("-d"), opts.get("-i", "1")
    if dev not in (cfg.get("rdma_devices") or []):
        raise Refused("Failed to get IB_DEVICE %s (STAND-IN: the node has %s)" % (
            dev, ", ".join(cfg.get("rdma_devices") or []) or "none"))
    base = _rdma_port(cfg, dev)
    with open(os.path.join(base, "state")) as fh:
        state = fh.read().strip().split(":", 1)[-1].strip()
    netdevs = os.listdir(os.path.join(cfg["rdma_sys"], dev, "device", "net"))
    with open("/sys/class/net/%s/mtu" % netdevs[0]) as fh:
        netdev_mtu = int(fh.read().strip())
    # RoCE runs at the largest IB MTU the netdev carries after its 58 bytes of headers
    fits = [m for m in IB_MTUS if m + 58 <= netdev_mtu] or [IB_MTUS[0]]
    print("hca_id:\t%s\n\ttransport:\t\t\tInfiniBand (0)\n\tvendor_id:\t\t\t0x02c9  (STAND-IN)\n"
          "\t\tport:\t%s\n\t\t\tstate:\t\t\tPORT_%s (%s)\n\t\t\tmax_mtu:\t\t4096 (5)\n"
          "\t\t\tactive_mtu:\t\t%d (%d)\n\t\t\tlink_layer:\t\tEthernet"
          % (dev, port, state, 4 if state == "ACTIVE" else 1, fits[-1], IB_MTUS.index(fits[-1]) + 1))


def _start_job(index):
    """A real process standing for a job on GPU index: it outlives the fault command, as a job does."""
    code = "import time\nwhile True:\n    time.sleep(3600)\n"
    job = subprocess.Popen([sys.executable, "-c", code, "%s on GPU %d" % (BUSY_MARK, index)],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           close_fds=True, start_new_session=True)
    # listed once it runs as the job (until it has exec'd, its command line is this one's)
    deadline = time.monotonic() + 5
    while not _job_running(job.pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return job.pid


def _job_running(pid):
    """The STAND-IN job with this pid still runs (not ended, not a zombie, not another process on a reused pid)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as fh:
            cmdline = fh.read().decode("utf-8", "replace")
        with open("/proc/%d/stat" % pid) as fh:
            status = fh.read().rsplit(")", 1)[1].split()[0]
    except (IOError, OSError, IndexError):
        return False
    return BUSY_MARK in cmdline and status != "Z"


def _end_jobs(state):
    for gpu in state["gpus"]:
        for proc in gpu.get("processes") or []:
            if _job_running(proc["pid"]):
                try:
                    os.kill(proc["pid"], signal.SIGKILL)
                    os.waitpid(proc["pid"], 0)
                except ChildProcessError:
                    pass  # started by an earlier fault command: init reaps it
                except OSError:
                    pass


# RxDM holds GPU memory on every GPU (about 4 GB each on A3 High), so the real
# nvidia-smi lists it as a compute process: the RxDM stand-in's processes are
# listed under the program name of the real daemon of their mode
RXDM_STANDIN = "rxdm_standin.py"
RXDM_PROGRAMS = {"tcpx": "/tcpgpudmarxd/build/app/tcpgpudmarxd", "tcpxo": "mtest_fastrak_gpumem_manager"}
RXDM_MEMORY_MIB = 4096


def _rxdm_processes():
    """(pid, program) of every RxDM stand-in running on the node (in its container, visible here)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as fh:
                argv = fh.read().decode("utf-8", "replace").split("\0")
        except (IOError, OSError):
            continue
        if any(a.endswith(RXDM_STANDIN) for a in argv):
            mode = "tcpxo" if "--standin_mode=tcpxo" in argv else "tcpx"
            found.append((int(entry), RXDM_PROGRAMS[mode]))
    return found


def _process_xml(gpu, rxdm=()):
    out = []
    for pid, program in rxdm:
        out.append("\t\t\t<process_info>\n\t\t\t\t<gpu_instance_id>N/A</gpu_instance_id>\n"
                   "\t\t\t\t<compute_instance_id>N/A</compute_instance_id>\n\t\t\t\t<pid>%d</pid>\n"
                   "\t\t\t\t<type>C</type>\n\t\t\t\t<process_name>%s</process_name>\n"
                   "\t\t\t\t<used_memory>%d MiB</used_memory>\n\t\t\t</process_info>\n"
                   % (pid, _esc(program), RXDM_MEMORY_MIB))
    for proc in gpu.get("processes") or []:
        if not _job_running(proc["pid"]):
            continue
        out.append("\t\t\t<process_info>\n\t\t\t\t<gpu_instance_id>N/A</gpu_instance_id>\n"
                   "\t\t\t\t<compute_instance_id>N/A</compute_instance_id>\n\t\t\t\t<pid>%d</pid>\n"
                   "\t\t\t\t<type>C</type>\n\t\t\t\t<process_name>%s</process_name>\n"
                   "\t\t\t\t<used_memory>%d MiB</used_memory>\n\t\t\t</process_info>\n"
                   % (proc["pid"], _esc("python3 (%s)" % BUSY_MARK), proc["memory"]))
    return "".join(out)


def reset(state, index):
    gpu = _gpu(state, index)
    if not gpu["present"]:
        raise Refused("Unable to reset GPU %s: the GPU is not accessible" % gpu["bus"])
    gpu["ecc"] = 0
    gpu["remap_pending"] = False
    save(state)
    return "GPU 0000000%s was successfully reset." % gpu["bus"]


def boot(state):
    """A reboot: the driver reloads (volatile ECC gone, pending remaps applied), links retrain, and
    creates IMEX channel 0 only when its module option says so."""
    major = _channel_major()
    if state["config"].get("fabric") and major is not None and _modprobe_creates_channel0():
        path = "/dev/nvidia-caps-imex-channels/channel0"
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.exists(path):
            os.mknod(path, 0o666 | 0o020000, os.makedev(major, 0))
            os.chmod(path, 0o666)
    _end_jobs(state)
    for gpu in state["gpus"]:
        # a board that holds its clocks down and spent spare rows stay as they are; the GPU joins its
        # NVLink domain again when the driver loads
        # no process outlives a reboot
        gpu.update({"present": True, "ecc": 0, "remap_pending": False, "width": 16, "nvlink_down": 0,
                    "fabric": None, "reasons": [r for r in gpu["reasons"] if r.startswith("hw_")], "processes": []})
    state["kernel_log"] = []
    save(state)
    rdma_reset(state["config"], counters=True)


def _channel_major():
    try:
        with open(PROC_DEVICES) as fh:
            for line in fh:
                parts = line.split()
                if len(parts) == 2 and parts[1] == "nvidia-caps-imex-channels":
                    return int(parts[0])
    except (OSError, ValueError):
        pass
    return None


def _modprobe_creates_channel0():
    try:
        names = os.listdir(MODPROBE_DIR)
    except OSError:
        return False
    for name in names:
        try:
            with open(os.path.join(MODPROBE_DIR, name)) as fh:
                if re.search(r"^\s*options\s+nvidia\s.*NVreg_CreateImexChannel0=1", fh.read(), re.M):
                    return True
        except OSError:
            continue
    return False


def _imex_settings():
    settings = {"SERVER_PORT": "50000", "IMEX_NODE_CONFIG_FILE": "/etc/nvidia-imex/nodes_config.cfg"}
    with open(IMEX_CONFIG) as fh:
        for line in fh:
            if "=" in line and not line.lstrip().startswith("#"):
                key, value = line.split("=", 1)
                settings[key.strip()] = value.strip()
    return settings


def _is_local(address):
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        probe.bind((address, 0))
        return True
    except OSError:
        return False
    finally:
        probe.close()


def imex_daemon():
    """IMEX's daemon as far as a node without GPUs can have one: the real checks on its node list,
    and a real TCP connection to every peer on SERVER_PORT."""
    settings = _imex_settings()
    port = int(settings["SERVER_PORT"])
    with open(settings["IMEX_NODE_CONFIG_FILE"]) as fh:
        nodes = [line.split("#", 1)[0].strip() for line in fh]
    nodes = [n for n in nodes if n]
    if not nodes:
        raise Refused("%s lists no node" % settings["IMEX_NODE_CONFIG_FILE"])
    for node in nodes:
        try:
            socket.inet_aton(node)
            if node.count(".") != 3:
                raise OSError
        except OSError:
            raise Refused("%s: %r is not an IPv4 address" % (settings["IMEX_NODE_CONFIG_FILE"], node))
    mine = [n for n in nodes if _is_local(n)]
    if not mine:
        raise Refused("none of this node's addresses is in %s" % settings["IMEX_NODE_CONFIG_FILE"])
    peers = [n for n in nodes if n not in mine]
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", port))
    server.listen(64)

    def accept():
        while True:
            conn, _addr = server.accept()
            conn.close()

    threading.Thread(target=accept, daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("STAND-IN nvidia-imex (sandbox): node %s of %d, port %d, no GPUs behind it" % (mine[0], len(nodes), port),
          flush=True)
    try:
        while True:
            # every peer probed afresh each second, so a peer that goes away is seen gone
            connected = []
            for peer in peers:
                try:
                    socket.create_connection((peer, port), timeout=1).close()
                    connected.append(peer)
                except OSError:
                    pass
            status = {"pid": os.getpid(), "nodes": nodes, "connected": connected, "peers": peers}
            with open(IMEX_STATUS + ".tmp", "w") as fh:
                json.dump(status, fh)
            os.replace(IMEX_STATUS + ".tmp", IMEX_STATUS)
            time.sleep(1)
    finally:
        try:
            os.unlink(IMEX_STATUS)
        except OSError:
            pass


def imex_ctl(argv):
    if argv != ["-q"]:
        raise Refused("the stand-in knows -q only, not %s" % " ".join(argv))
    try:
        with open(IMEX_STATUS) as fh:
            status = json.load(fh)
        os.kill(status["pid"], 0)
    except (OSError, ValueError, KeyError):
        print("UNAVAILABLE")
        return 1
    missing = [p for p in status["peers"] if p not in status["connected"]]
    print("DEGRADED" if missing else "READY")
    return 0


def _esc(text):
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# DCGM's error severities (dcgm_errors.h) the stand-in's failed memory test carries
DCGM_ISOLATE, DCGM_RESET = 2, 6


def dcgmi(argv):
    """diag -r LEVEL -j: the JSON DCGM 3.x prints, from the stand-in GPUs' state."""
    if argv[:1] != ["diag"] or "-j" not in argv or "-r" not in argv:
        raise Refused("the stand-in knows diag -r LEVEL -j, not %s" % " ".join(argv))
    level = argv[argv.index("-r") + 1]
    if level not in ("1", "2", "3", "4"):
        raise Refused("Error: Invalid run level %s (STAND-IN)" % level)
    state = load()
    memory = []
    for gpu in (g for g in state["gpus"] if g["present"]):
        result = {"gpu_id": str(gpu["index"]), "status": "Pass"}
        if gpu["remap_failure"]:
            result.update(status="Fail", warnings=[{"error_category": 2, "error_id": 83, "error_severity": DCGM_ISOLATE,
                                                    "warning": "GPU %d had a row remapping failure (STAND-IN)"
                                                               % gpu["index"]}])
        elif gpu["ecc"] or gpu["remap_pending"]:
            result.update(status="Fail", warnings=[{"error_category": 2, "error_id": 95, "error_severity": DCGM_RESET,
                                                    "warning": "GPU %d has %s (STAND-IN)" % (
                                                        gpu["index"], "a pending row remap" if gpu["remap_pending"]
                                                        else "%d uncorrectable ECC error(s)" % gpu["ecc"])}])
        memory.append(result)
    doc = {"version": "3.3.9 (STAND-IN)", "Driver Version Detected": driver(),
           "DCGM Diagnostic": {"test_categories": [
               {"category": "Deployment", "tests": [{"name": "Denylist", "results": [{"status": "Pass"}]}]},
               {"category": "Hardware", "tests": [{"name": "GPU Memory", "results": memory}]}]}}
    print(json.dumps(doc, indent=1))
    return 226 if any(r["status"] == "Fail" for r in memory) else 0


def smi_xml(state):
    cfg = state["config"]
    gpus = [g for g in state["gpus"] if g["present"]]
    out = ['<?xml version="1.0" ?>', '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">',
           "<!-- STAND-IN nvidia-smi (sandbox): no GPU behind this output -->", "<nvidia_smi_log>",
           "\t<driver_version>%s</driver_version>" % driver(), "\t<cuda_version>12.8</cuda_version>",
           "\t<attached_gpus>%d</attached_gpus>" % len(gpus)]
    rxdm = _rxdm_processes()
    for gpu in gpus:
        domain, bus, rest = gpu["bus"].split(":")
        bad_fabric = gpu.get("fabric")
        fabric = ("N/A", "N/A", "N/A", "N/A")
        if cfg.get("fabric"):
            fabric = (bad_fabric or "Completed", "Success" if not bad_fabric else "Insufficient Resources",
                      "0" if bad_fabric else str(cfg["clique_id"]),
                      "00000000-0000-0000-0000-000000000000" if bad_fabric else cfg["cluster_uuid"])
        reasons = "".join("\t\t\t<clocks_event_reason_%s>%s</clocks_event_reason_%s>\n"
                          % (r, "Active" if r in gpu["reasons"] or (r == "gpu_idle" and not gpu["reasons"])
                             else "Not Active", r) for r in REASONS)
        out.append("""\t<gpu id="0000%(domain)s:%(bus)s:%(rest)s">
\t\t<product_name>%(name)s</product_name>
\t\t<persistence_mode>Enabled</persistence_mode>
\t\t<uuid>%(uuid)s</uuid>
\t\t<minor_number>%(index)d</minor_number>
\t\t<gpu_recovery_action>None</gpu_recovery_action>
\t\t<pci>
\t\t\t<pci_bus>%(bus)s</pci_bus>
\t\t\t<pci_bus_id>0000%(domain)s:%(bus)s:%(rest)s</pci_bus_id>
\t\t\t<pci_gpu_link_info>
\t\t\t\t<pcie_gen>
\t\t\t\t\t<max_link_gen>5</max_link_gen>
\t\t\t\t\t<current_link_gen>5</current_link_gen>
\t\t\t\t</pcie_gen>
\t\t\t\t<link_widths>
\t\t\t\t\t<max_link_width>16x</max_link_width>
\t\t\t\t\t<current_link_width>%(width)dx</current_link_width>
\t\t\t\t</link_widths>
\t\t\t</pci_gpu_link_info>
\t\t</pci>
\t\t<performance_state>P0</performance_state>
\t\t<clocks_event_reasons>
%(reasons)s\t\t</clocks_event_reasons>
\t\t<ecc_errors>
\t\t\t<volatile>
\t\t\t\t<sram_correctable>0</sram_correctable>
\t\t\t\t<sram_uncorrectable_parity>0</sram_uncorrectable_parity>
\t\t\t\t<sram_uncorrectable_secded>0</sram_uncorrectable_secded>
\t\t\t\t<dram_correctable>0</dram_correctable>
\t\t\t\t<dram_uncorrectable>%(ecc)d</dram_uncorrectable>
\t\t\t</volatile>
\t\t</ecc_errors>
\t\t<retired_pages>
\t\t\t<pending_retirement>N/A</pending_retirement>
\t\t</retired_pages>
\t\t<remapped_rows>
\t\t\t<remapped_row_pending>%(pending)s</remapped_row_pending>
\t\t\t<remapped_row_failure>%(failure)s</remapped_row_failure>
\t\t</remapped_rows>
\t\t<fabric>
\t\t\t<state>%(f0)s</state>
\t\t\t<status>%(f1)s</status>
\t\t\t<cliqueId>%(f2)s</cliqueId>
\t\t\t<clusterUuid>%(f3)s</clusterUuid>
\t\t</fabric>
\t\t<processes>
%(processes)s\t\t</processes>
\t\t<accounted_processes>
\t\t</accounted_processes>
\t</gpu>""" % {"domain": domain, "bus": bus, "rest": rest, "name": _esc(cfg["smi_name"]), "uuid": gpu["uuid"],
               "index": gpu["index"], "width": gpu["width"], "reasons": reasons, "ecc": gpu["ecc"],
               "pending": "Yes" if gpu["remap_pending"] else "No", "failure": "Yes" if gpu["remap_failure"] else "No",
               "f0": fabric[0], "f1": fabric[1], "f2": fabric[2], "f3": fabric[3], "processes": _process_xml(gpu, rxdm)})
    out.append("</nvidia_smi_log>")
    return "\n".join(out) + "\n"


def smi_nvlink(state):
    links = state["config"].get("nvlinks") or 0
    # a link's speed as the real tool prints it: NVLink 4 (H100, H200) or NVLink 5 (B200, GB200, GB300)
    speed = "53.125 GB/s" if state["config"]["smi_name"].split()[-1].startswith(("B", "GB")) else "26.562 GB/s"
    out = []
    for number, gpu in enumerate(g for g in state["gpus"] if g["present"]):
        out.append("GPU %d: %s (UUID: %s)" % (number, state["config"]["smi_name"], gpu["uuid"]))
        for link in range(links):
            down = link >= links - gpu["nvlink_down"]
            out.append("\t Link %d: %s" % (link, "<inactive>" if down else speed))
    return "\n".join(out) + ("\n" if out else "")


# the query fields the stand-in answers (the job watch's), and the readings it gives
QUERY_GPU_FIELDS = ("index", "uuid", "utilization.gpu", "power.draw", "power.limit")
QUERY_APP_FIELDS = ("pid", "gpu_uuid")
POWER_LIMIT_W = 700.0
# idle; computing; spinning (a few SMs polling flags): shares of the power limit
POWER_SHARE = {"idle": 0.1, "compute": 0.9, "spin": 0.18}


def _query(argv, fields):
    """The fields of --query-...=a,b --format=csv,noheader,nounits; Refused for anything else."""
    wanted = argv[0].split("=", 1)[1].split(",")
    if argv[1:] != ["--format=csv,noheader,nounits"]:
        raise Refused("the stand-in answers queries with --format=csv,noheader,nounits only")
    unknown = [field for field in wanted if field not in fields]
    if unknown:
        raise Refused('Field "%s" is not a valid field to query.' % unknown[0])
    return wanted


def _activity(gpu):
    jobs = [proc for proc in gpu.get("processes") or [] if _job_running(proc["pid"])]
    if not jobs:
        return 0, "idle"
    return 100, "spin" if all(proc.get("spin") for proc in jobs) else "compute"


def smi_query(state, argv):
    lines = []
    if argv[0].startswith("--query-gpu="):
        wanted = _query(argv, QUERY_GPU_FIELDS)
        for gpu in (g for g in state["gpus"] if g["present"]):
            util, kind = _activity(gpu)
            values = {"index": str(gpu["index"]), "uuid": gpu["uuid"], "utilization.gpu": str(util),
                      "power.draw": "%.2f" % (POWER_LIMIT_W * POWER_SHARE[kind]), "power.limit": "%.2f" % POWER_LIMIT_W}
            lines.append(", ".join(values[field] for field in wanted))
    else:
        wanted = _query(argv, QUERY_APP_FIELDS)
        rxdm = [pid for pid, _program in _rxdm_processes()]
        for gpu in (g for g in state["gpus"] if g["present"]):
            # RxDM holds memory on every GPU and is listed as the real tool lists it, as -q -x does
            pids = rxdm + [proc["pid"] for proc in gpu.get("processes") or [] if _job_running(proc["pid"])]
            for pid in pids:
                values = {"pid": str(pid), "gpu_uuid": gpu["uuid"]}
                lines.append(", ".join(values[field] for field in wanted))
    return "".join(line + "\n" for line in lines)


def nvidia_smi(argv):
    state = load()
    if argv[:1] and argv[0].startswith(("--query-gpu=", "--query-compute-apps=")):
        sys.stdout.write(smi_query(state, argv))
    elif argv[:2] == ["-q", "-x"]:
        sys.stdout.write(smi_xml(state))
    elif argv[:2] == ["nvlink", "-s"]:
        sys.stdout.write(smi_nvlink(state))
    elif argv[:1] in (["-r"], ["--gpu-reset"]) and len(argv) == 3 and argv[1] == "-i":
        print(reset(state, argv[2]))
    elif not argv:
        print("STAND-IN nvidia-smi (sandbox): %d GPU(s), no GPU behind them; try -q -x"
              % sum(1 for g in state["gpus"] if g["present"]))
    else:
        raise Refused("the stand-in knows -q -x, nvlink -s, --gpu-reset -i N and the job watch's --query-gpu and "
                      "--query-compute-apps, not %s" % " ".join(argv))


def main(argv):
    name = os.path.basename(argv[0])
    try:
        if name == "nvidia-smi":
            nvidia_smi(argv[1:])
        elif name == "nvidia-imex":
            imex_daemon()
        elif name == "nvidia-imex-ctl":
            return imex_ctl(argv[1:])
        elif name == "ibv_devinfo":
            ibv_devinfo(argv[1:])
        elif name == "dcgmi":
            return dcgmi(argv[1:])
        elif argv[1:2] == ["rdma-tick"] and len(argv) == 3:
            rdma_tick(load()["config"], argv[2])
        elif name == "dmesg":
            state = load()
            print("%s STAND-IN kernel log (sandbox): only the GPU driver's lines the seeded faults add" % _now())
            for line in state["kernel_log"]:
                print(line)
        elif argv[1:2] == ["boot"]:
            boot(load())
        elif argv[1:2] == ["fault"] and len(argv) > 2:
            print(fault(load(), argv[2], argv[3:]))
        elif argv[1:2] == ["fabricmanager"]:
            print("STAND-IN nvidia-fabricmanager (sandbox): running, no NVSwitch behind it", flush=True)
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
            while True:
                time.sleep(3600)
        else:
            raise Refused(__doc__.strip().splitlines()[0])
    except Refused as exc:
        print("%s: %s" % (name, exc), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
