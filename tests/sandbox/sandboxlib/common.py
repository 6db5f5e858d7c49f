"""Paths, podman invocation, locks and errors shared by the sandbox tooling."""

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
import contextlib

SANDBOX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(os.path.dirname(SANDBOX_DIR))
STATE_ROOT = os.path.join(ROOT, "build", "sandbox")
CACHE_ROOT = os.path.join(ROOT, ".cache", "sandbox")
PODMAN_CONF_DIR = os.path.join(SANDBOX_DIR, "podman")

# Podman on the host reads only files the project owns, never /etc/containers.
PODMAN_ENV = {
    "CONTAINERS_CONF": os.path.join(PODMAN_CONF_DIR, "containers.conf"),
    "CONTAINERS_REGISTRIES_CONF": os.path.join(PODMAN_CONF_DIR, "registries.conf"),
}

# Every podman object the sandbox creates carries this label, so `down`
# removes exactly what it made.
LABEL = "io.gpudirect.sandbox"

# The account Ansible logs in as: an ordinary user whose sudo comes from the
# google-sudoers group, as the guest agent sets up an OS Login or metadata-key
# user on a GCE VM.  Root's key stays for the sandbox's own boot checks only.
SSH_USER = "ops_example_com"
SUDO_GROUP = "google-sudoers"


class SandboxError(Exception):
    """An error with a one-line message for the user."""


def log(msg):
    print("sandbox: %s" % msg, file=sys.stderr, flush=True)


def env():
    out = dict(os.environ)
    out.update(PODMAN_ENV)
    out["PATH"] = out.get("PATH", "") + ":/usr/sbin:/sbin"
    return out


def run(argv, check=True, capture=True, input_data=None, what=None, timeout=None):
    """Run an argument list; raise SandboxError with the command's last words on failure."""
    try:
        proc = subprocess.run(argv, env=env(), input=input_data, timeout=timeout, check=False,
                              stdout=subprocess.PIPE if capture else None,
                              stderr=subprocess.PIPE if capture else None)
    except FileNotFoundError:
        raise SandboxError("%s is not installed (run `make deps`)" % argv[0])
    except subprocess.TimeoutExpired:
        raise SandboxError("%s timed out after %ss" % (what or " ".join(argv[:3]), timeout))
    if check and proc.returncode != 0:
        err = (proc.stderr or b"").decode("utf-8", "replace").strip().splitlines()
        last = err[-1] if err else "exit %d" % proc.returncode
        raise SandboxError("%s failed: %s" % (what or " ".join(argv[:3]), last))
    return proc


def terminate(pid, wait_s=5.0):
    """SIGTERM a process this sandbox started and wait until it is gone."""
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while os.path.exists("/proc/%d" % pid) and time.monotonic() < deadline:
        time.sleep(0.1)


def script_pid(pid_file, script):
    """The pid in pid_file when that process is still running script, else None."""
    try:
        with open(pid_file) as fh:
            pid = int(fh.read().strip())
        with open("/proc/%d/cmdline" % pid, "rb") as fh:
            cmd = fh.read()
    except (OSError, ValueError):
        return None
    return pid if script.encode() in cmd else None


def start_script(argv, pid_file, log_file, ready_file, what, timeout_s=30):
    """Start a helper script in its own session, record its pid, and wait until it writes ready_file."""
    if os.path.exists(ready_file):
        os.unlink(ready_file)
    with open(log_file, "ab") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
    with open(pid_file, "w") as fh:
        fh.write(str(proc.pid))
    deadline = time.time() + timeout_s
    while time.time() < deadline and not (os.path.exists(ready_file) and os.path.getsize(ready_file)):
        if proc.poll() is not None:
            with open(log_file, "rb") as fh:
                tail = fh.read().decode("utf-8", "replace").strip().splitlines()[-1:]
            raise SandboxError("%s did not start: %s" % (what, tail[0] if tail else "no output"))
        time.sleep(0.1)
    if not (os.path.exists(ready_file) and os.path.getsize(ready_file)):
        raise SandboxError("%s wrote nothing to %s within %ss" % (what, ready_file, timeout_s))
    return proc


def stop_script(pid_file, script, *leftovers):
    """Stop what start_script started (only that script) and remove its files; True when it was running."""
    pid = script_pid(pid_file, script)
    if pid:
        terminate(pid)
    for path in (pid_file,) + leftovers:
        if os.path.exists(path):
            os.unlink(path)
    return bool(pid)


def podman(*args, **kwargs):
    kwargs.setdefault("what", "podman " + " ".join(args[:2]))
    return run(["podman"] + list(args), **kwargs)


def podman_json(*args):
    out = podman(*args).stdout.decode()
    return json.loads(out) if out.strip() else []


@contextlib.contextmanager
def locked(name):
    """A host-wide lock (image builds, subnet choice) so parallel sandboxes do not race."""
    os.makedirs(STATE_ROOT, exist_ok=True)
    with open(os.path.join(STATE_ROOT, ".%s.lock" % name), "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def state_dir(name):
    return os.path.join(STATE_ROOT, name)


def load_state(name):
    path = os.path.join(state_dir(name), "state.json")
    try:
        with open(path) as fh:
            return json.load(fh)
    except FileNotFoundError:
        return None


def save_state(name, state):
    os.makedirs(state_dir(name), exist_ok=True)
    path = os.path.join(state_dir(name), "state.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(state, fh, indent=2, sort_keys=True)
    os.replace(tmp, path)


def sandbox_names():
    if not os.path.isdir(STATE_ROOT):
        return []
    return sorted(n for n in os.listdir(STATE_ROOT)
                  if os.path.isfile(os.path.join(STATE_ROOT, n, "state.json")))
