# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's evidence from what the diagnose role's checks registered, as Ansible registers it."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64

from ansible_collections.gpudirect.gcp.plugins.filter.diagnose import FilterModule
from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import diagnose_evidence as de

FILTERS = FilterModule().filters()
FAM = families.get_family("a3-mega")
PLUGIN, RXDM = FAM["plugin"]["version"], FAM["rxdm"]["version"]
SKIPPED = {"changed": False, "skipped": True, "skip_reason": "Conditional result was False"}
NIC = {"name": "enp6s0", "iface": "enp6s0", "expected_ip": "10.1.0.1", "local_problems": [], "problems": [],
       "peers": []}


ALL = ["gpu", "nics", "rxdm", "plugin", "profile", "maintenance"]


def node(**parts):
    """node_health_info's result on a healthy a3-mega node, with the given parts in place of its own."""
    base = {
        "changed": False, "failed": False, "family": "a3-mega", "verdict": "pass", "summary": "healthy",
        "gpu": {"driver": "550.90.07", "count": 8, "expected": 8, "gpus": [], "xids": [], "rdma_ports": []},
        "nics": [NIC],
        "rxdm": {"ready": True, "reason": "", "image": "img:" + RXDM, "unit_state": "active", "restarts": 0,
                 "log_tail": []},
        "plugin": {"record_path": "/var/lib/tcpxo/.gpudirect-installed", "record": {"tag": PLUGIN}, "missing": [],
                   "modified": [], "ld_so_conf": None, "intact": True},
        "profile": {"path": "/etc/nccl.env", "present": True, "error": None, "problems": [], "env": {"A": "1"},
                    "consistent": True},
        "maintenance": {"event": "NONE", "upcoming": None},
        "findings": [],
    }
    base.update(parts)
    return base


def raw(parts=None, **results):
    """The role's record of a healthy a3-mega node, with the given results in place of its own."""
    base = {
        "node": node(),
        "nic_map": {"changed": False, "failed": False, "ansible_facts": {"gpu_nic_facts": {"gpu_nics": []}}},
        "expected_profile": {"A": "1"},
        "expected_profile_error": None,
        "topology": dict(SKIPPED),
        "devices": {"results": [{"item": "/dev/dmabuf_import_helper", "stat": {"exists": True}}]},
        "kernel_modules": {"results": [{"item": "import-helper", "stat": {"exists": False}}]},
        "os_release": {"content": base64.b64encode(b"ID=ubuntu\n").decode(), "encoding": "base64"},
    }
    base.update(results)
    return {"reach": {"ok": True, "msg": ""}, "family": "a3-mega", "zone": "z", "error": None,
            "versions": {"plugin": PLUGIN}, "results": base,
            "settings": {"parts": ALL if parts is None else parts, "rxdm_container": "rxdm",
                         "rxdm_unit": "rxdm.service", "profile_file": "/etc/nccl.env", "topology": {},
                         "device_sources": {}}}


def test_a_healthy_record_becomes_the_evidence_the_checks_read():
    ev = de.shape(raw())
    assert ev["gpu"] == {"error": None, "driver": "550.90.07", "findings": []}
    assert ev["nic"] == {"error": None, "nics": [NIC]}
    assert ev["rxdm"]["error"] is None and ev["rxdm"]["ready"] is True and ev["rxdm"]["container"] == "rxdm"
    assert ev["plugin"]["record"] == {"tag": PLUGIN} and ev["plugin"]["error"] is None
    assert ev["profile"] == {"path": "/etc/nccl.env", "present": True, "error": None, "problems": [],
                             "env": {"A": "1"}, "expected": {"A": "1"}, "expected_error": None}
    assert ev["topology"] is None
    assert ev["devices"] == [{"path": "/dev/dmabuf_import_helper", "present": True,
                              "source": "/dev/dmabuf_import_helper"}]
    assert ev["kernel_modules"] == [{"name": "import-helper", "loaded": False}]
    assert ev["maintenance"] == [] and ev["os_release"] == "ID=ubuntu\n" and ev["versions"] == {"plugin": PLUGIN}


def test_parts_the_tags_left_out_are_none_whatever_the_node_returned():
    ev = de.shape(raw(parts=["rxdm"], os_release={}))
    assert [ev[k] for k in ("gpu", "nic", "plugin", "profile", "maintenance")] == [None] * 5
    assert ev["rxdm"]["ready"] is True and ev["os_release"] == ""
    # a family without RxDM: the config has no rxdm part, so the node returns none
    ev = de.shape(raw(node=node(rxdm=None)))
    assert ev["rxdm"] is None
    # nothing ran (a check before it could not finish)
    ev = de.shape(raw(node=SKIPPED, nic_map=SKIPPED))
    assert [ev[k] for k in ("gpu", "nic", "rxdm", "plugin", "profile", "maintenance")] == [None] * 6


def test_a_node_check_that_could_not_run_says_why_in_every_part_it_was_asked_for():
    # failed_when: false clears `failed`, so the module's own failure shows only as its message
    failed = {"changed": False, "failed": False, "msg": "nics[0]: has neither iface, mac nor nic"}
    ev = de.shape(raw(node=failed))
    why = failed["msg"]
    assert ev["gpu"] == {"error": why, "findings": []}
    assert ev["nic"] == {"error": why, "nics": []}
    assert ev["rxdm"] == {"container": "rxdm", "unit": "rxdm.service", "error": why}
    assert ev["plugin"] == {"error": why}
    assert ev["profile"]["present"] is False and ev["profile"]["error"] == why
    assert ev["maintenance"] == [{"component": "host", "subject": "maintenance", "severity": "warn",
                                  "can_reschedule": False, "cause": "could not run: " + why}]


def test_one_part_that_could_not_run_keeps_its_warning_and_costs_no_other():
    warn = {"component": "nccl_plugin", "subject": "plugin", "severity": "warn",
            "cause": "the check could not run: [Errno 13] Permission denied"}
    nic_warn = {"component": "nic", "subject": "interfaces", "severity": "warn",
                "cause": "cannot read the interfaces: ip: timed out"}
    ev = de.shape(raw(node=node(plugin=None, nics=None, findings=[warn, nic_warn])))
    assert ev["plugin"] == {"error": warn["cause"]}
    assert ev["nic"] == {"error": nic_warn["cause"], "nics": []}
    assert ev["rxdm"]["ready"] is True and ev["profile"]["present"] is True


def test_no_nic_to_check_and_no_container_engine_are_named():
    ev = de.shape(raw(node=node(nics=[])))
    assert ev["nic"]["error"] == "the inventory gives this node no GPU NICs (gpu_nics)"
    ev = de.shape(raw(node=node(rxdm={"ready": None, "error": "no container engine: neither docker nor podman"})))
    assert ev["rxdm"] == {"container": "rxdm", "unit": "rxdm.service",
                          "error": "no container engine: neither docker nor podman"}


def test_the_placement_the_node_reports_is_read_from_the_modules_result():
    placed = {"block": "b1", "subblock": "s1", "host": "h1"}
    record = raw(topology={"changed": False, "failed": False, "topology": placed, "source": "physical_host",
                           "mismatches": ["sub-block s1, inventory s2"], "consistent": False})
    record["settings"]["topology"] = {"block": "b1", "subblock": "s2"}
    assert de.shape(record)["topology"] == {"error": None, "expected": {"block": "b1", "subblock": "s2"},
                                            "observed": placed, "source": "physical_host",
                                            "mismatches": ["sub-block s1, inventory s2"]}
    failed = raw(topology={"changed": False, "failed": False, "msg": "http://x/: connection refused"})
    assert de.shape(failed)["topology"]["error"] == "http://x/: connection refused"


def test_gpu_and_maintenance_findings_are_the_nodes_own():
    gpu = {"component": "gpu", "subject": "GPU 3 (0000:8a:00.0)", "severity": "fail", "cause": "Xid 79",
           "rung": "reboot"}
    rdma = {"component": "rdma", "subject": "mlx5_0 port 1", "severity": "fail", "cause": "DOWN"}
    due = {"component": "host", "subject": "maintenance", "severity": "warn", "cause": "due in 3 h",
           "can_reschedule": True}
    ev = de.shape(raw(node=node(findings=[gpu, rdma, due])))
    assert ev["gpu"]["findings"] == [gpu, rdma]
    assert ev["maintenance"] == [due]


def test_a_device_looked_for_elsewhere_keeps_its_own_path_as_the_subject():
    record = raw(devices={"results": [{"item": "/dev/dmabuf_import_helper", "stat": {"exists": False}}]})
    record["settings"]["device_sources"] = {"/dev/dmabuf_import_helper": "/run/standin/dmabuf"}
    assert de.shape(record)["devices"] == [{"path": "/dev/dmabuf_import_helper", "present": False,
                                            "source": "/run/standin/dmabuf"}]


def test_an_unreachable_record_and_a_garbled_os_release_are_kept_as_they_are():
    assert de.shape({"reach": {"ok": False, "msg": "timed out"}, "zone": "z"}) == \
        {"reach": {"ok": False, "msg": "timed out"}, "zone": "z"}
    assert de.shape(raw(os_release={"content": "not base64!"}))["os_release"] == ""


def test_the_filter_reads_the_roles_record_and_names_what_it_found():
    record = raw(devices={"results": [{"item": "/dev/dmabuf_import_helper", "stat": {"exists": False}}]})
    found = FILTERS["_diagnose_node_findings"]({"n0": record}, ["n0"])
    assert [(f["host"], f["component"], f["subject"], f["severity"]) for f in found] == \
        [("n0", "host", "/dev/dmabuf_import_helper", "fail")]
    assert "import-helper" in found[0]["cause"]
