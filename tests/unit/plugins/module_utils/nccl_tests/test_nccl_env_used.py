# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NCCL environment as NCCL used it: its ENV lines against what the run passed.

The lines are in the form real NCCL prints them: "NCCL_IB_DISABLE set by environment to 0." and
"NET/IB : No device found." (NVIDIA/nccl issues 451 and 941), and the environment plugin's
"ENV/Plugin: Using <name> (v1)" (NCCL's src/plugin/env)."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpudirect.gcp.plugins.module_utils.nccl_tests import nccl_env_used, nccl_parse

HEAD = "a3m-0:4021:4021 [0] NCCL INFO "


def output(*lines):
    return "".join(HEAD + line + "\n" for line in lines) + "# Avg bus bandwidth    : 10.5\n"


def used(family, text, passed):
    return nccl_env_used.used(family, nccl_parse.parse(text, collective="all_gather"), passed)


def test_values_nccl_used_as_passed_come_from_the_profile():
    text = output("NCCL_SOCKET_IFNAME set by environment to enp0s12.", "NCCL_DEBUG set by environment to INFO.",
                  "NCCL_IB_DISABLE set by environment to 0.")
    got = used("a3-mega", text, {"NCCL_SOCKET_IFNAME": "enp0s12", "NCCL_DEBUG": "INFO"})
    assert got["effective"]["NCCL_SOCKET_IFNAME"] == {"value": "enp0s12", "source": "profile", "passed": "enp0s12"}
    assert got["effective"]["NCCL_DEBUG"]["source"] == "nccl-tests run"
    # read by NCCL, never passed: /etc/nccl.conf or the launcher's environment
    assert got["effective"]["NCCL_IB_DISABLE"]["source"] == "not passed"
    assert got["plugin"] is None and got["conflicts"] == []


def test_an_environment_plugin_that_overrides_the_profile_is_named():
    text = output("ENV/Plugin: Using GCP env plugin (v1)", "NCCL_BUFFSIZE set by environment to 8388608.",
                  "NCCL_NET set by environment to gIB.")
    got = used("a3-ultra", text, {"NCCL_BUFFSIZE": "4194304"})
    assert got["plugin"] == "GCP env plugin"
    assert got["effective"]["NCCL_NET"]["source"] == "environment plugin"
    assert got["conflicts"] == [{"severity": "warn", "subject": "NCCL_BUFFSIZE",
                                 "cause": "the profile sets 4194304, NCCL used 8388608: the environment plugin "
                                          "GCP env plugin won"}]


def test_a_forced_network_without_its_device_fails():
    text = output("NCCL_NET set by environment to IB.", "NET/IB : No device found.", "Using network Socket")
    got = used("a3-ultra", text, {"NCCL_NET": "IB"})
    assert [(c["severity"], c["subject"]) for c in got["conflicts"]] == [("fail", "NCCL_NET")]
    assert "NCCL_NET=IB forces a network NCCL found no device of" in got["conflicts"][0]["cause"]
    # not forced: NCCL looking for IB and falling back is its own choice
    assert used("a3-ultra", output("NET/IB : No device found."), {})["conflicts"] == []


def test_a_setting_the_family_table_knows_to_break_the_family_fails():
    text = output("NCCL_CUMEM_ENABLE set by environment to 0.")
    got = used("a4x", text, {})
    assert [(c["severity"], c["subject"]) for c in got["conflicts"]] == [("fail", "NCCL_CUMEM_ENABLE")]
    assert "multi-node NVLink" in got["conflicts"][0]["cause"] and "[VLLM PR 16992]" in got["conflicts"][0]["cause"]
    # the same value breaks nothing on a family without an NVLink domain
    assert used("a3-mega", text, {})["conflicts"] == []


def test_ranks_that_read_different_values_are_named_once_and_several_runs_merge():
    text = (output("NCCL_SOCKET_IFNAME set by environment to eth1.")
            + "a3m-1:77:77 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth2.\n")
    one = used("a3-mega", text, {"NCCL_SOCKET_IFNAME": "eth1"})
    assert [c["cause"] for c in one["conflicts"]] == ["ranks of one run read different values"]
    both = nccl_env_used.merged([one, one, None])
    assert len(both["conflicts"]) == 1 and both["effective"] == one["effective"]
    assert nccl_env_used.merged([None]) is None


def test_a_credential_in_a_value_nccl_echoes_is_masked_in_the_effective_env_and_the_conflicts():
    """NCCL_ names are tuning, never secret; their values can still carry a credential the job put there."""
    import json
    text = output("NCCL_X_URL set by environment to https://u:pw1@h/x.", "NCCL_Y set by environment to ya29.used.",
                  "ENV/Plugin: Using plugin token=pluginsecret (v1)")
    got = used("a3-mega", text, {"NCCL_X_URL": "https://u:pw2@h/x", "NCCL_Y": "ya29.given\nWARN n1 forged"})
    flat = json.dumps(got)
    assert "pw1" not in flat and "pw2" not in flat and "ya29" not in flat and "pluginsecret" not in flat
    assert got["effective"]["NCCL_X_URL"]["value"] == "https://u:********@h/x"
    assert got["effective"]["NCCL_Y"] == {"value": "********", "passed": "********\\nWARN n1 forged",
                                          "source": "environment plugin"}
    causes = dict((c["subject"], c["cause"]) for c in got["conflicts"])
    # the values differ where masked: the cause says so rather than showing two equal values
    assert "differ only where masked" in causes["NCCL_X_URL"]
    assert all("\n" not in c["cause"] for c in got["conflicts"])


def test_a_newline_in_a_passed_value_never_forges_a_line_of_a_cause():
    got = used("a3-mega", output("NCCL_BUFFSIZE set by environment to 8388608."),
               {"NCCL_BUFFSIZE": "4194304\nFAIL n1 nic eth1: forged"})
    assert got["conflicts"][0]["cause"].startswith("the profile sets 4194304\\nFAIL n1 nic eth1: forged, NCCL used")
    assert got["effective"]["NCCL_BUFFSIZE"]["passed"] == "4194304\\nFAIL n1 nic eth1: forged"
