# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The diagnosis of a cluster: one finding per cause, each with its repair."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os

import ansible.template
import pytest
from ansible.errors import AnsibleFilterError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from ansible_collections.gpudirect.gcp.plugins.filter.diagnose import FilterModule
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import node_checks
from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import diagnose, node_checks
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import Repairs, summary

FILTERS = FilterModule().filters()
# ansible-core 2.19 trusts no string unless told; older releases trust every plain string
trust_as_template = getattr(ansible.template, "trust_as_template", lambda text: text)
FAM = families.get_family("a3-mega")
LIB = FAM["plugin"]["lib_dir"]
PLUGIN_TAG = FAM["plugin"]["version"]
RXDM_TAG = FAM["rxdm"]["version"]
# a healthy node runs the driver the family's plugin was qualified with
DRIVER = families.plugin_qualification("a3-mega")["driver"]
IFACE_VAR = sorted(FAM["nccl_env_ifaces"])[0]
REPAIRS = Repairs(args=["-i", "inv.yml"], zones={"n0": "us-central1-a"})


def healthy(host, n, nics=(1, 2)):
    idx = int(host[1:])
    env = {"LD_LIBRARY_PATH": LIB, IFACE_VAR: ",".join("eth%d" % i for i in nics), "NCCL_DEBUG": "WARN"}
    return {
        "reach": {"ok": True, "msg": ""},
        "family": "a3-mega", "zone": "us-central1-a", "error": None,
        "nic": {"error": None, "nics": [
            {"name": "eth%d" % i, "iface": "eth%d" % i, "expected_ip": "10.%d.0.%d" % (i, idx), "local_problems": [],
             "problems": [], "peers": [{"address": "10.%d.0.%d" % (i, p), "ok": True} for p in range(n) if p != idx]}
            for i in nics]},
        "rxdm": {"container": "receive-datapath-manager", "unit": "receive-datapath-manager.service", "error": None,
                 "ready": True, "reason": "", "image": "registry/tcpgpudmarxd-dev:%s" % RXDM_TAG,
                 "unit_state": "active", "restarts": 0, "log_tail": []},
        "plugin": {"error": None, "record_path": FAM["plugin"]["install_dir"] + "/.gpudirect-installed",
                   "record": {"image": "img", "tag": PLUGIN_TAG, "digest": None}, "missing": [], "modified": [],
                   "ld_so_conf": None},
        "profile": {"path": "/etc/nccl/nccl.env", "present": True, "error": None, "problems": [], "env": env,
                    "expected": dict(env), "expected_error": None},
        "devices": [{"path": "/dev/dmabuf_import_helper", "source": "/dev/dmabuf_import_helper", "present": True}],
        "kernel_modules": [{"name": "import-helper", "loaded": True}],
        "versions": {"driver": DRIVER, "kernel": "6.1.0", "cuda": None, "nccl": None, "plugin": PLUGIN_TAG,
                     "rxdm": RXDM_TAG},
    }


def cluster(n=4):
    hosts = ["n%d" % i for i in range(n)]
    return hosts, dict((h, healthy(h, n)) for h in hosts)


def keys(items, severity=None):
    return sorted((f["host"], f["component"], f["subject"]) for f in items
                  if severity is None or f["severity"] == severity)


def test_healthy_cluster_has_no_findings_and_every_node_passes():
    hosts, ev = cluster()
    found = diagnose.node_findings(ev, hosts, REPAIRS)
    assert found == []
    assert diagnose.passing(found, hosts) == hosts


def test_the_seeded_faults_give_exactly_their_findings():
    hosts, ev = cluster(5)
    # n0: eth2 at the wrong MTU, eth1 down; its peers' pings to those fail
    ev["n0"]["nic"]["nics"][1]["local_problems"] = ["mtu 1460, expected 8244"]
    ev["n0"]["nic"]["nics"][1]["peers"] = []
    ev["n0"]["nic"]["nics"][0]["local_problems"] = ["down (administratively)"]
    ev["n0"]["nic"]["nics"][0]["peers"] = []
    for h in hosts[1:]:
        for nic in ev[h]["nic"]["nics"]:
            for ping in nic["peers"]:
                if ping["address"].endswith(".0.0"):
                    ping["ok"] = False
    # n1: RxDM stopped, plugin library removed, profile naming eth9
    ev["n1"]["rxdm"].update(ready=False, reason="container receive-datapath-manager is not running",
                            unit_state="inactive", image=None)
    ev["n1"]["plugin"]["missing"] = [LIB + "/libnccl-net.so"]
    ev["n1"]["profile"]["env"][IFACE_VAR] = "eth1,eth9"
    ev["n1"]["profile"]["problems"] = [
        "%s names interface eth9, which this node does not have (it has eth0, eth1, eth2)" % IFACE_VAR,
        "LD_LIBRARY_PATH: %s has no libnccl-net.so (is the plugin installed?)" % LIB]
    found = diagnose.node_findings(ev, hosts, REPAIRS)
    assert keys(found) == [
        ("n0", "nic", "eth1"), ("n0", "nic", "eth2"),
        ("n1", "nccl_plugin", LIB + "/libnccl-net.so"), ("n1", "nccl_profile", IFACE_VAR),
        ("n1", "rxdm", "receive-datapath-manager")]
    assert diagnose.passing(found, hosts) == ["n2", "n3", "n4"]
    by = dict(((f["host"], f["component"]), f) for f in found)
    assert by[("n1", "rxdm")]["repair"] == "ansible-playbook gpudirect.gcp.site -i inv.yml --limit n1 --tags rxdm"
    assert "unit receive-datapath-manager.service is inactive" in by[("n1", "rxdm")]["cause"]
    assert by[("n1", "nccl_plugin")]["repair"].endswith("--limit n1 --tags nccl_plugin")
    assert by[("n1", "nccl_profile")]["repair"].endswith("--limit n1 --tags nccl_profile")
    assert "eth9" in by[("n1", "nccl_profile")]["cause"]


def test_unreachable_node_is_a_finding_and_the_others_finish():
    hosts, ev = cluster(3)
    ev["n2"] = {"reach": {"ok": False, "msg": "Failed to connect to the host via ssh: timed out\nmore"}}
    del ev["n1"]
    found = diagnose.node_findings(ev, hosts, REPAIRS)
    assert keys(found) == [("n1", "host", "connection"), ("n2", "host", "connection")]
    assert found[1]["cause"] == "unreachable: Failed to connect to the host via ssh: timed out"
    assert diagnose.passing(found, hosts) == ["n0"]


def test_a_missing_nic_explains_the_profile_and_its_drift():
    hosts, ev = cluster(3)
    ev["n1"]["nic"]["nics"][1].update(iface=None, name="aa:bb", local_problems=["no interface with MAC aa:bb"],
                                      peers=[])
    ev["n1"]["profile"]["problems"] = ["%s names interface eth2, which this node does not have" % IFACE_VAR]
    ev["n1"]["profile"]["expected"][IFACE_VAR] = "eth1"
    assert keys(diagnose.node_findings(ev, hosts, REPAIRS)) == [("n1", "nic", "aa:bb")]


def test_profile_drift_names_each_variable():
    hosts, ev = cluster(2)
    ev["n0"]["profile"]["env"]["NCCL_DEBUG"] = "INFO"
    ev["n0"]["profile"]["env"]["NCCL_EXTRA"] = "1"
    del ev["n0"]["profile"]["env"]["LD_LIBRARY_PATH"]
    found = diagnose.node_findings(ev, hosts, REPAIRS)
    assert keys(found) == [("n0", "nccl_profile", "/etc/nccl/nccl.env")]
    cause = found[0]["cause"]
    assert "NCCL_DEBUG=INFO (expected WARN)" in cause
    assert "NCCL_EXTRA=1 is not in the rendered profile" in cause
    assert "LD_LIBRARY_PATH is missing (expected %s)" % LIB in cause


def test_missing_profile_is_one_finding():
    hosts, ev = cluster(2)
    ev["n1"]["profile"] = {"path": "/etc/nccl/nccl.env", "present": False, "error": "No such file or directory",
                           "problems": [], "env": {}, "expected": {"A": "1"}, "expected_error": None}
    assert keys(diagnose.node_findings(ev, hosts, REPAIRS)) == [("n1", "nccl_profile", "/etc/nccl/nccl.env")]


def test_a_cos_node_is_one_guest_os_finding_and_no_site_repair():
    hosts, ev = cluster(2)
    ev["n1"]["os_release"] = 'NAME="Container-Optimized OS"\nID=cos\nVERSION_ID=121\n'
    ev["n1"]["profile"]["present"] = False
    ev["n1"]["profile"]["error"] = "No such file or directory"
    found = diagnose.node_findings(ev, hosts, REPAIRS)
    assert keys(found) == [("n1", "host", "guest OS"), ("n1", "nccl_profile", "/etc/nccl/nccl.env")]
    guest = next(f for f in found if f["subject"] == "guest OS")
    assert guest["severity"] == "fail" and "read-only root" in guest["cause"]
    assert guest["repair"].startswith("recreate the VM from another image: use Google's Ubuntu")
    # site.yml refuses the node, so it is never offered as the profile's repair
    assert next(f for f in found if f["component"] == "nccl_profile")["repair"] is None
    ev["n1"]["os_release"] = "ID=ubuntu\nVERSION_ID=22.04\n"
    assert keys(diagnose.node_findings(ev, hosts, REPAIRS)) == [("n1", "nccl_profile", "/etc/nccl/nccl.env")]


def test_an_unusable_install_record_is_the_agents_finding_too():
    from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health
    hosts, ev = cluster(2)
    ev["n1"]["plugin"].update(record=None, record_problem="not JSON (Expecting value: line 1 column 1 (char 0))")
    found = [f for f in diagnose.node_findings(ev, hosts, REPAIRS) if f["component"] == "nccl_plugin"]
    assert [(f["subject"], f["cause"]) for f in found] == [
        (ev["n1"]["plugin"]["record_path"], "install record unusable: not JSON (Expecting value: line 1 column 1 "
         "(char 0)); the nccl_plugin role rewrites it")]
    agent = [node_health.finding("nccl_plugin", s, "fail", c)
             for s, c in node_checks.plugin_state.problems(ev["n1"]["plugin"], "tcpxo")]
    assert [(f["subject"], f["cause"]) for f in agent] == [(f["subject"], f["cause"]) for f in found]


def test_maintenance_due_is_a_warning_whose_repair_starts_it_now():
    hosts, ev = cluster(2)
    ev["n0"]["maintenance"] = [{"component": "host", "subject": "maintenance", "severity": "warn",
                                "cause": "scheduled host maintenance in 3.0 h", "can_reschedule": True}]
    ev["n1"]["maintenance"] = [{"component": "host", "subject": "maintenance", "severity": "fail",
                                "cause": "host maintenance under way", "can_reschedule": False}]
    found = diagnose.node_findings(ev, hosts, REPAIRS)
    assert [(f["host"], f["severity"], f["repair"]) for f in found if f["subject"] == "maintenance"] == [
        ("n1", "fail", None),
        ("n0", "warn", "gcloud compute instances perform-maintenance n0 --zone=us-central1-a")]
    assert diagnose.passing(found, hosts) == ["n0"]


def test_rxdm_findings_are_the_agents_for_the_same_state():
    from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health
    from ansible_collections.gpudirect.gcp.plugins.module_utils.rxdm import rxdm_readiness
    hosts, ev = cluster(2)
    ev["n1"]["rxdm"].update(ready=False, reason="container receive-datapath-manager is not running",
                            unit_state="failed", restarts=4, log_tail=["", "tcpgpudmarxd: no GPU 3"])
    found = [(f["subject"], f["severity"], f["cause"]) for f in diagnose.node_findings(ev, hosts, REPAIRS)
             if f["component"] == "rxdm"]
    state = ev["n1"]["rxdm"]
    agent = [node_health.finding("rxdm", s, sev, c) for sev, s, c in
             rxdm_readiness.problems(state, state["container"], state["unit"], 0)]
    assert found == [(f["subject"], f["severity"], f["cause"]) for f in agent] and len(found) == 2
    assert found[0][2].endswith("; unit receive-datapath-manager.service is failed; last log line: tcpgpudmarxd: "
                                "no GPU 3")


def test_rxdm_image_that_does_not_pair_with_the_plugin():
    hosts, ev = cluster(2)
    # v1.0.21 is qualified with plugin v1.0.15, not with the v1.0.17 the node has
    ev["n0"]["rxdm"]["image"] = "registry/tcpgpudmarxd-dev:v1.0.21"
    ev["n0"]["versions"]["rxdm"] = "v1.0.21"
    found = diagnose.node_findings(ev, hosts, REPAIRS)
    # the RxDM finding explains the version skew: one finding
    assert keys(found) == [("n0", "rxdm", "registry/tcpgpudmarxd-dev:v1.0.21")]
    assert "does not pair" in found[0]["cause"] and found[0]["severity"] == "fail"


def test_rxdm_image_of_an_unlisted_newer_release_is_a_warning():
    hosts, ev = cluster(2)
    ev["n0"]["rxdm"]["image"] = "registry/tcpgpudmarxd-dev:v1.0.24"
    ev["n0"]["versions"]["rxdm"] = "v1.0.24"
    found = [f for f in diagnose.node_findings(ev, hosts, REPAIRS) if f["component"] == "rxdm"]
    assert [(f["host"], f["severity"]) for f in found] == [("n0", "warn")]
    assert "accepted unqualified" in found[0]["cause"]


def test_rxdm_restarts_warn():
    hosts, ev = cluster(2)
    ev["n1"]["rxdm"]["restarts"] = 4
    found = diagnose.node_findings(ev, hosts, REPAIRS, max_restarts=1)
    assert [(f["host"], f["severity"]) for f in found] == [("n1", "warn")]
    assert diagnose.passing(found, hosts) == hosts


def test_modified_plugin_file_and_missing_record():
    hosts, ev = cluster(2)
    ev["n0"]["plugin"]["modified"] = [LIB + "/libnccl.so.2"]
    ev["n1"]["plugin"]["record"] = None
    found = diagnose.node_findings(ev, hosts, REPAIRS)
    assert ("n0", "nccl_plugin", LIB + "/libnccl.so.2") in keys(found)
    assert ("n1", "nccl_plugin", ev["n1"]["plugin"]["record_path"]) in keys(found)


def test_gib_without_record_is_fine_but_linker_registration_is_checked():
    ev = {"family": "a4", "plugin": {"error": None, "record_path": "/usr/local/gib/.gpudirect-installed",
                                     "record": None, "missing": [], "modified": [],
                                     "ld_so_conf": {"path": "/etc/ld.so.conf.d/000_nccl-gib.conf",
                                                    "lib_dir": "/usr/local/gib/lib64", "present": True,
                                                    "registered": False}}}
    found = node_checks.plugin("g0", ev, REPAIRS)
    assert keys(found) == [("g0", "nccl_plugin", "/etc/ld.so.conf.d/000_nccl-gib.conf")]
    assert "does not name /usr/local/gib/lib64" in found[0]["cause"]


def test_missing_device_names_the_unloaded_module():
    hosts, ev = cluster(2)
    ev["n1"]["devices"][0].update(present=False)
    ev["n1"]["kernel_modules"][0]["loaded"] = False
    found = diagnose.node_findings(ev, hosts, REPAIRS)
    assert keys(found) == [("n1", "host", "/dev/dmabuf_import_helper")]
    assert "import-helper" in found[0]["cause"] and found[0]["repair"].endswith("--tags gpu_host")


def test_version_skew_names_the_odd_node_and_pins_name_every_other():
    hosts, ev = cluster(4)
    ev["n3"]["versions"]["driver"] = "535.0"
    ev["n2"]["zone"] = "us-central1-b"
    found = diagnose.node_findings(ev, hosts, REPAIRS)
    # the odd node is also outside the driver its plugin was qualified with
    assert keys(found) == [("n2", "host", "zone"), ("n3", "host", "driver"), ("n3", "host", "driver version")]
    assert "3 of 4 nodes run %s" % DRIVER in [f for f in found if f["subject"] == "driver version"][0]["cause"]
    pinned = diagnose.node_findings(cluster(3)[1], cluster(3)[0], REPAIRS, pinned={"kernel": "6.2.0"})
    assert [(f["host"], f["severity"], f["subject"]) for f in pinned] == [
        ("n0", "warn", "kernel version"), ("n1", "warn", "kernel version"), ("n2", "warn", "kernel version")]


def test_no_majority_names_every_node():
    hosts, ev = cluster(2)
    ev["n1"]["versions"]["driver"] = "535.0"
    found = diagnose.node_findings(ev, hosts, REPAIRS)
    assert keys(found) == [("n0", "host", "driver version"), ("n1", "host", "driver"), ("n1", "host", "driver version")]
    assert "no majority" in found[0]["cause"]


def test_a_job_that_started_after_the_node_checks_is_named_and_its_node_not_counted_as_tested():
    from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose import diagnose_busy
    late = diagnose_busy.findings({"n0": {"state": "idle"},
                                   "n1": {"state": "busy", "reasons": ["GPU 0: pid 7 python3 (9 MiB)"]}},
                                  ["n0", "n1"])
    passed = {"verdict": "pass", "collectives": [{"collective": "all_gather", "status": "pass"}]}
    found = diagnose.all_findings([], passed, ["n0", "n1"], ["n0", "n1"], REPAIRS, late_busy=late)
    # n1 is named; with n0 alone left the fabric was not tested, never "2 nodes passed"
    assert [(f["host"], f["component"], f["subject"], f["severity"]) for f in found] == [
        ("n1", "gpu", "workload", "warn"), (None, "fabric", "nccl-tests", "warn")]
    assert "1 of 2 node(s)" in found[1]["cause"]
    # tested anyway: named, and still counted
    anyway = diagnose.all_findings([], passed, ["n0", "n1"], ["n0", "n1"], REPAIRS, late_busy=late, test_busy=True)
    assert keys(anyway) == [("n1", "gpu", "workload")]
    # a node the node checks named already is not named twice, and a node outside the test is not added
    twice = diagnose.all_findings(late, passed, ["n0"], ["n0", "n1"], REPAIRS, late_busy=late, minimum=1)
    assert keys(twice) == [("n1", "gpu", "workload")]


def test_fabric_findings_name_the_slow_node_or_say_why_not_run():
    result = {"verdict": "fail", "bad_nodes": ["n2"], "node_table": {"n2": {"reason": "failed with every partner"}},
              "collectives": [{"collective": "all_gather", "status": "fail", "reasons": ["bad nodes: n2"]}]}
    found = diagnose.all_findings([], result, ["n1", "n2", "n3"], ["n0", "n1", "n2", "n3"], REPAIRS)
    assert keys(found) == [("n2", "fabric", "busbw")]
    assert found[0]["repair"].startswith("gcloud compute instances report-host-as-faulty n2")
    few = diagnose.all_findings([], {}, ["n1"], ["n0", "n1"], REPAIRS)
    assert [(f["host"], f["severity"]) for f in few] == [(None, "warn")]
    assert "1 of 2 node(s) passed" in few[0]["cause"]
    check = diagnose.all_findings([], {}, [], ["n0"], REPAIRS, not_run="not run in check mode")
    assert check[0]["cause"] == "not run in check mode"
    broken = diagnose.all_findings([], {"failed": True, "msg": "mpirun: not found\nx"}, ["n0", "n1"], ["n0", "n1"],
                                   REPAIRS)
    assert broken[0]["severity"] == "fail" and broken[0]["cause"].endswith("mpirun: not found")
    cluster_fail = diagnose.all_findings([], {"collectives": [{"collective": "all_gather", "status": "fail",
                                                               "reasons": ["below 90%"]}]},
                                         ["n0", "n1"], ["n0", "n1"], REPAIRS)
    assert keys(cluster_fail) == [(None, "fabric", "all_gather")]


def test_a_blamed_sub_block_path_is_one_cluster_finding_and_no_node_is_blamed():
    link = {"part": ["link", ["c/b0/s0", "c/b1/s1"]], "what": "path between sub-blocks c/b0/s0 and c/b1/s1",
            "runs": ["n0+n6"]}
    result = {"verdict": "fail", "bad_nodes": [], "node_table": {},
              "collectives": [{"collective": "all_gather", "status": "fail", "reasons": ["failing pairs: n0+n6"]}],
              "pairwise": {"rounds": [[{"pair": ["n6", "n0"], "ok": False, "busbw_gbps": {"all_gather": 40.25}}]],
                           "fabric": {"bad": [link], "suspect": [{"what": "sub-block c/b0/s2 uplink or node n4"}]}}}
    found = diagnose.all_findings([], result, ["n0", "n6"], ["n0", "n6"], REPAIRS)
    assert keys(found) == [(None, "fabric", "path between sub-blocks c/b0/s0 and c/b1/s1"),
                           (None, "fabric", "sub-block c/b0/s2 uplink or node n4")]
    assert [f["severity"] for f in found] == ["fail", "warn"]
    assert "n0+n6 (40.2 GB/s all_gather)" in found[0]["cause"] and found[0]["repair"] is None


def test_placement_the_node_disagrees_with_or_cannot_read_is_a_topology_warning():
    hosts, ev = cluster(3)
    place = {"cluster": "c", "block": "b1", "subblock": "s1", "host": "h0"}
    ev["n0"]["topology"] = {"error": None, "expected": place, "observed": place, "source": "physical_host_topology",
                            "mismatches": []}
    ev["n1"]["topology"] = {"error": None, "expected": place, "observed": dict(place, block="b2"),
                            "mismatches": ["block: inventory says b1, node says b2"]}
    ev["n2"]["topology"] = {"error": "cannot reach http://metadata.google.internal/...: timed out", "expected": {},
                            "observed": {}, "mismatches": []}
    found = diagnose.node_findings(ev, hosts, REPAIRS)
    assert keys(found) == [("n1", "topology", "placement"), ("n2", "topology", "placement")]
    assert all(f["severity"] == "warn" for f in found)
    assert "block: inventory says b1, node says b2" in found[0]["cause"]
    assert diagnose.passing(found, hosts) == hosts
    ev["n0"]["topology"]["observed"] = {}
    assert keys(diagnose.node_findings({"n0": ev["n0"]}, ["n0"], REPAIRS)) == [("n0", "topology", "placement")]


def test_summary_and_order():
    items = [{"host": None, "component": "fabric", "subject": "x", "severity": "warn", "cause": "", "repair": None},
             {"host": "n1", "component": "nic", "subject": "eth1", "severity": "fail", "cause": "", "repair": None}]
    s = summary(items, ["n0", "n1"])
    assert s == {"fail": 1, "warn": 1, "hosts": 2, "failed_hosts": ["n1"], "clean_hosts": ["n0"], "verdict": "fail",
                 "place_blame": []}
    assert diagnose.line(items[1]) == "FAIL n1 nic eth1: "


def test_filters_wrap_node_text_as_unsafe_and_refuse_bad_input():
    hosts, ev = cluster(2)
    ev["n0"]["rxdm"].update(ready=False, reason=trust_as_template("{{ 6 * 7 }}"))
    templar = Templar(loader=DataLoader())
    # the same text as plain str would be evaluated before 2.19 (where plain str is trusted): the filter's
    # output must not be, on any release
    if not hasattr(ansible.template, "trust_as_template"):
        assert str(templar.template(diagnose.node_findings(ev, hosts, REPAIRS)[0]["cause"])).startswith("42")
    found = FILTERS["_diagnose_node_findings"](ev, hosts)
    assert templar.template(found[0]["cause"]).startswith("{{ 6 * 7 }}")
    with pytest.raises(AnsibleFilterError, match="expects {host: diagnose_evidence}"):
        FILTERS["_diagnose_node_findings"]([], hosts)
    with pytest.raises(AnsibleFilterError, match="hosts must be a list"):
        FILTERS["_diagnose_passing"]([], "n0")
    with pytest.raises(AnsibleFilterError, match="repair_args must be a list"):
        FILTERS["_diagnose_node_findings"](ev, hosts, repair_args="-i x")
    # node data of the wrong shape is a finding on that node, not an error of the filter
    found = FILTERS["_diagnose_node_findings"]({"n0": {"reach": {"ok": True}, "nic": {"nics": [42]}}}, ["n0"])
    assert [(f["host"], f["subject"]) for f in found] == [("n0", "diagnose")]
    assert found[0]["cause"].startswith("n0: diagnose evidence is malformed")
    with pytest.raises(AnsibleFilterError, match="expects a finding"):
        FILTERS["_diagnose_line"]({"host": "x"})


def test_evidence_is_not_changed():
    hosts, ev = cluster(3)
    before = copy.deepcopy(ev)
    diagnose.node_findings(ev, hosts, REPAIRS)
    assert ev == before


def test_a_slow_pair_nothing_else_explains_is_named_in_a_finding():
    topo = {"n0": {"cluster": "c", "block": "b0", "subblock": "s0", "host": "h0"},
            "n1": {"cluster": "c", "block": "b0", "subblock": "s1", "host": "h1"},
            "n2": {"cluster": "c", "block": "b0", "subblock": "s1", "host": "h2"},
            "n3": {"cluster": "c", "block": "b1", "subblock": "s0", "host": "h3"}}
    rounds = [[{"pair": ["n0", "n1"], "ok": False, "reasons": ["busbw 40.0 < 169.2"], "busbw_gbps": {"all_gather": 40.0}},
               {"pair": ["n2", "n3"], "ok": False, "reasons": ["exit 1"], "busbw_gbps": {}},
               {"pair": ["n1", "n2"], "ok": True, "busbw_gbps": {"all_gather": 180.0}}]]
    result = {"verdict": "fail", "bad_nodes": ["n3"], "node_table": {"n3": {"reason": "failed with every partner"}},
              "topology": topo, "collectives": [{"collective": "all_gather", "status": "fail", "required_gbps": 169.2,
                                                 "reasons": ["bad nodes: n3"]}],
              "pairwise": {"rounds": rounds, "fabric": {"bad": [], "suspect": []}}}
    found = diagnose.all_findings([], result, ["n0", "n1", "n2", "n3"], ["n0", "n1", "n2", "n3"], REPAIRS)
    # n2+n3 is explained by the bad node n3; n0+n1 by nothing, so it is named on its own
    assert [(f["host"], f["component"], f["subject"]) for f in found] == [
        ("n3", "fabric", "busbw"), (None, "fabric", "pair n0 + n1")]
    pair = found[1]
    assert pair["severity"] == "warn" and pair["repair"] is None
    assert "40.0 GB/s all_gather" in pair["cause"] and "bar 169.2" in pair["cause"]
    assert "c/b0/s0" in pair["cause"] and "c/b0/s1" in pair["cause"]


def test_many_slow_pairs_are_named_up_to_a_bound_and_counted_past_it():
    names = ["n%02d" % i for i in range(26)]
    rounds = [[{"pair": [names[i], names[i + 13]], "ok": False, "reasons": ["slow"],
                "busbw_gbps": {"all_gather": 10.0 + i}} for i in range(13)]]
    result = {"verdict": "fail", "bad_nodes": [], "node_table": {},
              "collectives": [{"collective": "all_gather", "status": "fail", "required_gbps": 100.0}],
              "pairwise": {"rounds": rounds, "fabric": {"bad": [], "suspect": []}}}
    found = diagnose.all_findings([], result, names, names, REPAIRS)
    pairs = [f for f in found if f["subject"].startswith("pair ")]
    assert len(pairs) == 10 and pairs[0]["subject"] == "pair n00 + n13"
    more = [f for f in found if f["subject"] == "3 more slow pairs"]
    assert len(more) == 1 and "n12 + n25" in more[0]["cause"]


def test_only_hosts_whose_repair_is_googles_host_repair_are_reported_once_each():
    from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import finding
    items = [
        finding("n2", "fabric", "busbw", "fail", "busbw 12 GB/s below 80% of the baseline",
                REPAIRS.report_host("n2", "slow")),
        finding("n2", "nic", "eth3", "fail", "reaches 0 of 4 peers", REPAIRS.report_host("n2", "nic")),
        finding("n0", "nic", "eth1", "fail", "mtu 1460, expected 8244", REPAIRS.role("n0", "nic")),
        finding("n1", "fabric", "busbw", "warn", "slow pair", REPAIRS.report_host("n1", "slow")),
        finding(None, "fabric", "sub-block sb1", "fail", "uplink slow", None),
    ]
    got = FILTERS["_diagnose_faulty_hosts"](items)
    # one entry for n2, with its first finding in report order (nic before fabric); warnings and cluster findings
    # never report a host; a repair by a role is never a host report
    assert got == [{"host": "n2", "behavior": "PERFORMANCE", "description": "nic eth3: reaches 0 of 4 peers"}]
    assert FILTERS["_diagnose_faulty_hosts"]([]) == []
    with pytest.raises(AnsibleFilterError, match="diagnose_faulty_hosts: expects a list"):
        FILTERS["_diagnose_faulty_hosts"]("n2")


def test_a_gpu_that_fell_off_the_bus_is_reported_as_an_unrecoverable_gpu_error():
    # the behavior comes from the finding (plugin_utils/gce/faulty_host.py), in the report and the repair line
    gpu = {"component": "gpu", "subject": "GPU 3", "severity": "fail", "rung": "report_host",
           "cause": "Xid 79: the GPU has fallen off the bus"}
    line = node_checks.gpu("n4", {"gpu": {"findings": [gpu]}}, REPAIRS)[0]
    assert "--fault-reasons=behavior=UNRECOVERABLE_GPU_ERROR,description=" in line["repair"]
    assert FILTERS["_diagnose_faulty_hosts"]([line])[0]["behavior"] == "UNRECOVERABLE_GPU_ERROR"
    slow = node_checks.gpu("n5", {"gpu": {"findings": [dict(gpu, cause="clocks held back by power")]}}, REPAIRS)[0]
    assert "behavior=PERFORMANCE," in slow["repair"]


def _agent_profile(tmp_path, text, ifaces=("eth1", "eth2")):
    from ansible_collections.gpudirect.gcp.plugins.module_utils.health import node_health
    for name in ifaces:
        (tmp_path / "sys/class/net" / name).mkdir(parents=True)
    (tmp_path / FAM["plugin"]["lib_dir"].lstrip("/")).mkdir(parents=True)
    (tmp_path / FAM["plugin"]["lib_dir"].lstrip("/") / "libnccl-net.so").write_text("")
    if text is not None:
        (tmp_path / "etc/nccl").mkdir(parents=True)
        (tmp_path / "etc/nccl/nccl.env").write_text(text)
    part = {"path": "/etc/nccl/nccl.env", "iface_vars": sorted(FAM["nccl_env_ifaces"]),
            "binding_vars": sorted(FAM["nccl_env_bindings"]), "plugin_lib_dir": LIB,
            "plugin_library": "libnccl-net.so"}
    return node_health.check_profile(part, str(tmp_path))


@pytest.mark.parametrize("text", [None, "export LD_LIBRARY_PATH=%s\n%s=eth1,eth9\n" % (LIB, IFACE_VAR),
                                  "LD_LIBRARY_PATH=/usr/lib\n"])
def test_profile_findings_are_the_agents_for_the_same_file(tmp_path, text):
    from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl import nccl_env_file
    state, agent = _agent_profile(tmp_path, text)
    hosts, ev = cluster(2)
    if text is None:
        ev["n1"]["profile"].update(present=False, error="No such file or directory", problems=[], env={})
    else:
        env = nccl_env_file.parse_profile(text)[0]
        problems = nccl_env_file.check_env(env, sorted(FAM["nccl_env_ifaces"]), sorted(FAM["nccl_env_bindings"]),
                                           ["eth1", "eth2"], LIB, "libnccl-net.so",
                                           path_exists=lambda p: os.path.exists(str(tmp_path) + p))
        ev["n1"]["profile"].update(problems=problems, env=env, expected=env)
    found = [(f["component"], f["subject"], f["severity"], f["cause"])
             for f in diagnose.node_findings(ev, hosts, REPAIRS) if f["host"] == "n1"]
    assert found == [(f["component"], f["subject"], f["severity"], f["cause"]) for f in agent] and found
    assert state["consistent"] is False


def test_nic_findings_are_the_agents_for_the_same_interfaces():
    from ansible_collections.gpudirect.gcp.plugins.module_utils.nic import nic_ready
    interfaces = {"eth1": {"mtu": 1460, "admin_up": True, "operstate": "up", "ipv4": ["10.1.0.1"]},
                  "eth2": {"mtu": 8244, "admin_up": False, "operstate": "down", "ipv4": []}}
    expected = [{"nic": "gpu0", "name": "eth1", "mtu": 8244, "ip": "10.1.0.1"},
                {"nic": "gpu1", "name": "eth2", "mtu": 8244, "ip": "10.2.0.1"},
                {"nic": "gpu2", "mac": "42:01:0a:03:00:01", "mtu": 8244}]
    results = [nic_ready.check_nic(item, interfaces) for item in expected]
    agent = [("nic",) + item for item in map(nic_ready.own_finding, results) if item]
    hosts, ev = cluster(2)
    ev["n1"]["nic"]["nics"] = [dict(r, local_problems=list(r["problems"])) for r in results]
    found = [(f["component"], f["subject"], f["cause"]) for f in diagnose.node_findings(ev, hosts, REPAIRS)
             if f["host"] == "n1" and f["component"] == "nic"]
    assert found == agent and len(found) == 3
    # a NIC no interface matched is named as the inventory names it
    assert found[2] == ("nic", "gpu2", "no interface with MAC 42:01:0a:03:00:01")


def test_too_few_passing_nodes_are_counted_from_the_node_checks():
    # the role fills the group the NCCL tests run on only when enough nodes passed: with one of two
    # passing, the tests get no node at all, and the line must still count the one that passed
    n1_fails = [{"host": "n1", "component": "nic", "subject": "eth1", "severity": "fail", "cause": "down",
                 "repair": None}]
    found = diagnose.all_findings(n1_fails, {}, [], ["n0", "n1"], REPAIRS)
    assert found[-1]["cause"].startswith("not run: 1 of 2 node(s) passed the node checks (n0);")
    none = diagnose.all_findings(n1_fails + [dict(n1_fails[0], host="n0")], {}, [], ["n0", "n1"], REPAIRS)
    assert none[-1]["cause"].startswith("not run: 0 of 2 node(s) passed the node checks (none);")


def test_the_nccl_environment_the_tests_really_used_is_named_on_the_variable():
    result = {"verdict": "pass", "collectives": [{"collective": "all_gather", "status": "pass"}],
              "nccl_env": {"plugin": "GCP env plugin", "effective": {}, "conflicts": [
                  {"severity": "warn", "subject": "NCCL_BUFFSIZE",
                   "cause": "the profile sets 4194304, NCCL used 8388608: the environment plugin GCP env plugin won"}]}}
    found = diagnose.all_findings([], result, ["n0", "n1"], ["n0", "n1"], REPAIRS)
    assert [(f["host"], f["component"], f["subject"], f["severity"]) for f in found] == [
        (None, "nccl_profile", "NCCL_BUFFSIZE", "warn")]
    assert found[0]["cause"].startswith("in the NCCL tests' runs: the profile sets 4194304")
