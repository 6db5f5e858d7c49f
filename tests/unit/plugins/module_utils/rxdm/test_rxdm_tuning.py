# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host tuning RxDM's entrypoint applies, read back from a /proc/sys tree and ethtool -c."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils import families
from ansible_collections.gpudirect.gcp.plugins.module_utils.rxdm import rxdm_tuning

TUNING = families.get_family("a3-mega")["rxdm"]["host_tuning"]
IFACES = ["eth1", "eth2"]
# ethtool -c as it prints a gVNIC's settings (trimmed to the lines judged)
COALESCE = "Coalesce parameters for %s:\nAdaptive RX: n/a  TX: n/a\nrx-usecs:\t%s\ntx-usecs:\t%s\n"


def proc_sys(root, values):
    for name, value in values.items():
        path = root.joinpath("proc", "sys", *name.split("."))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value.replace(" ", "\t") + "\n")


def tuned(root):
    values = dict(TUNING["sysctls"])
    for pattern, value in TUNING["nic_sysctls"].items():
        values.update((pattern.format(iface=i), value) for i in IFACES)
    proc_sys(root, values)


def ethtool(answers):
    calls = []

    def run(argv):
        calls.append(argv)
        return answers[argv[-1]]
    return run, calls


def judge(root, answers=None, which=lambda name: "/usr/sbin/" + name):
    run, calls = ethtool(answers or dict((i, (0, COALESCE % (i, 0, 0), "")) for i in IFACES))
    state = rxdm_tuning.gather(TUNING, IFACES, run, which, str(root))
    return rxdm_tuning.problems(TUNING, IFACES, state), calls


def test_a_host_as_the_entrypoint_tunes_it_has_no_problem(tmp_path):
    tuned(tmp_path)
    found, calls = judge(tmp_path)
    assert found == []
    assert calls == [["/usr/sbin/ethtool", "-c", "eth1"], ["/usr/sbin/ethtool", "-c", "eth2"]]


def test_values_an_rxdm_crash_leaves_behind_are_named_in_one_finding(tmp_path):
    tuned(tmp_path)
    # the cleanup's rp_filter 1 on one NIC, and the kernel's default receive buffers
    proc_sys(tmp_path, {"net.ipv4.conf.eth2.rp_filter": "1", "net.ipv4.tcp_rmem": "4096 131072 6291456"})
    found, _calls = judge(tmp_path)
    assert [subject for subject, _cause in found] == ["host tuning"]
    cause = found[0][1]
    assert "net.ipv4.conf.eth2.rp_filter is 1 (RxDM sets 0)" in cause
    assert "net.ipv4.tcp_rmem is 4096 131072 6291456 (RxDM sets 4096 540000 15728640)" in cause
    assert "restart RxDM" in cause and "eth1" not in cause


def test_coalescing_left_on_is_named_per_nic_and_a_nic_without_controls_is_not(tmp_path):
    tuned(tmp_path)
    found, _calls = judge(tmp_path, {"eth1": (0, COALESCE % ("eth1", 20, 50), ""),
                                     "eth2": (94, "", "Cannot get device coalesce settings: Operation not supported")})
    assert found == [("coalescing eth1", "interrupt coalescing rx-usecs 20 (RxDM sets 0), tx-usecs 50 (RxDM sets 0) "
                                         "while RxDM runs; restart RxDM")]


def test_what_cannot_be_read_is_not_judged(tmp_path):
    # no /proc/sys values and no ethtool: nothing known, nothing said
    found, calls = judge(tmp_path, which=lambda name: None)
    assert found == [] and calls == []
