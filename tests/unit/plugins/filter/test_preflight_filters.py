# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpudirect.gcp.plugins.filter.preflight import FilterModule

MISMATCHES = FilterModule().filters()["_cluster_mismatches"]
NODES = ["n0", "n1", "n2"]


def test_agreeing_nodes_give_no_line():
    assert MISMATCHES(NODES, {"zone (gce_zone)": ["z", "z", "z"]}) == []


def test_the_odd_node_is_named_against_the_majority():
    assert MISMATCHES(NODES, {"zone (gce_zone)": ["a", "a", "b"]}) == [
        "zone (gce_zone) differs across nodes: 2 of 3 have a; n2 has b"]


def test_a_tie_names_every_node():
    assert MISMATCHES(["n0", "n1"], {"family": ["a3-mega", "a4"]}) == [
        "family differs across nodes with no majority: n0 has a3-mega; n1 has a4"]


def test_versions_missing_on_some_nodes_count_as_not_found_and_unknown_everywhere_is_skipped():
    versions = [{"driver": "550.1", "cuda": None}, {"driver": None, "cuda": None}, {"driver": "550.1", "cuda": None}]
    assert MISMATCHES(NODES, versions=versions, components=["driver", "cuda"]) == [
        "driver version differs across nodes: 2 of 3 have 550.1; n1 has not found"]


def test_a_component_this_run_installs_is_not_a_mismatch_where_missing_but_two_versions_still_are():
    """A re-run after n2 failed before the plugin and RxDM phases: it installs them there."""
    from ansible_collections.gpudirect.gcp.plugins.filter.preflight import cluster_installs
    versions = [{"driver": "550.1", "plugin": "v1.0.17", "rxdm": "r1"}, {"driver": "550.1", "plugin": "v1.0.17",
                                                                         "rxdm": "r1"},
                {"driver": "550.1", "plugin": None, "rxdm": ""}]
    components = ["driver", "plugin", "rxdm"]
    assert MISMATCHES(NODES, versions=versions, components=components, installs=["plugin", "rxdm"]) == []
    assert cluster_installs(NODES, versions, ["plugin", "rxdm"]) == [
        "plugin not found on 1 of 3 node(s) (n2): this run installs it there (the others have v1.0.17)",
        "rxdm not found on 1 of 3 node(s) (n2): this run installs it there (the others have r1)"]
    # a run that installs nothing (fabric.yml) still refuses the missing component
    assert MISMATCHES(NODES, versions=versions, components=components) == [
        "plugin version differs across nodes: 2 of 3 have v1.0.17; n2 has not found",
        "rxdm version differs across nodes: 2 of 3 have r1; n2 has not found"]
    # a component the run does not install (the driver) is still compared where missing
    versions[2]["driver"] = None
    assert MISMATCHES(NODES, versions=versions, components=components, installs=["plugin", "rxdm"]) == [
        "driver version differs across nodes: 2 of 3 have 550.1; n2 has not found"]
    # two installed versions differ, whatever is missing elsewhere
    versions[1]["plugin"] = "v1.0.16"
    assert MISMATCHES(NODES, versions=versions, components=["plugin"], installs=["plugin"]) == [
        "plugin version differs across nodes with no majority: n0 has v1.0.17; n1 has v1.0.16"]
    # nothing to name where every node has it, or none does
    assert cluster_installs(NODES, [{"nccl": "2.21"}] * 3, ["nccl"]) == []
    assert cluster_installs(NODES, [{"nccl": None}] * 3, ["nccl"]) == []


def test_columns_keep_their_order_before_the_versions():
    lines = MISMATCHES(["n0", "n1"], {"b": [1, 2], "a": [1, 2]}, versions=[{"nccl": "x"}, {"nccl": "y"}],
                       components=["nccl"])
    assert [line.split()[0] for line in lines] == ["b", "a", "nccl"]


def test_bad_input_is_one_line_filter_error():
    with pytest.raises(AnsibleFilterError, match="zone has 2 value"):
        MISMATCHES(NODES, {"zone": ["a", "b"]})
    with pytest.raises(AnsibleFilterError, match="versions must hold one mapping per node"):
        MISMATCHES(NODES, versions=[{}], components=["driver"])


def test_prerequisite_problems_are_grouped_one_line_each():
    from ansible_collections.gpudirect.gcp.plugins.filter.preflight import prerequisite_problems
    driver = {"line": "NVIDIA driver: not loaded; install it"}
    engine = {"line": "container engine: none; install docker"}
    nodes = ["n%d" % i for i in range(10)]
    problems = [[driver] for _node in nodes]
    problems[3] = [driver, engine]
    assert prerequisite_problems(nodes, problems) == [
        "NVIDIA driver: not loaded; install it (10 of 10 node(s): n0, n1, n2, n3, n4, n5, n6, n7 and 2 more)",
        "container engine: none; install docker (1 of 10 node(s): n3)"]
    assert prerequisite_problems(["a"], [[]]) == []
    with pytest.raises(AnsibleFilterError, match="1 problem list"):
        prerequisite_problems(["a", "b"], [[]])


TARGETS = FilterModule().filters()["_targets_problem"]


def test_an_inventory_with_nodes_gives_no_line():
    assert TARGETS(["n0", "n1"], "gpu_nodes", sources=["/c/mine.gce_gpu.yml"]) == ""


def test_an_empty_inventory_names_its_sources_the_pattern_and_the_way_out():
    line = TARGETS([], "gpu_nodes:&zone_a", sources=["/c/mine.gce_gpu.yml", "/c/extra.yml"])
    assert line.startswith("the inventory (/c/mine.gce_gpu.yml, /c/extra.yml) matched 0 node(s) in "
                           "'gpu_nodes:&zone_a'; check the inventory's")
    assert "gpudirect_allow_empty=true" in line and "\n" not in line


def test_an_empty_run_on_purpose_passes_but_a_short_inventory_never_does():
    assert TARGETS([], "gpu_nodes", allow_empty=True) == ""
    short = TARGETS(["n%d" % i for i in range(10)], "gpu_nodes", expected="64", allow_empty=True)
    assert "matched 10 node(s) in 'gpu_nodes', fewer than the 64 of preflight_expected_nodes: n0, n1" in short
    assert "and 2 more" in short


def test_a_limited_run_is_not_counted_but_one_limited_to_no_node_is_refused():
    inventory = ["n0", "n1", "n2"]
    # a repair run on one node of a cluster of 64, two of which the inventory lacks: nothing to say here
    assert TARGETS(inventory, "gpu_nodes", expected=64, in_run=["n0"], limit="n0") == ""
    line = TARGETS(inventory, "gpu_nodes", sources=["/c/mine.yml"], expected=64, in_run=[], limit="bastion")
    assert line.startswith("the inventory (/c/mine.yml) matched 0 node(s) in 'gpu_nodes' within --limit bastion "
                           "(3 without it); check --limit"), line
    assert "gpudirect_allow_empty=true" in line and "\n" not in line
    assert TARGETS(inventory, "gpu_nodes", in_run=[], limit="bastion", allow_empty=True) == ""
    # a limit that keeps every node limits nothing: the inventory is counted as ever
    assert "fewer than the 64" in TARGETS(inventory, "gpu_nodes", expected=64, in_run=inventory, limit="gpu_nodes")


def test_enough_nodes_and_a_bad_expected_count():
    assert TARGETS(["n0", "n1"], "gpu_nodes", expected=2) == ""
    with pytest.raises(AnsibleFilterError, match="preflight_expected_nodes must be a whole number"):
        TARGETS(["n0"], "gpu_nodes", expected="many")


QUALIFICATION = FilterModule().filters()["_version_qualification"]


def test_nodes_outside_their_pairs_qualification_are_one_line_per_fact():
    old = {"driver": "580.65.06", "plugin": "v1.0.17"}
    good = {"driver": "595.71.05", "plugin": "v1.0.17"}
    lines = QUALIFICATION(NODES, ["a3-mega"] * 3, [old, good, old])
    assert len(lines) == 1 and lines[0].startswith("driver: driver 580.65.06 is older than driver 595.71.05")
    assert lines[0].endswith("(2 of 3 node(s): n0, n2)")
    # a node without a plugin yet is judged against the release the run installs
    assert QUALIFICATION(["n0"], ["a3-mega"], [{"driver": "580.65.06"}], plugin_version="v1.0.15") == []
    with pytest.raises(AnsibleFilterError, match="3 node"):
        QUALIFICATION(NODES, ["a3-mega"], [old])


LEFT_OUT = FilterModule().filters()["_targets_left_out"]


def test_gpu_vms_of_no_gpudirect_family_are_one_line_a_class():
    assert LEFT_OUT({"all": ["a"], "gpu_nodes": ["a"]}) == []
    [line] = LEFT_OUT({"class_g4": ["g4-b", "g4-a"], "gpu_other": ["g4-a", "g4-b"]})
    assert line.startswith("2 g4 VM(s) left out (g4-a, g4-b): RTX PRO 6000 VMs run NCCL within one VM only")
    assert line.endswith("SYS on g4-standard-384) [CT examples/ml-slurm-g4.yaml]")
    with pytest.raises(AnsibleFilterError, match="groups mapping"):
        LEFT_OUT(["a"])


def test_dropped_nodes_name_the_last_phase_each_finished():
    from ansible_collections.gpudirect.gcp.plugins.filter.preflight import dropped_nodes
    done = {"preflight": ["n0", "n1", "n2"], "gpu_host": ["n0", "n1", "n2"], "gpu_network": ["n0", "n1"]}
    assert dropped_nodes(["n2", "n3"], ["n0", "n1", "n2", "n3"], done) == (
        "2 of 4 node(s) dropped out (failed or unreachable; see the recap): n2 after phase gpu_host, "
        "n3 after phase none")
    assert dropped_nodes([], ["n0"], done) == "all 1 node(s) finished every phase that ran"
    assert dropped_nodes([], [], {}) == "no node in this run (gpudirect_allow_empty)"
