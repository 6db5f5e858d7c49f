"""A STAND-IN sysfs tree with an A3 High's GPU and NIC PCI layout, for nodes without GPUs.

The rxdm role writes RxDM's topology file from sysfs (class/net/<if>/device,
bus/pci/devices/*/vendor and class).  Sandbox nodes have no NVIDIA GPUs, so the
sandbox gives the role this tree instead (rxdm_sysfs_root): four PCIe switches,
each with two GPUs and one GPU NIC, at the PCI addresses of Google's A3 High
topology file (cluster-toolkit a3high blueprint), the NICs named as the node names
them.  Every family's nodes also get their GPUs and the driver's module/nvidia/version
here (write_gpus), which the GPU checks read (gpudirect_gpu_sys_dir) and the
STAND-IN nvidia-smi answers for.  Used by the sandbox and by the unit tests.
"""

import os

# (GPU, GPU, NIC) PCI addresses behind each switch
A3_HIGH_SWITCHES = (("0000:04:00.0", "0000:05:00.0", "0000:06:00.0"),
                    ("0000:0a:00.0", "0000:0b:00.0", "0000:0c:00.0"),
                    ("0000:84:00.0", "0000:85:00.0", "0000:86:00.0"),
                    ("0000:8a:00.0", "0000:8b:00.0", "0000:8c:00.0"))
NVIDIA_3D = ("0x10de", "0x030200")
GVNIC = ("0x1ae0", "0x020000")


def _device(root, switch, bdf, ids):
    path = os.path.join(root, "devices", "pci0000:00", switch, bdf)
    os.makedirs(path, exist_ok=True)
    for name, value in zip(("vendor", "class"), ids):
        with open(os.path.join(path, name), "w") as fh:
            fh.write(value + "\n")
    link = os.path.join(root, "bus", "pci", "devices", bdf)
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if not os.path.lexists(link):
        os.symlink(os.path.relpath(path, os.path.dirname(link)), link)
    return path


def gpu_buses(count, switches=A3_HIGH_SWITCHES):
    """The PCI addresses of a node's first count GPUs, in GPU order."""
    buses = [bdf for gpu0, gpu1, _nic in switches for bdf in (gpu0, gpu1)]
    if count > len(buses):
        raise ValueError("%d GPUs, the stand-in layout has %d" % (count, len(buses)))
    return buses[:count]


def write_gpus(root, count, driver_version, switches=A3_HIGH_SWITCHES):
    """The GPUs on the PCI bus and the loaded driver's version, under root (a stand-in /sys)."""
    buses = gpu_buses(count, switches)
    for number, (gpu0, gpu1, _nic) in enumerate(switches):
        switch = "0000:00:%02x.0" % (3 + number)
        for bdf in (gpu0, gpu1):
            if bdf in buses:
                _device(root, switch, bdf, NVIDIA_3D)
    version = os.path.join(root, "module", "nvidia", "version")
    os.makedirs(os.path.dirname(version), exist_ok=True)
    with open(version, "w") as fh:
        fh.write(driver_version + "\n")
    with open(os.path.join(root, "STAND-IN.txt"), "w") as fh:
        fh.write("STAND-IN sysfs: a GPU node's PCI layout and driver version for a sandbox node without GPUs\n")
    return buses


def write_tree(root, gpu_ifaces, switches=A3_HIGH_SWITCHES):
    """Lay the tree under root; gpu_ifaces name the NIC behind each switch, in order."""
    if len(gpu_ifaces) != len(switches):
        raise ValueError("%d GPU NIC names for %d switches" % (len(gpu_ifaces), len(switches)))
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "STAND-IN.txt"), "w") as fh:
        fh.write("STAND-IN sysfs: an A3 High's GPU/NIC PCI layout for a sandbox node without GPUs\n")
    for number, (iface, (gpu0, gpu1, nic)) in enumerate(zip(gpu_ifaces, switches)):
        switch = "0000:00:%02x.0" % (3 + number)
        _device(root, switch, gpu0, NVIDIA_3D)
        _device(root, switch, gpu1, NVIDIA_3D)
        nic_path = _device(root, switch, nic, GVNIC)
        net = os.path.join(root, "class", "net", iface)
        os.makedirs(net, exist_ok=True)
        link = os.path.join(net, "device")
        if not os.path.lexists(link):
            os.symlink(os.path.relpath(nic_path, net), link)
    return root


# what a healthy ConnectX port shows in sysfs (state, physical state, link layer)
RDMA_PORT = {"state": "4: ACTIVE", "phys_state": "5: LinkUp", "link_layer": "Ethernet"}
RDMA_COUNTERS = {"counters": ("link_downed", "link_error_recovery"),
                 "hw_counters": ("out_of_sequence", "local_ack_timeout_err", "packet_seq_err")}


def write_rdma(root, devices, netdevs):
    """class/infiniband/<device> for each RDMA device of the family: one healthy RoCE port with zeroed
    counters, and the netdev it serves (device/net/<name>), under root (a stand-in /sys)."""
    if len(devices) != len(netdevs):
        raise ValueError("%d RDMA devices for %d GPU NICs" % (len(devices), len(netdevs)))
    for dev, netdev in zip(devices, netdevs):
        port = os.path.join(root, "class", "infiniband", dev, "ports", "1")
        for name, value in RDMA_PORT.items():
            os.makedirs(port, exist_ok=True)
            with open(os.path.join(port, name), "w") as fh:
                fh.write(value + "\n")
        for folder, names in RDMA_COUNTERS.items():
            os.makedirs(os.path.join(port, folder), exist_ok=True)
            for name in names:
                with open(os.path.join(port, folder, name), "w") as fh:
                    fh.write("0\n")
        os.makedirs(os.path.join(root, "class", "infiniband", dev, "device", "net", netdev), exist_ok=True)
    return list(devices)
