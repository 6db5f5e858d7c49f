"""Local image builds: debootstrap a Debian root, add files, `podman import`.

No registry is pulled from.  An image is tagged with a hash of its recipe
(package list, mirror, files, this module), so it is rebuilt only when the
recipe changes.
"""

import hashlib
import os
import shutil
import subprocess
import tempfile

from . import common, layout

# Bump when the build steps below change in a way that changes the images.
RECIPE_VERSION = "5"
SUITE = "bookworm"
MIRROR = os.environ.get("GPUDIRECT_SANDBOX_MIRROR", "http://deb.debian.org/debian")

NODE_IMAGE = "localhost/gpudirect-sandbox-node"
NODE_FILES = os.path.join(common.SANDBOX_DIR, "node")
# debootstrap does not resolve virtual packages: netavark provides podman's
# container-network-stack, dbus is what systemctl talks to.
NODE_PACKAGES = [
    "systemd", "systemd-sysv", "dbus", "python3", "openssh-server", "iproute2", "ethtool",
    "iputils-ping", "kmod", "openmpi-bin", "podman", "runc", "netavark", "sudo",
    "ca-certificates", "procps",
    # Debian's Slurm (22.05) and MUNGE, for the Slurm hooks; off at boot (SLURM_UNITS)
    "slurmd", "slurmctld", "slurm-client", "munge",
    # node_exporter, whose textfile collector serves the node agent's metrics; off at boot (SLURM_UNITS)
    "prometheus-node-exporter",
]
# Started only where a scenario configures Slurm (or scrapes the nodes): a node boots without a cluster
SLURM_UNITS = ["munge.service", "slurmd.service", "slurmctld.service", "prometheus-node-exporter.service"]
# the key munge's package may create at install; a sandbox makes its own per cluster
MUNGE_KEY = "etc/munge/munge.key"
NODE_SERVICES = ["gpudirect-sandbox-sysfs-ro.service", "gpudirect-sandbox-guest-mtu.service",
                 "gpudirect-sandbox-gpu-devices.service",
                 "systemd-networkd.service", "ssh.service"]
# a container has no console to log in on; the rest only slow boot down
# COS's boot, before systemd: see tests/sandbox/node-cos/
COS_INIT = "/usr/lib/gpudirect-sandbox/cos-init"
NODE_MASKED = ["getty@tty1.service", "console-getty.service", "systemd-timesyncd.service", "apt-daily.timer",
               "apt-daily-upgrade.timer", "e2scrub_reap.service"]

# The node images differ where Google's images differ (docs/sandbox.md): extra
# Debian packages, the units that run at boot instead of systemd-networkd, and
# files laid over tests/sandbox/node/ from tests/sandbox/node-<variant>/.
VARIANT_IMAGES = {
    # Google's Ubuntu accelerator images, which cluster-toolkit's A3/A4 blueprints
    # run: netplan generating systemd-networkd configuration
    "ubuntu": {"packages": ["netplan.io"], "enable": [], "disable": [], "mask": []},
    # Google's Rocky Linux accelerator images: NetworkManager with keyfile
    # connections; networkd stays off (libpam-systemd: the logind polkitd needs,
    # which debootstrap cannot pick itself)
    "el": {"packages": ["network-manager", "libpam-systemd"], "enable": ["NetworkManager.service"],
           "disable": ["systemd-networkd.service"],
           "mask": ["systemd-networkd.service", "systemd-networkd.socket", "systemd-networkd-wait-online.service"]},
    # Container-Optimized OS: systemd-networkd with .network files, and a boot
    # that makes / read-only and /etc a fresh tmpfs (node-cos/usr/lib/gpudirect-sandbox/cos-init)
    "cos": {"packages": [], "enable": [], "disable": [], "mask": [], "init": COS_INIT},
}
BASE_IMAGE = "localhost/gpudirect-standin-base"
BASE_TAG = "latest"
BASE_PACKAGES = ["python3"]


def _hash_tree(digest, top):
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for fname in sorted(filenames):
            path = os.path.join(dirpath, fname)
            rel = os.path.relpath(path, top)
            digest.update(rel.encode() + b"\0")
            digest.update(oct(os.stat(path).st_mode & 0o777).encode() + b"\0")
            with open(path, "rb") as fh:
                digest.update(fh.read())


def recipe_hash(packages, files_dir=None, extra=()):
    digest = hashlib.sha256()
    digest.update(("%s %s %s %s %s\n" % (RECIPE_VERSION, SUITE, MIRROR, ",".join(packages), ",".join(extra))).encode())
    if files_dir:
        _hash_tree(digest, files_dir)
    return digest.hexdigest()[:16]


def image_exists(ref):
    return common.podman("image", "exists", ref, check=False).returncode == 0


def image_label(ref, label):
    out = common.podman("image", "inspect", "--format", "{{index .Labels \"%s\"}}" % label, ref,
                        check=False)
    return out.stdout.decode().strip() if out.returncode == 0 else ""


def _debootstrap(root, packages, variant="minbase"):
    cache = os.path.join(common.CACHE_ROOT, "debs")
    os.makedirs(cache, exist_ok=True)
    argv = ["debootstrap", "--variant=%s" % variant, "--cache-dir=%s" % cache,
            "--include=%s" % ",".join(packages), SUITE, root, MIRROR]
    common.log("debootstrap %s (%d packages, cached debs in %s)" % (SUITE, len(packages), cache))
    common.run(argv, what="debootstrap (mirror %s)" % MIRROR, timeout=1800)


def _chroot(root, *argv):
    common.run(["chroot", root] + list(argv), what="chroot %s" % " ".join(argv[:2]))


def _trim(root):
    """Drop what an image does not need: apt lists and caches, docs, host keys, machine id."""
    for rel in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man",
                "usr/share/info", "usr/share/locale", "debootstrap"):
        path = os.path.join(root, rel)
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
            os.makedirs(path, exist_ok=True)
    for name in os.listdir(os.path.join(root, "etc", "ssh")) if os.path.isdir(os.path.join(root, "etc", "ssh")) else []:
        if name.startswith("ssh_host_"):
            os.unlink(os.path.join(root, "etc", "ssh", name))
    mid = os.path.join(root, "etc", "machine-id")
    if os.path.exists(mid):
        with open(mid, "w"):
            pass


def _import(root, ref, changes, labels):
    argv = ["podman", "import"]
    for change in changes:
        argv += ["--change", change]
    for key, value in labels.items():
        argv += ["--change", "LABEL %s=%s" % (key, value)]
    argv += ["-", ref]
    tar = subprocess.Popen(["tar", "-C", root, "--numeric-owner", "-c", "."], stdout=subprocess.PIPE)
    imp = subprocess.run(argv, stdin=tar.stdout, env=common.env(), stdout=subprocess.DEVNULL, check=False,
                         stderr=subprocess.PIPE)
    tar.stdout.close()
    if tar.wait() != 0 or imp.returncode != 0:
        err = imp.stderr.decode("utf-8", "replace").strip().splitlines()
        raise common.SandboxError("podman import %s failed: %s" % (ref, err[-1] if err else "tar failed"))


def _workdir():
    os.makedirs(common.CACHE_ROOT, exist_ok=True)
    return tempfile.mkdtemp(prefix="rootfs-", dir=common.CACHE_ROOT)


def _build_rootfs_image(ref, packages, files_dir, kind, tag, config, customise=None):
    """debootstrap a Debian root, lay files_dir over it, trim it and import it as ref."""
    work = _workdir()
    root = os.path.join(work, "root")
    try:
        _debootstrap(root, packages)
        if os.path.isdir(files_dir):
            common.run(["cp", "-r", "--preserve=mode", files_dir + "/.", root + "/"],
                       what="copy %s files" % kind)
        if customise:
            customise(root)
        _trim(root)
        _import(root, ref, config, {common.LABEL: kind, "io.gpudirect.recipe": tag})
    finally:
        shutil.rmtree(work, ignore_errors=True)


def variant_recipe(variant=layout.DEFAULT_VARIANT):
    """(image name, packages, services to enable, units to mask, overlay dirs) of a node variant."""
    if variant not in VARIANT_IMAGES:
        raise common.SandboxError("node variant %r unknown; use %s" % (variant, " or ".join(VARIANT_IMAGES)))
    spec = VARIANT_IMAGES[variant]
    services = [s for s in NODE_SERVICES if s not in spec["disable"]] + spec["enable"]
    overlay = os.path.join(common.SANDBOX_DIR, "node-%s" % variant)
    return ("%s-%s" % (NODE_IMAGE, variant), NODE_PACKAGES + spec["packages"], services,
            NODE_MASKED + spec["mask"], [NODE_FILES] + ([overlay] if os.path.isdir(overlay) else []))


def init_command(variant=layout.DEFAULT_VARIANT):
    """What a node of the variant runs as PID 1 (COS: its filesystem set-up, then systemd)."""
    return VARIANT_IMAGES[variant].get("init", "/sbin/init")


def _recipe_tag(packages, dirs, units):
    if len(dirs) == 1:
        return recipe_hash(packages, dirs[0], units)
    digest = hashlib.sha256(recipe_hash(packages, dirs[0], units).encode())
    for top in dirs[1:]:
        _hash_tree(digest, top)
    return digest.hexdigest()[:16]


def _add_login_user(root):
    """The ordinary login user with passwordless sudo through its group (common.SSH_USER)."""
    _chroot(root, "groupadd", "--system", common.SUDO_GROUP)
    _chroot(root, "useradd", "--create-home", "--shell", "/bin/bash", "--groups", common.SUDO_GROUP,
            common.SSH_USER)
    ssh = os.path.join(root, "home", common.SSH_USER, ".ssh")
    os.makedirs(ssh, mode=0o700)
    _chroot(root, "chown", "-R", "%s:%s" % (common.SSH_USER, common.SSH_USER), "/home/%s" % common.SSH_USER)
    # sudo ignores a sudoers.d file others can write; git keeps no modes but x
    os.chmod(os.path.join(root, "etc", "sudoers.d", "google_sudoers"), 0o440)


def node_image(variant=layout.DEFAULT_VARIANT):
    """Build (or reuse) the node image of a variant; return its reference."""
    name, packages, services, masked, dirs = variant_recipe(variant)
    tag = _recipe_tag(packages, dirs, services + masked)
    ref = "%s:%s" % (name, tag)
    with common.locked("image-build"):
        if image_exists(ref):
            return ref
        common.log("building %s node image %s (only when its recipe changes)" % (variant, ref))

        def customise(root):
            for top in dirs[1:]:
                common.run(["cp", "-r", "--preserve=mode", top + "/.", root + "/"], what="copy %s files" % variant)
            _chroot(root, "systemctl", "enable", *services)
            _chroot(root, "systemctl", "disable", *SLURM_UNITS)
            _chroot(root, "systemctl", "mask", *masked)
            _add_login_user(root)
            if os.path.exists(os.path.join(root, MUNGE_KEY)):
                os.unlink(os.path.join(root, MUNGE_KEY))

        _build_rootfs_image(ref, packages, dirs[0], "node", tag,
                            ['CMD ["/sbin/init"]', "STOPSIGNAL SIGRTMIN+3"], customise=customise)
        common.podman("tag", ref, "%s:latest" % name)
    return ref


def base_image():
    """Build (or reuse) localhost/gpudirect-standin-base:latest, the stand-ins' FROM."""
    tag = recipe_hash(BASE_PACKAGES, os.path.join(common.SANDBOX_DIR, "standins", "base"))
    ref = "%s:%s" % (BASE_IMAGE, BASE_TAG)
    with common.locked("image-build"):
        if image_exists(ref) and image_label(ref, "io.gpudirect.recipe") == tag:
            return ref
        common.log("building stand-in base image %s" % ref)
        _build_rootfs_image(ref, BASE_PACKAGES, os.path.join(common.SANDBOX_DIR, "standins", "base", "rootfs"),
                            "standin-base", tag, ['CMD ["/bin/sh"]'])
    return ref


def prune():
    """Remove every image the sandbox built, the registry storage and the package cache."""
    running = common.sandbox_names()
    if running:
        raise common.SandboxError("sandboxes still running (%s): run `down` first" % ", ".join(running))
    refs = common.podman("images", "--filter", "label=%s" % common.LABEL, "--format",
                         "{{.Repository}}:{{.Tag}}").stdout.decode().split()
    if refs:
        common.podman("rmi", "-f", *sorted(set(refs)), check=False)
    out = ["removed image %s" % r for r in sorted(set(refs))]
    for path in (os.path.join(common.CACHE_ROOT, "registry"), os.path.join(common.CACHE_ROOT, "debs")):
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
            out.append("removed %s" % path)
    return out


def clean_leftovers():
    """Remove build folders a killed build left behind (skipped while a build runs)."""
    import fcntl
    os.makedirs(common.STATE_ROOT, exist_ok=True)
    removed = []
    with open(os.path.join(common.STATE_ROOT, ".image-build.lock"), "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return removed
        try:
            if os.path.isdir(common.CACHE_ROOT):
                for entry in os.listdir(common.CACHE_ROOT):
                    if entry.startswith("rootfs-"):
                        shutil.rmtree(os.path.join(common.CACHE_ROOT, entry), ignore_errors=True)
                        removed.append(entry)
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
    return removed
