"""Sandbox life cycle: up, down, restart, status."""

import concurrent.futures
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import tempfile
import time

from . import common, images, inventory, layout, netconfig, standin_sysfs

REGISTRY_ALIAS = "gpudirect-registry.sandbox"
NCCL_TESTS_BIN = os.path.join(common.SANDBOX_DIR, "standins", "nccl_tests", "bin")
GPU_STANDIN = os.path.join(common.SANDBOX_DIR, "standins", "gpu", "gpudirect_standin_gpu.py")
NCCL_TESTS_DEST = "/opt/nccl-tests-standin/build"
# a node's own container storage: a volume, so that nested podman can use overlay on it
NESTED_STORAGE = "/var/lib/containers"
STANDIN_SYSFS = "/var/lib/gpudirect-standin/sysfs"
# what /proc/devices would list with the driver loaded (gpu_host_imex_proc_devices reads it)
STANDIN_PROC_DEVICES = "/var/lib/gpudirect-standin/proc-devices"
# the major it gives IMEX channel devices (the GPU stand-in reads it there too)
IMEX_CHANNEL_MAJOR = 237
# what /sys/module/nvidia/version would say (a stand-in file: the sandbox has no driver): the driver the
# family table's default TCPXO plugin was qualified with, so that a healthy sandbox is inside it
STANDIN_DRIVER_VERSION = layout.families().plugin_qualification("a3-mega")["driver"]
LIBCUDA_TEXT = "STAND-IN libcuda.so.1: the sandbox has no NVIDIA driver; this file only marks where the driver is\n"
# What `--gpus` needs on an Ubuntu image; the node's docker command checks for it
TOOLKIT_HOOK = "usr/bin/nvidia-container-runtime-hook"
TOOLKIT_TEXT = """#!/bin/sh
# STAND-IN for nvidia-container-toolkit's OCI hook (sandbox): its presence makes the
# node's docker command accept --gpus, as the real toolkit does.
echo "STAND-IN nvidia-container-runtime-hook: sandbox only, no GPUs" >&2
exit 0
"""
# where CNI's host-local IPAM (podman's network backend on Debian 12) keeps its leases
CNI_LEASES = "/var/lib/cni/networks"
BOOT_TIMEOUT_S = int(os.environ.get("GPUDIRECT_SANDBOX_BOOT_TIMEOUT", "180"))
# hooks run after the nodes are up (registry, emulator), set by sandbox.py
AFTER_UP = []
BEFORE_DOWN = []
AFTER_DOWN_ALL = []
IMAGE_HOOKS = []


def key_file(name):
    return os.path.join(common.state_dir(name), "id_ed25519")


def inventory_file(name):
    return os.path.join(common.state_dir(name), "inventory.yml")


def host_key_file(name, node_name):
    return os.path.join(common.state_dir(name), "host_keys", "%s_ed25519" % node_name)


def _make_host_key(name, node_name):
    """The node's SSH host key, made here before its first boot, so the controller knows it."""
    path = host_key_file(name, node_name)
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        common.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "root@%s" % node_name, "-f", path],
                   what="ssh-keygen")
    return path


def _write_known_hosts(plan):
    """known_hosts for the nodes' primary addresses: SSH checks host keys in the sandbox as on a cluster."""
    lines = []
    for node in plan["nodes"]:
        path = host_key_file(plan["name"], node["name"]) + ".pub"
        if os.path.exists(path):
            with open(path) as fh:
                kind, key = fh.read().split()[:2]
            lines.append("%s %s %s\n" % (node["nics"][0]["ip"], kind, key))
    target = inventory.known_hosts_file(plan["name"])
    with open(target + ".tmp", "w") as fh:
        fh.writelines(lines)
    os.replace(target + ".tmp", target)


def _make_key(name):
    path = key_file(name)
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        common.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpudirect-sandbox-%s" % name,
                    "-f", path], what="ssh-keygen")
    return path


def _label(name):
    return "%s=%s" % (common.LABEL, name)


def _create_networks(plan):
    existing = set(n["name"] for n in common.podman_json("network", "ls", "--format", "json"))
    for net in plan["networks"]:
        # GPU NICs that share one subnet (A4X Max) name one network several times
        if net["name"] in existing:
            continue
        existing.add(net["name"])
        common.podman("network", "create", "--label", _label(plan["name"]),
                      "--opt", "mtu=%d" % net["mtu"], "--subnet", net["subnet"],
                      "--gateway", net["gateway"], net["name"])


def _node_argv(plan, node, image):
    argv = ["create", "--name", node["name"], "--hostname", node["name"],
            "--label", _label(plan["name"]), "--privileged", "--systemd=always",
            # a private cgroup namespace: systemd and nested podman in the node then see
            # one consistent cgroup tree (the host's v1 hierarchies would confuse runc)
            "--cgroupns=private",
            # the node's container storage on a volume of its own, as a VM's disk: nested overlay
            # works on it (not on the node's overlay root); removed with the node (podman rm -v)
            "--volume", NESTED_STORAGE,
            "--stop-timeout", "10", "--add-host", "%s:%s" % (REGISTRY_ALIAS, plan["registry_host"]),
            "--add-host", "metadata.google.internal:%s" % plan["registry_host"]]
    for other in plan["nodes"]:
        argv += ["--add-host", "%s:%s" % (other["name"], other["nics"][0]["ip"])]
    for nic in node["nics"] + ([node["links_port"]] if node.get("links_port") else []):
        if nic.get("macvlan_of"):
            continue  # made at boot by the links stand-in (_links_standin)
        # podman does not attach networks in the order given: name each interface
        argv += ["--network", "%s:ip=%s,mac=%s,interface_name=%s" % (nic["network"], nic["ip"] or nic["ipv6"],
                                                                     nic["mac"], nic["iface"])]
    argv += [image, images.init_command(plan["variant"])]
    return argv


def _seed_files(plan, node):
    """Files a node needs before its first boot: the authorized keys, the stand-in nccl-tests."""
    with tempfile.TemporaryDirectory() as tmp:
        ssh = os.path.join(tmp, "ssh")
        os.mkdir(ssh, 0o700)
        shutil.copy(key_file(plan["name"]) + ".pub", os.path.join(ssh, "authorized_keys"))
        os.chmod(os.path.join(ssh, "authorized_keys"), 0o600)
        # "DIR/." copies the contents into the existing /root/.ssh (root: the sandbox's boot checks)
        common.podman("cp", ssh + "/.", "%s:/root/.ssh" % node["name"])
        # the login user's key: one file into the directory the image made for it, which
        # keeps its owner (root's 0644 file is one sshd accepts and the user can read)
        os.chmod(os.path.join(ssh, "authorized_keys"), 0o644)
        common.podman("cp", os.path.join(ssh, "authorized_keys"),
                      "%s:/home/%s/.ssh/authorized_keys" % (node["name"], common.SSH_USER))
        # the host key the controller's known_hosts holds (sshd makes one only when none is there)
        host_key = _make_host_key(plan["name"], node["name"])
        keys = os.path.join(tmp, "hostkeys")
        os.mkdir(keys, 0o755)
        shutil.copy(host_key, os.path.join(keys, "ssh_host_ed25519_key"))
        os.chmod(os.path.join(keys, "ssh_host_ed25519_key"), 0o600)
        shutil.copy(host_key + ".pub", os.path.join(keys, "ssh_host_ed25519_key.pub"))
        common.podman("cp", keys + "/.", "%s:/etc/ssh" % node["name"])
        # What a GPU VM with its driver has and a sandbox node lacks, as labelled
        # stand-ins: the driver where the variant's image keeps it (COS: its own
        # directory and GPU device nodes; Ubuntu: the system library directory
        # and the container toolkit's hook), a plain file for
        # /dev/dmabuf_import_helper and a directory for /dev/aperture_devices
        # (mapped by rxdm_volume_sources and diagnose_device_sources in
        # inventories/sandbox/group_vars/all/standins.yml), the network name the
        # family's NCCL plugin reports, for the stand-in *_perf programs, and for
        # TCPX an A3 High's PCI layout (rxdm_sysfs_root).
        root = os.path.join(tmp, "root")
        prof = layout.family_profile(plan["family"])
        variant = plan["variant"]
        files = [("var/lib/gpudirect-standin/nvidia_version", STANDIN_DRIVER_VERSION + "\n"),
                 ("var/lib/gpudirect-standin/dmabuf_import_helper",
                  "STAND-IN for /dev/dmabuf_import_helper: a plain file, not the import-helper device\n"),
                 ("var/lib/gpudirect-standin/aperture_devices/README",
                  "STAND-IN for /dev/aperture_devices: plain files, not the aperture PCI functions\n"),
                 ("etc/nccl-standin/net_name", "%s\n" % prof["plugin"]["net_name"]),
                 ("etc/nccl-standin/subblock", "%(block)s/%(subblock)s\n" % node["topology"]),
                 ("etc/nccl-standin/README", "STAND-IN nccl-tests settings (sandbox): net_name, subblock, "
                  "peak_gbps.<collective>, and the faults slow, slow_gpu, slow_link\n"),
                 ("etc/gpudirect-standin/primary-nic", "%s\n" % node["nics"][0]["iface"]),
                 ("etc/gpudirect-standin/variant", "%s\n" % variant)]
        files += [("etc/nccl-standin/peak_gbps.%s" % coll, "%s\n" % peak)
                  for coll, peak in sorted(layout.standin_peaks(plan["family"]).items())]
        if variant == "ubuntu":
            files += [("usr/lib/%s-linux-gnu/libcuda.so.1" % prof["arch"], LIBCUDA_TEXT),
                      (TOOLKIT_HOOK, TOOLKIT_TEXT),
                      # every NIC, the primary one too, is netplan's (the image's own
                      # networkd file matches eth0 only)
                      (netconfig.NETPLAN_FILE, netconfig.netplan_cloud_init(plan, node))]
            files += netconfig.netplan_sandbox_dropins(node)
        elif variant == "el":
            files += [("usr/lib64/libcuda.so.1", LIBCUDA_TEXT), (TOOLKIT_HOOK, TOOLKIT_TEXT)]
            files += netconfig.nm_keyfiles(plan, node)
        else:
            files += [("var/lib/nvidia/lib64/libcuda.so.1", LIBCUDA_TEXT),
                      ("etc/gpudirect-standin/gpu-devices", "%d\n" % prof["gpu"]["count"])]
        _write_files(root, dict(files))
        if variant in layout.PCI_NAMED:
            os.chmod(os.path.join(root, TOOLKIT_HOOK), 0o755)
        # netplan and NetworkManager refuse (or warn about) configuration others can read
        for rel, _text in files:
            if rel.startswith(("etc/netplan/", netconfig.NM_DIR)):
                os.chmod(os.path.join(root, rel), 0o600)
        if (prof.get("rxdm") or {}).get("topology"):
            gpu_ifaces = [node["nics"][i]["iface"] for i in prof["nics"]["gpu_indexes"]]
            standin_sysfs.write_tree(os.path.join(root, STANDIN_SYSFS.lstrip("/")), gpu_ifaces)
        _gpu_standin(root, prof, node)
        _links_standin(root, node)
        _host_software_standin(root, prof)
        common.podman("cp", root + "/.", "%s:/" % node["name"])
        if os.path.isdir(NCCL_TESTS_BIN):
            opt = os.path.join(tmp, "opt")
            shutil.copytree(NCCL_TESTS_BIN, os.path.join(opt, NCCL_TESTS_DEST.split("/opt/", 1)[1]))
            common.podman("cp", opt + "/.", "%s:/opt" % node["name"])


LINKS_UNIT = """[Unit]
Description=STAND-IN GPU NICs on one subnet (sandbox): macvlan links on the node's one port there
DefaultDependencies=no
After=gpudirect-sandbox-guest-mtu.service
Before=network-pre.target systemd-networkd.service
Wants=network-pre.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/sbin/gpudirect-standin-links

[Install]
WantedBy=multi-user.target
"""
# The first line: the port and the network's MTU, which the port keeps, as a switch port would (a macvlan
# link's MTU cannot exceed its port's); then one line a link: name, port, MAC, IPv6 address/prefix. Each
# link starts at the guest default MTU, as the boot's other GPU NICs do. nodad: each address is the
# sandbox's to give, once.
LINKS_SCRIPT = """#!/bin/sh
# STAND-IN (sandbox): the GPU NICs of a family whose GPU NICs share one subnet (A4X Max), as macvlan links on
# the node's one port on that network, which podman attached; a real VM has each as a NIC of its own.
set -u
{
  read -r port mtu
  ip link set dev "$port" mtu "$mtu" up
  while read -r name parent mac address; do
    [ -n "$name" ] || continue
    ip link show "$name" >/dev/null 2>&1 || \\
      ip link add "$name" link "$parent" address "$mac" mtu 1460 type macvlan mode bridge
    ip -6 addr replace "$address" dev "$name" nodad
    ip link set "$name" up
  done
} < /etc/gpudirect-standin/links
"""
GPU_BOOT_UNIT = """[Unit]
Description=STAND-IN GPUs (sandbox): clear what a reboot clears
Before=multi-user.target nvidia-fabricmanager.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/sbin/gpudirect-standin-gpu boot

[Install]
WantedBy=multi-user.target
"""
FABRIC_MANAGER_UNIT = """[Unit]
Description=STAND-IN NVIDIA fabric manager (sandbox: no NVSwitches behind it)
After=gpudirect-standin-gpu-boot.service

[Service]
ExecStart=/usr/local/sbin/gpudirect-standin-gpu fabricmanager

[Install]
WantedBy=multi-user.target
"""


IMEX_UNIT = """[Unit]
Description=STAND-IN NVIDIA IMEX (sandbox: no GPUs behind it)
After=network-online.target gpudirect-standin-gpu-boot.service

[Service]
ExecStart=/usr/bin/nvidia-imex

[Install]
WantedBy=multi-user.target
"""


def _write_files(root, files, executable=()):
    """Each {relative path: text} under root (a node's /, copied in before its first boot); the paths in
    executable get mode 0755."""
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text)
        if rel in executable:
            os.chmod(path, 0o755)


def _enable_units(root, units):
    """Each {unit name: text} installed under root and enabled, as `systemctl enable` would (WantedBy=
    multi-user.target)."""
    _write_files(root, dict(("etc/systemd/system/%s" % name, text) for name, text in units.items()))
    wants = os.path.join(root, "etc", "systemd", "system", "multi-user.target.wants")
    os.makedirs(wants, exist_ok=True)
    for name in units:
        os.symlink("/etc/systemd/system/%s" % name, os.path.join(wants, name))


def _imex_standin(root, imex):
    """What the nvidia-imex package puts on an A4X image, as STAND-INs: the daemon and its control tool,
    the unit (installed, not enabled), config.cfg with the ports and an empty node list; and the driver's
    /proc/devices line for IMEX channels, which a node without the driver lacks."""
    files = {imex["config"].lstrip("/"):
             "# STAND-IN IMEX config (sandbox)\nSERVER_PORT=%d\nIMEX_CMD_PORT=%d\nIMEX_NODE_CONFIG_FILE=%s\n"
             % (imex["server_port"], imex["command_port"], imex["nodes_config"]),
             imex["nodes_config"].lstrip("/"): "",
             "etc/systemd/system/nvidia-imex.service": IMEX_UNIT,
             STANDIN_PROC_DEVICES.lstrip("/"):
                 "Character devices:\n195 nvidia\n%d nvidia-caps-imex-channels\n\nBlock devices:\n" % IMEX_CHANNEL_MAJOR}
    _write_files(root, files)
    for name in ("nvidia-imex", "nvidia-imex-ctl"):
        _install_standin(root, "usr/bin/" + name)


def _install_standin(root, rel):
    """The GPU stand-in as an executable (the node's python3 runs it; the name it is called by picks the part)."""
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(GPU_STANDIN) as src, open(path, "w") as dst:
        dst.write("#!/usr/bin/python3\n" + src.read())
    os.chmod(path, 0o755)


def _gpu_standin(root, prof, node):
    """The node's STAND-IN GPUs: PCI entries and driver version in the stand-in sysfs, nvidia-smi, dmesg,
    the fault tool, their state's settings, and the units that model a reboot and the fabric manager."""
    gpu = prof["gpu"]
    buses = standin_sysfs.write_gpus(os.path.join(root, STANDIN_SYSFS.lstrip("/")), gpu["count"],
                                     STANDIN_DRIVER_VERSION)
    domain = "%(block)s/%(subblock)s" % node["topology"]
    digest = hashlib.sha256(domain.encode()).hexdigest()
    rdma = []
    if prof.get("rdma_devices"):
        # each GPU NIC's ConnectX function, named as the family names them, serving the node's NIC
        rdma = standin_sysfs.write_rdma(os.path.join(root, STANDIN_SYSFS.lstrip("/")), prof["rdma_devices"],
                                        [node["nics"][i]["iface"] for i in prof["nics"]["gpu_indexes"]])
    config = {"buses": buses, "smi_name": "NVIDIA %s" % gpu.get("smi_name", "GPU"), "nvlinks": gpu.get("nvlinks"),
              "rdma_sys": os.path.join(STANDIN_SYSFS, "class", "infiniband"), "rdma_devices": rdma,
              "fabric": bool(gpu.get("fabric")), "clique_id": int(digest[:4], 16) or 1,
              "cluster_uuid": "%s-%s-%s-%s-%s" % (digest[:8], digest[8:12], digest[12:16], digest[16:20],
                                                  digest[20:32])}
    # where the driver's packages put nvidia-smi; dmesg replaced, since a container's own would read the
    # machine's kernel log, not the node's
    for rel in ("usr/local/sbin/gpudirect-standin-gpu", "usr/bin/nvidia-smi", "usr/bin/dmesg", "usr/bin/dcgmi") + \
            (("usr/bin/ibv_devinfo",) if rdma else ()):
        _install_standin(root, rel)
    unit_files = {"gpudirect-standin-gpu-boot.service": GPU_BOOT_UNIT}
    if gpu.get("fabric_manager"):
        unit_files["nvidia-fabricmanager.service"] = FABRIC_MANAGER_UNIT
    _enable_units(root, unit_files)
    path = os.path.join(root, "etc", "gpudirect-standin", "gpu.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(config, fh, indent=1)
    if prof.get("imex"):
        _imex_standin(root, prof["imex"])


def _links_standin(root, node):
    """The unit that makes the node's macvlan GPU NICs at every boot (layout.plan names them), if it has any."""
    links = [n for n in node["nics"] if n.get("macvlan_of")]
    if not links:
        return
    port = node["links_port"]
    table = "%s %d\n" % (port["iface"], port["mtu"]) + "".join(
        "%s %s %s %s/64\n" % (n["iface"], n["macvlan_of"], n["mac"], n["ipv6"]) for n in links)
    script = "usr/local/sbin/gpudirect-standin-links"
    _write_files(root, {"etc/gpudirect-standin/links": table, script: LINKS_SCRIPT}, executable=(script,))
    _enable_units(root, {"gpudirect-standin-links.service": LINKS_UNIT})


STANDIN_UNIT = """[Unit]
Description=STAND-IN %s (sandbox): enabled and running, does nothing

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/true

[Install]
WantedBy=multi-user.target
"""
STANDIN_COMMAND = """#!/bin/sh
echo "STAND-IN %s (sandbox): not installed here"
"""


def _host_software_standin(root, prof):
    """The host software the family's images have and no phase installs (A4X Max: DOCA-OFED's ofed_info,
    openibd and asapd-lite), as labelled stand-ins that preflight finds."""
    wanted = prof["host"].get("prerequisites") or {}
    commands = dict(("usr/bin/%s" % command, STANDIN_COMMAND % what)
                    for command, what in (wanted.get("commands") or {}).items())
    _write_files(root, commands, executable=tuple(commands))
    _enable_units(root, dict((unit, STANDIN_UNIT % unit) for unit in wanted.get("units") or []))


def _ssh(plan, node, *argv, timeout=15):
    cmd = ["ssh", "-i", key_file(plan["name"])] + inventory.ssh_common_args(plan["name"]).split() + \
        ["-o", "BatchMode=yes", "root@%s" % node["nics"][0]["ip"]] + list(argv)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                          check=False)


def wait_ready(plan, node, strict=True):
    """Wait until systemd has finished booting and SSH on the primary address answers.

    strict: a fresh node must boot clean; after a restart, units the roles
    added may fail, which is for the tests to see, not for the sandbox.
    """
    deadline = time.time() + BOOT_TIMEOUT_S
    last = "no answer"
    while time.time() < deadline:
        try:
            proc = _ssh(plan, node, "systemctl", "is-system-running", "--wait", timeout=90)
        except subprocess.TimeoutExpired:
            last = "ssh timed out"
            continue
        state = proc.stdout.decode().strip()
        if state in ("running", "degraded"):
            if state == "degraded" and strict:
                failed = _ssh(plan, node, "systemctl", "--failed", "--no-legend", "--plain").stdout.decode()
                raise common.SandboxError("node %s booted degraded: %s" % (
                    node["name"], " ".join(line.split()[0] for line in failed.splitlines() if line.strip())))
            return
        err = proc.stderr.decode().strip().splitlines()
        last = state or (err[-1] if err else "no answer")
        time.sleep(1)
    raise common.SandboxError("node %s not ready over SSH on %s after %ss (%s)"
                              % (node["name"], node["nics"][0]["ip"], BOOT_TIMEOUT_S, last))


def _parallel(func, nodes):
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(nodes))) as pool:
        futures = [pool.submit(func, n) for n in nodes]
        errors = [f.exception() for f in futures if f.exception()]
    if errors:
        raise errors[0]


def drop_stale_leases(nodes, root=CNI_LEASES):
    """Remove address leases CNI still keeps for nodes that are not running.

    CNI's host-local IPAM keeps one file per leased address and frees it when the
    container's network is torn down; a container that went away without that
    teardown leaves its file behind, and podman then refuses to start the node on
    its own fixed address ("requested IP address ... is not available in range
    set"). Every address here belongs to exactly one node of the sandbox, so a
    lease on the address of a node that is not running is stale. Returns the
    files removed."""
    removed = []
    for node in nodes:
        for nic in node["nics"] + ([node["links_port"]] if node.get("links_port") else []):
            if nic.get("macvlan_of"):
                continue  # no lease: podman does not attach it
            path = os.path.join(root, nic["network"], nic["ip"] or nic["ipv6"])
            try:
                os.unlink(path)
            except FileNotFoundError:
                continue
            removed.append(path)
    if removed:
        common.log("removed %d stale address lease(s): %s" % (len(removed), ", ".join(removed)))
    return removed


def grown_plan(old, plan):
    """plan (one node more than old) with old's nodes exactly as they were: a VM added to a cluster
    moves no other VM (their placement stays, whatever the larger layout would give them)."""
    if len(plan["nodes"]) != len(old["nodes"]) + 1:
        raise common.SandboxError("a grown sandbox has one node more than %s's %d, not %d"
                                  % (old["name"], len(old["nodes"]), len(plan["nodes"])))
    plan["nodes"] = [dict(n) for n in old["nodes"]] + plan["nodes"][len(old["nodes"]):]
    return plan


def add_node(name):
    """One node more for a running sandbox, as a VM created beside the running ones: the others keep
    running, untouched; the inventory, the known hosts and the Compute API emulator name it too."""
    old = common.load_state(name)
    if not old:
        raise common.SandboxError("no sandbox named %s (run `up --name %s`)" % (name, name))
    plan = up(name, old["family"], len(old["nodes"]) + 1, old.get("variant", "cos"), grow=True)
    return plan, plan["nodes"][-1]


def up(name, family, nodes, variant=layout.DEFAULT_VARIANT, grow=False):
    if not 1 <= nodes <= layout.MAX_NODES:
        raise common.SandboxError("--nodes must be between 1 and %d, got %d" % (layout.MAX_NODES, nodes))
    if variant not in layout.VARIANTS:
        raise common.SandboxError("--variant must be %s, got %r" % (" or ".join(layout.VARIANTS), variant))
    old = common.load_state(name)
    size_ok = old and (len(old["nodes"]) == nodes or (grow and len(old["nodes"]) + 1 == nodes))
    if old and (old["family"] != family or not size_ok or old.get("variant", "cos") != variant):
        raise common.SandboxError("sandbox %s already exists as %s x%d (%s nodes); run `down --name %s` first"
                                  % (name, old["family"], len(old["nodes"]), old.get("variant", "cos"), name))
    layout.family_profile(family)  # bad family: one line, before anything is built
    image = images.node_image(variant)
    _make_key(name)
    with common.locked("networks"):
        slot = old["slot"] if old else layout.free_slot()
        plan = layout.plan(name, family, nodes, slot, variant)
        if grow and old and len(old["nodes"]) < nodes:
            plan = grown_plan(old, plan)
        plan["image"] = image
        common.save_state(name, plan)
        _create_networks(plan)
    states = dict((c["Names"][0], c["State"]) for c in common.podman_json(
        "ps", "-a", "--filter", "label=%s" % _label(name), "--format", "json"))
    fresh = [n for n in plan["nodes"] if n["name"] not in states]
    for node in fresh:
        common.podman(*_node_argv(plan, node, image))
        _seed_files(plan, node)
    _write_known_hosts(plan)
    drop_stale_leases([n for n in plan["nodes"] if states.get(n["name"]) != "running"])
    common.log("starting %d %s node(s) of sandbox %s" % (nodes, family, name))
    common.podman("start", *[n["name"] for n in plan["nodes"]])
    _parallel(lambda n: wait_ready(plan, n), plan["nodes"])
    for hook in AFTER_UP:
        hook(plan)
    # after the hooks: the inventory names the Compute API emulator they started
    inventory.write(plan, key_file(name), inventory_file(name))
    common.save_state(name, plan)
    return plan


def down(name):
    plan = common.load_state(name)
    for hook in BEFORE_DOWN:
        hook(name, plan)
    ids = _remove_containers(name)
    nets = [n["name"] for n in common.podman_json(
        "network", "ls", "--filter", "label=%s" % _label(name), "--format", "json")]
    if nets:
        common.podman("network", "rm", "-f", *nets)
    shutil.rmtree(common.state_dir(name), ignore_errors=True)
    return {"containers": len(ids), "networks": len(nets), "known": plan is not None}


def _remove_containers(name, attempts=4):
    """Remove a sandbox's containers; ids of what was there.

    Under load podman can refuse a removal while a container is still
    stopping ("cannot remove container ..."); what is left is tried again.
    """
    listed = None
    for attempt in range(attempts):
        ids = common.podman("ps", "-aq", "--filter", "label=%s" % _label(name)).stdout.decode().split()
        listed = ids if listed is None else listed
        if not ids:
            break
        try:
            common.podman("rm", "-f", "-v", "-t", "0", *ids)
            break
        except common.SandboxError:
            if attempt == attempts - 1:
                raise
            common.log("podman rm refused while containers were stopping; trying again")
            time.sleep(2 * (attempt + 1))
    return listed or []


def _plan_node(name, host):
    """(plan, node) of one node of a sandbox; one line naming what is not there."""
    plan = common.load_state(name)
    if not plan:
        raise common.SandboxError("no sandbox named %s (run `up --name %s`)" % (name, name))
    node = next((n for n in plan["nodes"] if n["name"] == host), None)
    if node is None:
        raise common.SandboxError("sandbox %s has no node %s (nodes: %s)"
                                  % (name, host, ", ".join(n["name"] for n in plan["nodes"])))
    return plan, node


def restart(name, host):
    plan, node = _plan_node(name, host)
    common.podman("restart", "-t", "10", host)
    wait_ready(plan, node, strict=False)
    return node


def fault(name, host, kind, args):
    """Seed one fault into a node's STAND-IN GPUs; the stand-in's own line says what it did or refused
    (its FAULTS list the kinds)."""
    plan, node = _plan_node(name, host)
    # over SSH, as root: `podman exec` into a node that runs containers of its own can lose its cgroup here;
    # ssh joins its argument list into one remote command line, so each argument is quoted
    argv = ["/usr/local/sbin/gpudirect-standin-gpu", "fault", kind] + list(args)
    try:
        proc = _ssh(plan, node, *[shlex.quote(a) for a in argv], timeout=30)
    except subprocess.TimeoutExpired:
        raise common.SandboxError("%s: the fault tool did not answer over SSH in 30 s" % host)
    out = (proc.stdout or b"").decode("utf-8", "replace").strip()
    err = (proc.stderr or b"").decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        raise common.SandboxError("%s: %s" % (host, (err or out or "the fault tool failed").splitlines()[-1]))
    return "%s: %s" % (host, out.splitlines()[-1] if out else "%s seeded" % kind)


def node_links(host):
    """{iface: mtu} as the node sees its links now."""
    out = common.podman("exec", host, "ip", "-o", "link", "show", check=False)
    links = {}
    for line in out.stdout.decode().splitlines():
        parts = line.split()
        if len(parts) > 4 and "mtu" in parts:
            links[parts[1].rstrip(":").split("@")[0]] = int(parts[parts.index("mtu") + 1])
    return links


def status(name):
    plan = common.load_state(name)
    if not plan:
        raise common.SandboxError("no sandbox named %s" % name)
    states = dict((c["Names"][0], c["State"]) for c in common.podman_json(
        "ps", "-a", "--filter", "label=%s" % _label(name), "--format", "json"))
    nodes = []
    for node in plan["nodes"]:
        state = states.get(node["name"], "missing")
        nodes.append({"name": node["name"], "state": state, "ip": node["nics"][0]["ip"],
                      "mtu": node_links(node["name"]) if state == "running" else {}})
    return {"name": name, "family": plan["family"], "vpc_mtu": plan["vpc_mtu"],
            "networks": sorted(set(n["name"] for n in plan["networks"])), "nodes": nodes,
            "inventory": inventory_file(name), "registry": plan.get("registry"),
            "emulator": plan.get("emulator")}
