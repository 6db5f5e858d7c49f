# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpudirect.gcp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node-level health checks a node runs on its own, without the controller: its GPUs, its GPU NICs,
RxDM, the NCCL net plugin's files and the NCCL env file.

Each check calls the same code the collection's modules use (nic_ready, rxdm_readiness, plugin_state,
nccl_env_file), so a node's timer or a Slurm prolog sees what the diagnose playbook sees. Plain
Python with no ansible import: the node health agent runs it from a copy on the node.

The config (JSON the node_health role writes; the node_health_info module takes the same) names what is
expected; a part that is null is not checked:
  family; gpu {sys_dir, imex_nodes, imex_wait_s, dcgm_level, dcgm_timeout_s, xid_policy};
  nics: the GPU NICs as the NIC map (gpu_nic_facts) gives them, [{nic, iface, mac, expected_mtu, ip, ipv6, network}];
  peers {nic: [addresses]}: the same NIC on other nodes, to ping at full size out of each NIC;
  rdma: auto, required or skip (each NIC's RDMA device and GID, on the families that use RDMA);
  rxdm {engine, container, unit, health_check_file, ready_line, max_restarts, log_lines} (while RxDM runs,
  also the host tuning its entrypoint applies, from the family table, on the nics' interfaces);
  plugin {record_file}; profile {path, iface_vars, binding_vars, plugin_lib_dir, plugin_library};
  maintenance {metadata_url, warn_within_h}.

A finding is {component, subject, severity, cause}: "fail" for a fault of the node, "warn" when a
check could not run (a helper missing, hung or erroring is no proof that the node is bad). GPU findings
add the repair rung and the node command that does it (module_utils/gpu/health.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

from ansible_collections.gpudirect.gcp.plugins.module_utils.host import container_engine as ce
from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import health as gpu_health
from ansible_collections.gpudirect.gcp.plugins.module_utils.gpu import imex, nvidia_smi, rdma
from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import nic_ready, nic_sysfs
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl import plugin_state
from ansible_collections.gpudirect.gcp.plugins.module_utils.rxdm import rxdm_readiness as rr
from ansible_collections.gpudirect.gcp.plugins.module_utils.rxdm import rxdm_tuning
from ansible_collections.gpudirect.gcp.plugins.module_utils.host import maintenance
from ansible_collections.gpudirect.gcp.plugins.module_utils.common import safe_text
from ansible_collections.gpudirect.gcp.plugins.module_utils.findings import finding as fd
from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl import nccl_env_file


class ConfigError(ValueError):
    """The config does not say what the checks need; one line naming the key."""


def finding(component, subject, severity, cause):
    return fd.make(component, subject, severity, cause)


def validate(config):
    """Refuse a config the checks cannot use, naming the key at fault."""
    if not isinstance(config, dict):
        raise ConfigError("the config is not a JSON object")
    if not isinstance(config.get("family"), str) or not config["family"]:
        raise ConfigError("family: missing")
    nics = config.get("nics")
    if nics is not None and (not isinstance(nics, list) or not all(isinstance(n, dict) for n in nics)):
        raise ConfigError("nics: must be a list of objects")
    for index, nic in enumerate(nics or []):
        if not (nic.get("iface") or nic.get("name") or nic.get("mac") or nic.get("nic")):
            raise ConfigError("nics[%d]: has neither iface, mac nor nic" % index)
    peers = config.get("peers")
    if peers is not None and not (isinstance(peers, dict) and all(
            isinstance(v, list) and all(isinstance(a, str) for a in v) for v in peers.values())):
        raise ConfigError("peers: must map each GPU NIC to a list of addresses")
    if config.get("rdma", "auto") not in ("auto", "required", "skip"):
        raise ConfigError("rdma: must be auto, required or skip")
    if config["family"] not in families.FAMILIES:
        raise ConfigError("family: unknown family %r" % config["family"])
    for spec in PARTS:
        key, part = spec["key"], config.get(spec["key"])
        if part is None or spec["needs"] is None:
            continue
        if not isinstance(part, dict):
            raise ConfigError("%s: must be an object or null" % key)
        for need in spec["needs"]:
            if not part.get(need):
                raise ConfigError("%s.%s: missing" % (key, need))


def nic_items(config):
    """Each GPU NIC's record of the NIC map, with its peers (the same NIC on other nodes, by its API name;
    by its network in a config an older release wrote): found by its interface, else by its MAC; a NIC
    with neither is looked up by its API name, so that it is reported missing."""
    peers = config.get("peers") or {}
    out = []
    for rec in config["nics"]:
        # name and mtu: a config the node_health role wrote before it took the NIC map's records
        iface, mac = rec.get("iface") or rec.get("name"), rec.get("mac")
        mtu = rec["expected_mtu"] if rec.get("expected_mtu") is not None else rec.get("mtu")
        out.append({"nic": rec.get("nic"), "network": rec.get("network"),
                    "iface": iface or (None if mac else rec.get("nic")), "mac": None if iface else mac,
                    "expected_mtu": mtu, "ip": rec.get("ip"), "ipv6": rec.get("ipv6"),
                    "peers": peers.get(rec.get("nic")) or peers.get(rec.get("network")) or []})
    return out


def check_nics(config, run, which, root, sleep=time.sleep):
    """The GPU NICs: their own state, RDMA device and GID where the family uses RDMA, and full-MTU pings to
    the peers each item names. A failed ping is a path's fault, judged across nodes: no finding here."""
    reader = nic_sysfs.SysfsReader(root)
    try:
        interfaces = nic_sysfs.read_interfaces(reader, run, which("ip"))
    except (ValueError, OSError) as exc:
        return None, [finding("nic", "interfaces", "warn", "cannot read the interfaces: %s" % exc)]
    items = nic_items(config)
    ping = which("ping") if any(item.get("peers") for item in items) else None
    results, _rdma = nic_ready.check_node(items, interfaces, reader.rdma_devices(),
                                          nic_ready.rdma_mode(config.get("rdma") or "auto", config["family"]),
                                          run, ping, lambda item, _res: item.get("peers"), sleep=sleep)
    found = [finding("nic", item[0], "fail", item[1]) for item in map(nic_ready.own_finding, results) if item]
    return results, found


def gpu_options():
    """The GPU part's settings gpu_state reads, as an argument spec: gpu_health_info takes them as its
    options, node_health_info as the suboptions of its gpu option."""
    return dict(
        sys_dir=dict(type="path", default="/sys"),
        imex_nodes=dict(type="list", elements="str"),
        imex_wait_s=dict(type="int", default=0),
        dcgm_level=dict(type="int", default=1, choices=[0, 1, 2, 3, 4]),
        dcgm_timeout_s=dict(type="int", default=300),
        rdma_interval_s=dict(type="float", default=1.0),
        # the inventory's changes to the Xid catalogue, judged (and a bad entry named) by xid.policy
        xid_policy=dict(type="dict"),
    )


def gpu_state(family, part, run, which, clock=time.time, sleep=time.sleep):
    """Everything the GPU checks read, with their findings (components gpu, imex and rdma).

    part: {sys_dir, imex_nodes, imex_wait_s, dcgm_level, dcgm_timeout_s, rdma_interval_s, xid_policy}. IMEX is looked
    at again for up to imex_wait_s while it fails, since a domain connects only once its other VMs have
    started IMEX too."""
    fam = families.FAMILIES[family]
    sys_dir = part.get("sys_dir") or "/sys"
    result = gpu_health.check(gpu_health.expected_for(fam["gpu"]), run, which, sys_dir=sys_dir,
                              dcgm_level=part.get("dcgm_level") or 0,
                              dcgm_timeout_s=part.get("dcgm_timeout_s") or 300,
                              xid_policy=part.get("xid_policy"))
    if fam.get("imex"):
        deadline = clock() + max(0, part.get("imex_wait_s") or 0)
        while True:
            found = imex.judge(fam["imex"], part.get("imex_nodes"), imex.gather(run, which, fam["imex"]))
            if clock() >= deadline or not any(f["severity"] == "fail" for f in found):
                break
            sleep(2)
        result["findings"] += found
    interval = part.get("rdma_interval_s")
    result["rdma_ports"], found = rdma.check(fam, run, which, sys_dir=sys_dir,
                                             interval_s=1.0 if interval is None else max(0.0, interval))
    result["findings"] += found
    return result


def check_gpu(family, part, run, which):
    """The GPUs, IMEX and the RDMA ports, summed up per GPU."""
    fam = families.FAMILIES[family]
    result = gpu_state(family, part, run, which)
    found = result["findings"]
    failing = " ".join(f["subject"] for f in found if f["severity"] == "fail")
    gpus = [{"index": g["index"], "bus": nvidia_smi.bus_key(g["pci_bus_id"]),
             "ok": nvidia_smi.bus_key(g["pci_bus_id"]) not in failing} for g in result["gpus"]]
    return {"driver": result["driver"], "count": len(result["gpus"]), "expected": fam["gpu"].get("count"),
            "gpus": gpus, "xids": result["xids"], "rdma_ports": result["rdma_ports"]}, found


def check_rxdm(part, run, which, wait_s=0, family=None, ifaces=(), root="/"):
    """RxDM: ready now (or within wait_s), its image, unit state and restarts; when it is not ready, the last
    log_lines lines of its log (5 unless the part says) for the cause; while it runs, the host tuning its
    entrypoint applies (the family's rxdm host_tuning) on the GPU NICs ifaces."""
    try:
        engine = ce.find_engine(which, run, part.get("engine") or "auto")
    except ce.EngineError as exc:
        state = {"ready": None, "error": "no container engine: %s" % exc}
    else:
        # a periodic check takes one look and reports what is; a hook that has just started RxDM waits
        state = rr.wait_ready(run, engine["path"], part["container"], part.get("health_check_file"),
                              part.get("ready_line"), settle_s=0, timeout_s=wait_s, interval_s=1)
        state.update(rr.describe(run, engine["path"], part["container"], part.get("unit"), which("systemctl")))
        lines = part.get("log_lines")
        lines = 5 if lines is None else lines
        state["log_tail"] = [] if state["ready"] or not lines else rr.last_log_lines(
            run, engine["path"], part["container"], lines, part.get("unit"))
    found = [finding("rxdm", subject, severity, cause) for severity, subject, cause in
             rr.problems(state, part["container"], part.get("unit"), part.get("max_restarts", 0))]
    tuning = ((families.FAMILIES.get(family) or {}).get("rxdm") or {}).get("host_tuning")
    if state.get("ready") and tuning:
        ifaces = [i for i in ifaces if i]
        state["tuning"] = rxdm_tuning.gather(tuning, ifaces, run, which, root)
        found += [finding("rxdm", subject, "fail", cause)
                  for subject, cause in rxdm_tuning.problems(tuning, ifaces, state["tuning"])]
    return state, found


def check_plugin(family, part, root):
    state = plugin_state.inspect(family, part["record_file"], root)
    found = [finding("nccl_plugin", subject, "fail", cause)
             for subject, cause in plugin_state.problems(state, families.get_family(family)["transport"])]
    state["intact"] = not found
    return state, found


def check_profile(part, root):
    """The NCCL env file: readable, naming only interfaces and paths the node has. Returns its state
    {path, present, error, env, problems, consistent} and the findings."""
    path = part["path"]
    try:
        with open(os.path.join(root, path.lstrip("/"))) as fh:
            env = nccl_env_file.parse_profile(fh.read())[0]
    except (IOError, OSError) as exc:
        why = exc.strerror or str(exc)
        return ({"path": path, "present": False, "error": why, "env": {}, "problems": [], "consistent": False},
                [finding("nccl_profile", subject, "fail", cause) for subject, cause in
                 nccl_env_file.findings(path, [], unreadable=why)])
    try:
        interfaces = sorted(os.listdir(os.path.join(root, "sys/class/net")))
    except OSError as exc:
        return ({"path": path, "present": True, "error": None, "env": env, "problems": [], "consistent": None},
                [finding("nccl_profile", path, "warn", "cannot list the interfaces: %s" % exc)])
    problems = nccl_env_file.check_env(
        env, part.get("iface_vars") or [], part.get("binding_vars") or [], interfaces, part.get("plugin_lib_dir"),
        part.get("plugin_library"), path_exists=lambda p: os.path.exists(os.path.join(root, p.lstrip("/"))))
    return ({"path": path, "present": True, "error": None, "env": env, "problems": problems,
             "consistent": not problems},
            [finding("nccl_profile", subject, "fail", cause) for subject, cause in
             nccl_env_file.findings(path, problems)])


def check_maintenance(part, clock=time.time, get=None):
    """Host maintenance from the metadata server (part: {metadata_url, warn_within_h}); a finding keeps
    whether the maintenance can be started early (can_reschedule)."""
    kwargs = {"get": get} if get else {}
    state = maintenance.read(part.get("metadata_url") or maintenance.DEFAULT_URL, **kwargs)
    found = maintenance.judge(state, now=clock(), warn_within_s=float(part.get("warn_within_h", 24)) * 3600)
    return {"event": state["event"], "upcoming": state["upcoming"]}, [dict(f) for f in found]


class _Context(object):
    """What every part's check may use: run(argv), which(name), the filesystem root, a clock, and how long
    RxDM may take to become ready."""

    def __init__(self, run, which, root, clock, rxdm_wait_s):
        self.run, self.which, self.root, self.clock, self.rxdm_wait_s = run, which, root, clock, rxdm_wait_s


# The node check's parts, in the order they run; everything else that lists them is built from this
# table or compared with it by a test (the module's options, the agent, diagnose and its tags, the shared
# config task).  key: the config's key and the result's; component: of the warning when the part cannot
# run; needs: what its config object must name; empty_runs: an empty config ({} or []) still runs it;
# tag: the tag that picks it in diagnose; spec: its option in node_health_info; check: (state, findings).
PARTS = (
    {"key": "gpu", "component": "gpu", "needs": (), "empty_runs": True, "tag": "diagnose_gpu",
     "spec": dict(type="dict", options=gpu_options()),
     "check": lambda config, ctx: check_gpu(config["family"], config["gpu"], ctx.run, ctx.which)},
    # the NIC map's records as they come: the checks read the keys they need
    {"key": "nics", "component": "nic", "needs": None, "empty_runs": True, "tag": "diagnose_nic",
     "spec": dict(type="list", elements="dict"),
     "check": lambda config, ctx: check_nics(config, ctx.run, ctx.which, ctx.root)},
    {"key": "rxdm", "component": "rxdm", "needs": ("container",), "empty_runs": False, "tag": "diagnose_rxdm",
     "spec": dict(type="dict", options=dict(
         engine=dict(type="str", choices=["auto", "docker", "podman"], default="auto"),
         container=dict(type="str", required=True),
         unit=dict(type="str"),
         health_check_file=dict(type="str"),
         ready_line=dict(type="str"),
         max_restarts=dict(type="int", default=0),
         log_lines=dict(type="int", default=5))),
     "check": lambda config, ctx: check_rxdm(config["rxdm"], ctx.run, ctx.which, ctx.rxdm_wait_s, config["family"],
                                             [n.get("iface") for n in config.get("nics") or []], ctx.root)},
    {"key": "plugin", "component": "nccl_plugin", "needs": ("record_file",), "empty_runs": False,
     "tag": "diagnose_nccl_plugin",
     "spec": dict(type="dict", options=dict(record_file=dict(type="str", required=True))),
     "check": lambda config, ctx: check_plugin(config["family"], config["plugin"], ctx.root)},
    {"key": "profile", "component": "nccl_profile", "needs": ("path",), "empty_runs": False,
     "tag": "diagnose_nccl_profile",
     "spec": dict(type="dict", options=dict(
         path=dict(type="path", required=True),
         iface_vars=dict(type="list", elements="str", default=[]),
         binding_vars=dict(type="list", elements="str", default=[]),
         plugin_lib_dir=dict(type="path"),
         plugin_library=dict(type="str"))),
     "check": lambda config, ctx: check_profile(config["profile"], ctx.root)},
    {"key": "maintenance", "component": "host", "needs": (), "empty_runs": False, "tag": "diagnose_host",
     "spec": dict(type="dict", options=dict(
         metadata_url=dict(type="str", default=maintenance.DEFAULT_URL),
         warn_within_h=dict(type="float", default=24))),
     "check": lambda config, ctx: check_maintenance(config["maintenance"], ctx.clock)},
)
# settings of the nics part that stand beside it in the config, with their options
NIC_SETTINGS = {"peers": dict(type="dict"), "rdma": dict(type="str", choices=["auto", "required", "skip"],
                                                         default="auto")}


def part_keys():
    return [part["key"] for part in PARTS]


def empty_result(family):
    """A result with every part unchecked (None) and no findings yet."""
    out = dict((key, None) for key in part_keys())
    out.update(family=family, findings=[])
    return out


def _runs(part, config):
    value = config.get(part["key"])
    return value is not None if part["empty_runs"] else bool(value)


def check(config, run, which, root="/", clock=time.time, rxdm_wait_s=0):
    """Run every check the config names; one check that cannot run costs no other.

    run(argv) -> (rc, out, err), never through a shell; which(name) -> path or None.
    rxdm_wait_s: how long RxDM may take to become ready (0: one look).
    Returns {family, <each part's key>, findings, duration_s}; a part not configured, or whose check could
    not run (a warn finding says why), is None.
    """
    validate(config)
    start = clock()
    ctx = _Context(run, which, root, clock, rxdm_wait_s)
    out = empty_result(config["family"])
    for part in PARTS:
        if not _runs(part, config):
            continue
        try:
            out[part["key"]], found = part["check"](config, ctx)
        except (OSError, ValueError, KeyError) as exc:
            found = [finding(part["component"], part["key"], "warn", "the check could not run: %s" % exc)]
        out["findings"].extend(found)
    out["duration_s"] = round(clock() - start, 3)
    return out


def verdict(findings):
    """'fail' when any finding fails, 'warn' when any warns, else 'pass'."""
    severities = set(f["severity"] for f in findings)
    return "fail" if "fail" in severities else ("warn" if "warn" in severities else "pass")


def one_line(findings):
    """The reason in one line (what Slurm shows as a drain reason and the journal keeps), whatever text
    the finding holds: control characters and undecodable bytes escaped, secrets masked."""
    if not findings:
        return "healthy"
    first = sorted(findings, key=lambda f: f["severity"] != "fail")[0]
    more = len(findings) - 1
    return safe_text.one_line(safe_text.mask_text("%s %s %s: %s%s" % (
        first["severity"], first["component"], first["subject"], first["cause"],
        (" (+%d more)" % more) if more else "")))
