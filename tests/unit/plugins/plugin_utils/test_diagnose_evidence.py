# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's evidence from what the diagnose role's checks registered, as Ansible registers it."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64

from ansible_collections.gpudirect.gcp.plugins.filter.diagnose import FilterModule
from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.plugin_utils import diagnose_evidence as de

FILTERS = FilterModule().filters()
FAM = families.get_family("a3-mega")
PLUGIN, RXDM = FAM["plugin"]["version"], FAM["rxdm"]["version"]
SKIPPED = {"changed": False, "skipped": True, "skip_reason": "Conditional result was False"}
NIC = {"name": "enp6s0", "iface": "enp6s0", "expected_ip": "10.1.0.1", "local_problems": [], "problems": [],
       "peers": []}


def raw(**results):
    """The role's record of a healthy a3-mega node, with the given results in place of its own."""
    base = {
        "gpu": {"changed": False, "failed": False, "driver": "550.90.07", "findings": []},
        "nic_map": {"changed": False, "failed": False, "ansible_facts": {"gpu_nic_facts": {"gpu_nics": []}}},
        "nic": {"changed": False, "failed": False, "nics": [NIC]},
        "engine": {"changed": False, "failed": False, "path": "/usr/bin/docker"},
        "rxdm": {"changed": False, "failed": False, "ready": True, "reason": "", "image": "img:" + RXDM,
                 "unit_state": "active", "restarts": 0, "log_tail": ["ready"]},
        "plugin": {"changed": False, "failed": False, "record_path": "/var/lib/tcpxo/.gpudirect-installed",
                   "record": {"tag": PLUGIN}, "missing": [], "modified": [], "ld_so_conf": None},
        "profile": {"changed": False, "failed": False, "present": True, "problems": [], "env": {"A": "1"}},
        "expected_profile": {"A": "1"},
        "expected_profile_error": None,
        "topology": dict(SKIPPED),
        "devices": {"results": [{"item": "/dev/dmabuf_import_helper", "stat": {"exists": True}}]},
        "kernel_modules": {"results": [{"item": "import-helper", "stat": {"exists": False}}]},
        "maintenance": {"changed": False, "failed": False, "findings": []},
        "os_release": {"content": base64.b64encode(b"ID=ubuntu\n").decode(), "encoding": "base64"},
    }
    base.update(results)
    return {"reach": {"ok": True, "msg": ""}, "family": "a3-mega", "zone": "z", "error": None,
            "versions": {"plugin": PLUGIN}, "results": base,
            "settings": {"rxdm_container": "rxdm", "rxdm_unit": "rxdm.service", "profile_file": "/etc/nccl.env",
                         "topology": {}, "device_sources": {}}}


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


def test_checks_left_out_are_none_and_checks_that_could_not_answer_say_why():
    ev = de.shape(raw(gpu=SKIPPED, nic_map=SKIPPED, engine=SKIPPED, plugin=SKIPPED, profile=SKIPPED,
                      maintenance=SKIPPED, os_release={}))
    assert [ev[k] for k in ("gpu", "nic", "rxdm", "plugin", "profile", "maintenance")] == [None] * 6
    assert ev["os_release"] == ""
    # failed_when: false clears `failed`, so a module's own failure shows only as its message
    failed = {"changed": False, "failed": False, "msg": "nvidia-smi: not found"}
    ev = de.shape(raw(gpu=failed, nic_map=failed, plugin=failed, profile=dict(failed, present=False),
                      maintenance=failed))
    assert ev["gpu"] == {"error": "nvidia-smi: not found", "findings": []}
    assert ev["nic"] == {"error": "nvidia-smi: not found", "nics": []}
    assert ev["plugin"] == {"error": "nvidia-smi: not found"}
    assert ev["profile"]["present"] is False and ev["profile"]["error"] == "nvidia-smi: not found"
    assert ev["maintenance"][0]["cause"] == "could not run: nvidia-smi: not found"
    assert ev["maintenance"][0]["severity"] == "warn"


def test_no_nic_to_check_and_no_container_engine_are_named():
    ev = de.shape(raw(nic=SKIPPED))
    assert ev["nic"]["error"] == "the inventory gives this node no GPU NICs (gpu_nics)"
    ev = de.shape(raw(engine={"changed": False, "failed": False, "msg": "neither docker nor podman"}, rxdm=SKIPPED))
    assert ev["rxdm"] == {"container": "rxdm", "unit": "rxdm.service",
                          "error": "no container engine: neither docker nor podman"}
    ev = de.shape(raw(rxdm={"changed": False, "failed": False, "msg": "docker inspect timed out"}))
    assert ev["rxdm"]["error"] == "docker inspect timed out" and ev["rxdm"]["ready"] is False


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
    found = FILTERS["diagnose_node_findings"]({"n0": record}, ["n0"])
    assert [(f["host"], f["component"], f["subject"], f["severity"]) for f in found] == \
        [("n0", "host", "/dev/dmabuf_import_helper", "fail")]
    assert "import-helper" in found[0]["cause"]
