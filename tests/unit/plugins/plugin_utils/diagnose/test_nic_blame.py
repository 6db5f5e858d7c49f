# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NIC localisation: the NIC at fault is named, its healthy peers never are."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.findings import Repairs
from ansible_collections.gpudirect.gcp.plugins.plugin_utils.diagnose.nic_blame import localise

REPAIRS = Repairs()


def addr(host, nic):
    return "10.0.%d.%d" % (nic, host)


def cluster(n, nics=(3, 5), local=None, broken=()):
    """n nodes; local: {(host, nic): [problems]}; broken: paths {(h1, h2, nic)} whose pings fail."""
    local = local or {}
    out = {}
    for h in range(n):
        entries = []
        for nic in nics:
            problems = list(local.get((h, nic), []))
            peers = []
            if not problems:
                for p in range(n):
                    if p == h:
                        continue
                    ok = not local.get((p, nic)) and (h, p, nic) not in broken and (p, h, nic) not in broken
                    peers.append({"address": addr(p, nic), "ok": ok})
            entries.append({"name": "eth%d" % nic, "iface": "eth%d" % nic, "expected_ip": addr(h, nic),
                            "local_problems": problems,
                            "problems": problems + ["ping -M do to x failed" for q in peers if not q["ok"]],
                            "peers": peers})
        out["node%d" % h] = entries
    return out


def keys(findings):
    return sorted((f["host"], f["component"], f["subject"]) for f in findings)


def test_wrong_mtu_on_one_node_names_that_nic_only():
    # node1's eth3 at 1460: node0's pings to it fail, but node0 is not blamed
    found = localise(cluster(2, local={(1, 3): ["mtu 1460, expected 8244"]}), REPAIRS)
    assert keys(found) == [("node1", "nic", "eth3")]
    assert found[0]["cause"] == "mtu 1460, expected 8244"
    assert found[0]["repair"] == "ansible-playbook gpudirect.gcp.site --limit node1 --tags gpu_network"


def test_down_nic_names_that_nic_only():
    found = localise(cluster(3, local={(0, 5): ["down (administratively)"]}), REPAIRS)
    assert keys(found) == [("node0", "nic", "eth5")]


def test_both_faults_together_blame_nobody_else():
    found = localise(cluster(3, local={(1, 3): ["mtu 1460, expected 8244"], (0, 5): ["down (no carrier)"]}), REPAIRS)
    assert keys(found) == [("node0", "nic", "eth5"), ("node1", "nic", "eth3")]


def test_a_nic_that_fails_to_every_healthy_peer_is_blamed_by_majority():
    # node2's eth3 looks fine locally but no path to it works
    found = localise(cluster(4, broken={(2, 0, 3), (2, 1, 3), (2, 3, 3)}), REPAIRS)
    assert keys(found) == [("node2", "nic", "eth3")]
    assert "3 of 3 peers" in found[0]["cause"]
    assert found[0]["repair"].startswith("gcloud compute instances report-host-as-faulty node2")


def test_one_bad_path_of_many_is_a_path_finding_not_two_nic_findings():
    found = localise(cluster(4, broken={(0, 1, 3)}), REPAIRS)
    assert keys(found) == [("node0", "fabric", "eth3 <-> node1 eth3")]
    assert found[0]["severity"] == "fail" and found[0]["repair"] is None


def test_two_nodes_cannot_attribute_a_failed_path():
    found = localise(cluster(2, broken={(0, 1, 5)}), REPAIRS)
    assert keys(found) == [("node0", "fabric", "eth5 <-> node1 eth5")]
    assert "one peer" in found[0]["cause"]


def test_pings_to_unknown_or_unreachable_hosts_are_ignored():
    data = cluster(2)
    data["node0"][0]["peers"].append({"address": "10.9.9.9", "ok": False})
    assert localise(data, REPAIRS) == []


def test_healthy_cluster_has_no_findings():
    assert localise(cluster(5), REPAIRS) == []


def test_old_results_without_local_problems_drop_the_ping_lines():
    data = cluster(2, local={(1, 3): ["mtu 1460, expected 8244"]})
    for entry in data["node1"]:
        entry.pop("local_problems")
    assert keys(localise(data, REPAIRS)) == [("node1", "nic", "eth3")]
