# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""VPC firewall rules judged as Google applies them, per network and kind of traffic."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.plugin_utils.gce import gce_firewalls as FW

NET = "https://www.googleapis.com/compute/v1/projects/p/global/networks/%s"


def nodes(count=2, gpu_nets=("gpu1",)):
    out = []
    for i in range(count):
        nics = [{"name": "nic0", "network": NET % "ctl", "ip": "10.0.0.%d" % (i + 2)}]
        nics += [{"name": "nic%d" % (n + 1), "network": NET % net, "ip": "10.1%d.0.%d" % (n, i + 2)}
                 for n, net in enumerate(gpu_nets)]
        out.append({"nics": nics, "gpu_nics": nics[1:]})
    return out


def rule(name, net, allowed=None, denied=None, ranges=("10.0.0.0/8",), priority=1000, **extra):
    out = {"name": name, "network": NET % net, "direction": "INGRESS", "priority": priority,
           "sourceRanges": list(ranges)}
    if allowed is not None:
        out["allowed"] = allowed
    if denied is not None:
        out["denied"] = denied
    out.update(extra)
    return out


OPEN = [rule("ctl-all", "ctl", [{"IPProtocol": "tcp"}]),
        rule("gpu1-all", "gpu1", [{"IPProtocol": "all"}])]


def test_open_rules_give_no_line():
    assert FW.judge("a3-mega", nodes(), OPEN) == []


def test_gpu_vpc_without_icmp_is_one_line_naming_network_and_traffic():
    rules = [OPEN[0], rule("gpu1-tcp", "gpu1", [{"IPProtocol": "tcp", "ports": ["0-65535"]}])]
    lines = FW.judge("a3-mega", nodes(), rules)
    assert lines == ["firewall of network gpu1: ICMP from the nodes' addresses (10.10.0.2, 10.10.0.3) is blocked, "
                     "no ingress rule allows it; the readiness phase's full-MTU pings needs it: add an ingress rule "
                     "on gpu1 allowing ICMP from the network's subnet ranges"]


def test_only_ssh_on_the_control_network_blocks_mpi():
    rules = [rule("ctl-ssh", "ctl", [{"IPProtocol": "tcp", "ports": ["22"]}]), OPEN[1]]
    lines = FW.judge("a3-mega", nodes(), rules)
    assert len(lines) == 1 and "network ctl: all TCP ports" in lines[0] and "MPI and NCCL bootstrap" in lines[0]


def test_port_ranges_that_together_cover_everything_count():
    rules = [rule("ctl", "ctl", [{"IPProtocol": "tcp", "ports": ["0-1000", "1001-65535"]}]), OPEN[1]]
    assert FW.judge("a3-mega", nodes(), rules) == []


def test_a_deny_of_higher_priority_wins_and_is_named():
    rules = OPEN + [rule("no-ping", "gpu1", denied=[{"IPProtocol": "icmp"}], priority=100)]
    lines = FW.judge("a3-mega", nodes(), rules)
    assert len(lines) == 1 and "ICMP" in lines[0] and "denied by rule no-ping" in lines[0]
    # a deny of lower priority than the allow loses; at equal priority the deny wins
    assert FW.judge("a3-mega", nodes(), OPEN + [rule("late", "gpu1", denied=[{"IPProtocol": "icmp"}],
                                                     priority=2000)]) == []
    assert FW.judge("a3-mega", nodes(), OPEN + [rule("tie", "gpu1", denied=[{"IPProtocol": "icmp"}])])


def test_source_ranges_must_hold_every_node():
    rules = [OPEN[0], rule("gpu1-half", "gpu1", [{"IPProtocol": "all"}], ranges=("10.10.0.2/32",))]
    lines = FW.judge("a3-mega", nodes(), rules)
    assert len(lines) == 2 and all("(10.10.0.3)" in line for line in lines)


def test_disabled_egress_and_other_network_rules_do_not_count():
    rules = [OPEN[0], rule("off", "gpu1", [{"IPProtocol": "all"}], disabled=True),
             rule("out", "gpu1", [{"IPProtocol": "all"}], direction="EGRESS"),
             rule("elsewhere", "gpu2", [{"IPProtocol": "all"}])]
    assert len(FW.judge("a3-mega", nodes(), rules)) == 2


def test_tag_scoped_rules_are_taken_to_apply():
    rules = [rule("ctl", "ctl", [{"IPProtocol": "tcp"}], ranges=(), sourceTags=["gpu"]),
             rule("gpu", "gpu1", [{"IPProtocol": "all"}], targetTags=["gpu"])]
    assert FW.judge("a3-mega", nodes(), rules) == []


def test_rdma_vpcs_are_not_judged_but_the_control_network_is():
    assert FW.judge("a4", nodes(), []) == [line for line in FW.judge("a4", nodes(), []) if "network ctl" in line]
    assert len(FW.judge("a4", nodes(), [])) == 2
