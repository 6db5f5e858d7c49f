"""The sandbox's local OCI registry (Debian's docker-registry, distribution 2.8).

One registry process listens on 127.0.0.1 for the host's pushes.  Nodes reach
it only through their sandbox's authenticating front (guest.py), which the
nodes know as gpudirect-registry.sandbox:5000.  Its storage lives under
.cache/, so pushed stand-ins survive `down`.
"""

import os
import subprocess
import time
import urllib.error
import urllib.request

from . import common

PORT = int(os.environ.get("GPUDIRECT_SANDBOX_REGISTRY_PORT", "5000"))
NODE_PORT = 5000  # fixed: the node image's registries.conf names it
STORAGE = os.path.join(common.CACHE_ROOT, "registry")
HOST_DIR = os.path.join(common.STATE_ROOT, "_registry")
BINARY = "docker-registry"


def host_address():
    return "127.0.0.1:%d" % PORT


def _config(addr, readonly):
    # JSON is YAML: no YAML library needed for the registry's config.
    import json
    cfg = {
        "version": 0.1,
        "log": {"level": "warn", "accesslog": {"disabled": True}},
        "storage": {
            "filesystem": {"rootdirectory": STORAGE},
            "delete": {"enabled": True},
            "maintenance": {"uploadpurging": {"enabled": False}, "readonly": {"enabled": readonly}},
        },
        "http": {"addr": addr, "secret": "gpudirect-sandbox-local-only"},
    }
    return json.dumps(cfg, indent=2)


def _alive(pid_file):
    try:
        with open(pid_file) as fh:
            pid = int(fh.read().strip())
        with open("/proc/%d/cmdline" % pid, "rb") as fh:
            cmd = fh.read().split(b"\0")
    except (OSError, ValueError):
        return None
    # only our own registry process, started with our config file
    if any(part.endswith(BINARY.encode()) for part in cmd[:1]) and \
            os.path.dirname(pid_file).encode() in b" ".join(cmd):
        return pid
    return None


def _answers(addr):
    try:
        with urllib.request.urlopen("http://%s/v2/" % addr, timeout=2) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


def start(directory, addr, readonly=False):
    """Start a registry listener on addr with its config in directory (idempotent)."""
    os.makedirs(directory, exist_ok=True)
    os.makedirs(STORAGE, exist_ok=True)
    pid_file = os.path.join(directory, "registry.pid")
    if _alive(pid_file) and _answers(addr):
        return addr
    if _answers(addr):
        raise common.SandboxError("something else already answers as a registry on %s "
                                  "(set GPUDIRECT_SANDBOX_REGISTRY_PORT)" % addr)
    cfg = os.path.join(directory, "registry.yml")
    with open(cfg, "w") as fh:
        fh.write(_config(addr, readonly))
    log_path = os.path.join(directory, "registry.log")
    try:
        with open(log_path, "ab") as log:
            proc = subprocess.Popen([BINARY, "serve", cfg], stdout=log, stderr=log,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
    except FileNotFoundError:
        raise common.SandboxError("%s is not installed (run `make deps`)" % BINARY)
    with open(pid_file, "w") as fh:
        fh.write(str(proc.pid))
    deadline = time.time() + 20
    while time.time() < deadline:
        if _answers(addr):
            return addr
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    with open(log_path, "rb") as fh:
        tail = fh.read().decode("utf-8", "replace").strip().splitlines()[-1:]
    raise common.SandboxError("registry on %s did not start: %s" % (addr, tail[0] if tail else "no output"))


def stop(directory):
    pid_file = os.path.join(directory, "registry.pid")
    pid = _alive(pid_file)
    if pid:
        common.terminate(pid)
    if os.path.exists(pid_file):
        os.unlink(pid_file)
    return bool(pid)


def start_host():
    with common.locked("registry"):
        return start(HOST_DIR, host_address())


def stop_host():
    with common.locked("registry"):
        return stop(HOST_DIR)
