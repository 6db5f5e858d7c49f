# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""STAND-IN for the nccl-tests *_perf programs, sandbox only (there are no GPUs here).

Each rank is a real MPI process: it joins the job through Open MPI's libmpi
(ctypes, no extra package), checks its own node, and the ranks agree with
real MPI_Allreduce/MPI_Allgather calls over the job's transport:
  - GPUs: local ranks x -t x -g must fit the node's GPUs (/etc/nccl-standin/gpus,
    default 8), else it fails like CUDA does ("invalid device ordinal", exit 2);
  - NCCL: the programs link libnccl.so.2, found through LD_LIBRARY_PATH or the
    system library directories; without one they do not start (exit 127, the
    loader's message), as real nccl-tests on a node with no NCCL;
  - plugin: the net plugin library (libnccl-net.so, or libnccl-net-<NCCL_NET_PLUGIN>.so)
    must exist in a directory of the rank's LD_LIBRARY_PATH and be built against
    the NCCL that was loaded (the stand-in installers label both); if any rank
    lacks it or has a mismatched one, NCCL falls back to sockets, so it prints
    "Using network Socket" and a socket-speed replay, as real NCCL would;
  - gIB's guest config checker: with the gIB installer's plugin, every value its
    guest_config.txtpb (NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE) enforces
    must be what the rank's environment says, else "NCCL/NET (shim) mismatch
    enforced" and exit 3, as gIB aborts a job;
  - slow network: /etc/nccl-standin/slow on a node (optionally holding a factor,
    default 0.5) scales the replayed busbw of every multi-node run that node takes
    part in (the collective runs at the speed of its slowest member); single-node
    runs do not touch the network and are not slowed;
  - slow GPU: /etc/nccl-standin/slow_gpu (same format) slows every run on that node,
    single-node ones included, like an NVLink/GPU fault;
  - slow path between two sub-blocks: /etc/nccl-standin/slow_link lines
    "<block>/<sub-block> <block>/<sub-block> [factor]" (on any rank of the job) slow
    every run with nodes in both sub-blocks, as a bad link between two racks would;
    each node's own sub-block is in /etc/nccl-standin/subblock (the sandbox writes it).
With NCCL_DEBUG=INFO and ENV among the subsystems, rank 0 prints NCCL's ENV lines for every NCCL_*
variable it has, through a STAND-IN environment plugin where one is installed (env_plugin()).
Rank 0 then prints a recorded real output (bin/recorded/) re-sampled to the
requested -b/-e/-f range, in the nccl-tests 2.19 text format, rescaled to
NCCL_STANDIN_PEAK_GBPS, /etc/nccl-standin/peak_gbps.<collective> or
/etc/nccl-standin/peak_gbps when set (the sandbox sets one per collective from
the family table, so a family's replay stays within what its NICs carry).  The first
line says STAND-IN.  Exit codes follow nccl-tests: 6 bad usage, 255 bad sizes,
5 invalid number of GPUs, 2 CUDA failure.
"""

import ctypes
import getopt
import math
import os
import re
import socket
import sys
import time

HERE = os.path.dirname(os.path.realpath(__file__))
RECORDING = os.path.join(HERE, "recorded", "a3-mega_all_gather_2node_dstack.txt")
CONF = os.environ.get("NCCL_STANDIN_CONF_DIR", "/etc/nccl-standin")
SOCKET_FACTOR = 0.08  # sockets over the control NIC reach a small fraction of GPUDirect busbw
OPTS = "t:g:b:e:i:f:n:m:w:N:p:I:K:c:o:d:r:z:y:T:hG:C:a:R:x:D:V:J:S:M:u:"
# per collective: (redop column, root column, busbw factor from n, bytes S from size)
COLLECTIVES = {
    "all_gather": ("none", "-1", lambda n: (n - 1) / n),
    "all_reduce": ("sum", "-1", lambda n: 2 * (n - 1) / n),
    "reduce_scatter": ("sum", "-1", lambda n: (n - 1) / n),
    "alltoall": ("none", "-1", lambda n: (n - 1) / n),
    "broadcast": ("none", "0", lambda n: 1.0),
    "reduce": ("sum", "0", lambda n: 1.0),
    "sendrecv": ("sum", "-1", lambda n: 1.0),
    "gather": ("none", "0", lambda n: (n - 1) / n),
    "scatter": ("none", "0", lambda n: (n - 1) / n),
}


def usage_error(msg, code):
    print("STAND-IN %s: %s" % (os.path.basename(sys.argv[0]), msg), flush=True)
    sys.exit(code)


def parse_size(text, flag):
    units = {"K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30}
    text = text.strip()
    try:
        if text and text[-1].upper() in units:
            return int(float(text[:-1]) * units[text[-1].upper()])
        return int(text)
    except ValueError:
        usage_error("invalid size %r for %s" % (text, flag), 255)


def read_conf(name, default=None):
    try:
        with open(os.path.join(CONF, name)) as f:
            return f.read().strip()
    except (IOError, OSError):
        return default


class Mpi(object):
    """The few MPI calls the stand-in needs, through Open MPI's C library.

    The collectives are the nonblocking ones, waited for with MPI_Test and a
    short sleep: Open MPI's blocking calls spin on the CPU, and every process
    of every sandbox node shares this machine's few cores (up to 8 a node when
    one runs per GPU), so spinning processes starve the ones with work. Real
    nccl-tests processes each have a core of their own.
    """

    POLL_S = 0.002

    def __init__(self):
        self.lib = None
        self.rank, self.size = 0, 1
        if "OMPI_COMM_WORLD_SIZE" not in os.environ:
            return
        self.lib = ctypes.CDLL("libmpi.so.40", mode=ctypes.RTLD_GLOBAL)
        self.lib.MPI_Init(None, None)
        self.comm = self._handle("ompi_mpi_comm_world")
        rank, size = ctypes.c_int(), ctypes.c_int()
        self.lib.MPI_Comm_rank(self.comm, ctypes.byref(rank))
        self.lib.MPI_Comm_size(self.comm, ctypes.byref(size))
        self.rank, self.size = rank.value, size.value

    def _handle(self, name):
        return ctypes.c_void_p(ctypes.addressof(ctypes.c_void_p.in_dll(self.lib, name)))

    def allreduce_min(self, values):
        if not self.lib:
            return list(values)
        n = len(values)
        send, recv = (ctypes.c_double * n)(*values), (ctypes.c_double * n)()
        request = ctypes.c_void_p()
        self.lib.MPI_Iallreduce(send, recv, n, self._handle("ompi_mpi_double"), self._handle("ompi_mpi_op_min"),
                                self.comm, ctypes.byref(request))
        self._wait(request)
        return list(recv)

    def allgather_str(self, text, width=64):
        if not self.lib:
            return [text]
        send = ctypes.create_string_buffer(text.encode()[:width - 1], width)
        recv = ctypes.create_string_buffer(width * self.size)
        request = ctypes.c_void_p()
        self.lib.MPI_Iallgather(send, width, self._handle("ompi_mpi_char"), recv, width,
                                self._handle("ompi_mpi_char"), self.comm, ctypes.byref(request))
        self._wait(request)
        raw = recv.raw
        return [raw[i * width:(i + 1) * width].split(b"\0", 1)[0].decode() for i in range(self.size)]

    def _wait(self, request):
        done = ctypes.c_int(0)
        while True:
            # MPI_STATUS_IGNORE is a null pointer in Open MPI
            self.lib.MPI_Test(ctypes.byref(request), ctypes.byref(done), None)
            if done.value:
                return
            time.sleep(self.POLL_S)

    def finalize(self):
        if self.lib:
            self.lib.MPI_Finalize()


def speed_factor(text):
    """Speed factor from a switch file: None (no file) is full speed; empty means 0.5."""
    if text is None:
        return 1.0
    try:
        return float(text) if text else 0.5
    except ValueError:
        return 0.5


SYSTEM_LIB_DIRS = ["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                   "/usr/lib"]
BUNDLE = re.compile(r"NCCL from the (\S+) installer")


def nccl_library():
    """The libnccl.so.2 the loader would take, or None."""
    dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d] + SYSTEM_LIB_DIRS
    return next((os.path.join(d, "libnccl.so.2") for d in dirs if os.path.exists(os.path.join(d, "libnccl.so.2"))),
                None)


def bundle_of(path):
    """Which installer's NCCL a stand-in library belongs to (None for a library no installer wrote)."""
    try:
        with open(path, errors="replace") as f:
            match = BUNDLE.search(f.read(4096))
    except (IOError, OSError):
        return None
    return match.group(1) if match else None


def plugin_mismatch(lib, nccl):
    """Why NCCL would refuse the plugin, or None: it must be built against the loaded NCCL."""
    wanted, loaded = bundle_of(lib), bundle_of(nccl)
    if wanted and wanted != loaded:
        return "%s is built against the %s installer's NCCL, but %s is %s" % (
            lib, wanted, nccl, "the %s installer's" % loaded if loaded else "another NCCL")
    return None


GIB_GUEST_CONFIG = "/usr/local/gib/configs/guest_config.txtpb"
ENFORCED = re.compile(r'enforced\s*\{\s*key:\s*"([^"]+)"\s*value:\s*"([^"]*)"\s*\}')


def shim_check():
    """gIB's startup check of the environment: None when it passes, else the NCCL WARN line."""
    if os.environ.get("NCCL_SHIMNET_SHIM_LAYERS") == "UNUSED":
        return None
    path = os.environ.get("NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE") or GIB_GUEST_CONFIG
    try:
        with open(path) as f:
            text = f.read()
    except (IOError, OSError):
        return ("NCCL WARN cannot find config file at default paths; you must specify "
                "NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE (%s)" % path)
    for key, expected in ENFORCED.findall(text):
        value = os.environ.get(key)
        if value != expected:
            return "NCCL WARN NCCL/NET (shim) mismatch enforced: %s=%s (expected %s)" % (
                key, "" if value is None else value, expected)
    return None


def plugin_library():
    name = os.environ.get("NCCL_NET_PLUGIN")
    lib = "libnccl-net-%s.so" % name if name and name != "none" else "libnccl-net.so"
    for d in os.environ.get("LD_LIBRARY_PATH", "").split(":"):
        if d and os.path.isfile(os.path.join(d, lib)):
            return os.path.join(d, lib)
    return None


def env_plugin():
    """(name, {variable: value}) of the environment plugin NCCL 2.28+ would load, or (None, {}).

    As NCCL: NCCL_ENV_PLUGIN names it (a path, or a name looked up as libnccl-env-<name>.so; "none" loads
    none), else libnccl-env.so in a directory of LD_LIBRARY_PATH. A STAND-IN plugin is a text file: a first
    line starting STAND-IN (its name after a colon) and KEY=VALUE lines, the values it answers NCCL with."""
    asked = os.environ.get("NCCL_ENV_PLUGIN")
    if asked == "none":
        return None, {}
    lib = "libnccl-env.so" if not asked else asked if "/" in asked or asked.endswith(".so") else \
        "libnccl-env-%s.so" % asked
    paths = [lib] if "/" in lib else [os.path.join(d, lib) for d in os.environ.get("LD_LIBRARY_PATH", "").split(":")
                                      if d]
    for path in paths:
        try:
            with open(path, errors="replace") as f:
                lines = f.read(65536).splitlines()
        except (IOError, OSError):
            continue
        if not lines or not lines[0].startswith("STAND-IN"):
            continue
        name = lines[0].partition(":")[2].strip() or "STAND-IN env plugin"
        values = dict(line.split("=", 1) for line in lines[1:] if "=" in line and not line.startswith("#"))
        return name, dict((k.strip(), v.strip()) for k, v in values.items())
    return None, {}


def env_lines(prefix):
    """NCCL's ENV lines (NCCL_DEBUG=INFO with ENV among NCCL_DEBUG_SUBSYS): each NCCL variable as NCCL reads it,
    through the environment plugin when one is loaded."""
    subsys = os.environ.get("NCCL_DEBUG_SUBSYS", "")
    if os.environ.get("NCCL_DEBUG", "").upper() != "INFO" or not ({"ENV", "ALL"} & set(subsys.upper().split(","))):
        return []
    name, answers = env_plugin()
    env = dict((k, v) for k, v in os.environ.items() if k.startswith("NCCL_") and not k.startswith("NCCL_STANDIN"))
    env.update(answers)
    lines = ["%sENV/Plugin: Using %s (v1)" % (prefix, name)] if name else []
    return lines + ["%s%s set by environment to %s." % (prefix, k, env[k]) for k in sorted(env)]


def net_name():
    net = os.environ.get("NCCL_NET")
    if net:
        return net
    return read_conf("net_name", "STANDIN-unnamed-plugin")


def load_curve():
    """(size, busbw) points of the recording (max of both halves)."""
    pts = []
    with open(RECORDING) as f:
        for line in f:
            tok = line.split()
            if len(tok) >= 13 and tok[0].isdigit() and tok[1].isdigit():
                pts.append((int(tok[0]), max(float(tok[7]), float(tok[11]))))
    return sorted(pts)


def busbw_at(curve, size):
    if size <= curve[0][0]:
        return curve[0][1] * size / curve[0][0]
    if size >= curve[-1][0]:
        return curve[-1][1]
    for (s0, b0), (s1, b1) in zip(curve, curve[1:]):
        if s0 <= size <= s1:
            t = (math.log(size, 2) - math.log(s0, 2)) / (math.log(s1, 2) - math.log(s0, 2))
            return b0 + t * (b1 - b0)
    return curve[-1][1]


def sizes(minb, maxb, factor, step):
    out, s = [], minb
    while s <= maxb and len(out) < 64:
        out.append(s)
        s = s * factor if factor > 1 else s + step
        if s == out[-1]:
            break
    return out


def link_speed(text, subblocks):
    """The slow_link factor for a job whose nodes sit in these sub-blocks (1.0 when no slow link joins two)."""
    speed = 1.0
    for line in (text or "").splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] != words[1] and words[0] in subblocks and words[1] in subblocks:
            speed = min(speed, speed_factor(words[2] if len(words) > 2 else ""))
    return speed


def main():
    # the *_perf wrapper scripts pass their own name
    prog = os.environ.get("NCCL_STANDIN_PROG") or os.path.basename(sys.argv[0])
    coll = prog[:-len("_perf")] if prog.endswith("_perf") else os.environ.get("NCCL_STANDIN_COLLECTIVE", "all_gather")
    if coll not in COLLECTIVES:
        usage_error("collective %s is not emulated" % coll, 5)
    try:
        opts, extra = getopt.getopt(sys.argv[1:], OPTS)
    except getopt.GetoptError as exc:
        usage_error("invalid usage: %s" % exc, 6)
    if extra:
        usage_error("invalid usage: unexpected arguments %s" % " ".join(extra), 6)
    o = dict(opts)
    if "-h" in o:
        print("USAGE: %s [-t nthreads] [-g ngpus] [-b minbytes] [-e maxbytes] [-f stepfactor] ... (STAND-IN)" % prog)
        return 0
    nthreads, ngpus = int(o.get("-t", 1)), int(o.get("-g", 1))
    minb, maxb = parse_size(o.get("-b", "32M"), "-b"), parse_size(o.get("-e", "32M"), "-e")
    step, factor = parse_size(o.get("-i", "1M"), "-i"), int(o.get("-f", 0) or 0)
    if minb <= 0 or maxb < minb:
        usage_error("invalid sizes: minBytes %d maxBytes %d" % (minb, maxb), 255)
    warmup, iters, check = int(o.get("-w", 1)), int(o.get("-n", 20)), int(o.get("-c", 1))
    if nthreads < 1 or ngpus < 1:
        usage_error("Invalid number of GPUs: %d threads x %d GPUs" % (nthreads, ngpus), 5)

    nccl = nccl_library()
    if not nccl:
        print("%s: error while loading shared libraries: libnccl.so.2: cannot open shared object file: "
              "No such file or directory (STAND-IN)" % prog, flush=True)
        return 127
    mpi = Mpi()
    host = socket.gethostname()
    local = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_SIZE", "1"))
    gpus = int(read_conf("gpus", "8"))
    fits = 1.0 if local * nthreads * ngpus <= gpus else 0.0
    lib = plugin_library()
    mismatch = plugin_mismatch(lib, nccl) if lib else None
    if lib and not mismatch and bundle_of(lib) == "GIB":
        shim = shim_check()
        if shim:
            print("%s:%d:%d [0] %s (STAND-IN gIB checker)" % (socket.gethostname(), os.getpid(), os.getpid(), shim),
                  flush=True)
            mpi.finalize()
            return 3
    plugin = 1.0 if lib and not mismatch else 0.0
    net_speed, gpu_speed = speed_factor(read_conf("slow")), speed_factor(read_conf("slow_gpu"))
    fits, plugin, net_speed, gpu_speed = mpi.allreduce_min([fits, plugin, net_speed, gpu_speed])
    hosts = mpi.allgather_str(host)
    # sub-block ids are two 32-hex hashes; a few slow_link lines fit in 1 KiB
    subblocks = set(mpi.allgather_str(read_conf("subblock") or "-", width=128))
    links = "\n".join(mpi.allgather_str((read_conf("slow_link") or "").replace("\n", ";"), width=1024))
    links = links.replace(";", "\n")
    net_speed = min(net_speed, link_speed(links, subblocks))
    # only runs that span nodes use the network
    speed = gpu_speed * (net_speed if len(set(hosts)) > 1 else 1.0)
    nranks = mpi.size * nthreads * ngpus
    if not fits:
        if os.environ.get("OMPI_COMM_WORLD_LOCAL_SIZE") and local * nthreads * ngpus > gpus:
            print("%s: Test CUDA failure common.cu:1022 'invalid device ordinal'" % host, flush=True)
            print(" .. %s pid %d: Test failure common.cu:891" % (host, os.getpid()), flush=True)
        mpi.finalize()
        return 2
    if mpi.rank != 0:
        mpi.finalize()
        return 0

    peak_target = (os.environ.get("NCCL_STANDIN_PEAK_GBPS") or read_conf("peak_gbps.%s" % coll)
                   or read_conf("peak_gbps"))
    curve = load_curve()
    scale = float(peak_target) / max(point[1] for point in curve) if peak_target else 1.0
    net = net_name() if plugin else "Socket"
    total = scale * speed * (1.0 if plugin else SOCKET_FACTOR)
    redop, root, bwfactor = COLLECTIVES[coll]
    how = "plugin found" if plugin else "no plugin: sockets"
    step_text = "%d(factor)" % factor if factor > 1 else "%d(bytes)" % step
    lines = ["# STAND-IN nccl-tests (sandbox replay, not a measurement): %s replays %s x%.3f "
             "(scale %.3f, slowest node %.2f, %s)" % (prog, os.path.basename(RECORDING), total, scale, speed, how),
             "# nccl-tests version 2.19.6 nccl-headers=22105 nccl-library=22105",
             "# Collective test starting: %s" % prog,
             "# nThread %d nGpus %d minBytes %d maxBytes %d step: %s warmup iters: %d iters: %d agg iters: 1 "
             "validation: %d graph: 0 unalign: 0" % (nthreads, ngpus, minb, maxb, step_text, warmup, iters, check),
             "#", "# Using devices"]
    # one line per GPU, as nccl-tests prints them: a process with -g N holds N ranks
    per_proc = nthreads * ngpus
    locals_seen = {}
    for proc, h in enumerate(hosts):
        first = locals_seen.get(h, 0)
        locals_seen[h] = first + per_proc
        for g in range(per_proc):
            r, dev = proc * per_proc + g, first + g
            lines.append("#  Rank %2d Group  0 Pid %6d on %10s device %2d [0000:%02x:00] STAND-IN GPU (no device)"
                         % (r, 1000 + proc, h, dev, dev))
    lines.append("%s:%d:%d [0] NCCL INFO NCCL version 2.21.5+standin (%s)" % (host, os.getpid(), os.getpid(), nccl))
    lines += env_lines("%s:%d:%d [0] NCCL INFO " % (host, os.getpid(), os.getpid()))
    if plugin:
        lines.append("%s:%d:%d [0] NCCL INFO NET/Plugin: Loaded net plugin %s from %s (STAND-IN)"
                     % (host, os.getpid(), os.getpid(), net, lib))
    elif mismatch:
        lines.append("%s:%d:%d [0] NCCL WARN NET/Plugin: %s; not loading it. Using internal net plugin. (STAND-IN)"
                     % (host, os.getpid(), os.getpid(), mismatch))
    else:
        lines.append("%s:%d:%d [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so on every rank. "
                     "Using internal net plugin." % (host, os.getpid(), os.getpid()))
    lines.append("%s:%d:%d [0] NCCL INFO Using network %s" % (host, os.getpid(), os.getpid(), net))
    lines += ["#",
              "#                                                              out-of-place                       in-place",
              "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong",
              "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)"]
    f = bwfactor(nranks) if nranks > 1 else 1.0
    bws = []
    wrong = "0" if check else "N/A"
    for size in sizes(minb, maxb, factor, step):
        bus = busbw_at(curve, size) * total
        alg = bus / f if f else bus
        per_rank = coll in ("all_gather", "reduce_scatter", "alltoall", "gather", "scatter")
        count = size // 4 // (nranks if per_rank else 1)
        t = size / (alg * 1e3) if alg > 0 else 0.0
        ts = ("%7.1f" % t) if t < 10000 else ("%7.0f" % t)
        lines.append("%12d  %12d  %8s  %6s  %6s  %s  %6.2f  %6.2f  %6s  %s  %6.2f  %6.2f  %6s"
                     % (size, count, "float", redop, root, ts, alg, bus, wrong, ts, alg, bus, wrong))
        bws += [bus, bus]
    lines += ["# Out of bounds values : 0 OK",
              "# Avg bus bandwidth    : %g " % (sum(bws) / len(bws) if bws else 0.0),
              "#", "# Collective test concluded: %s" % prog, "#", ""]
    sys.stdout.write("\n".join(lines))
    sys.stdout.flush()
    mpi.finalize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
